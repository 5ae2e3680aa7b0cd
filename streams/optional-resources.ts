import { asyncScheduler, catchError, concat, concatMap, defer, filter, first, forkJoin, from, map, merge, mergeMap, of, take, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
import type { WatchedResource } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';

export interface OptionalResourcesOptions {
  readonly resources: readonly WatchedResource[];
  /** Whether the API server serves the resource (discovery); an error means it could not tell. */
  readonly served: (resource: WatchedResource) => Observable<boolean>;
  /** The resource events of the resources to watch. */
  readonly events: (resources: readonly WatchedResource[]) => Observable<ResourceEvent>;
  /** Said once per resource left unwatched (info: a cluster without the CRD is normal), or watched without knowing (warn). */
  readonly log: (level: 'info' | 'warn', message: string) => void;
  /**
   * How often discovery is asked again about a resource it did not serve:
   * a CRD installed after the controller started is watched from then on,
   * without a restart. None: asked once.
   */
  readonly recheck?: { readonly everyMs: number; readonly scheduler?: SchedulerLike };
}

/**
 * The resource at the first of its versions (apiVersion, then each of
 * fallbackApiVersions) that discovery says is served, or undefined when
 * none is. An error of discovery for one version is the whole answer's.
 */
function servedVersion(resource: WatchedResource, served: OptionalResourcesOptions['served']): Observable<WatchedResource | undefined> {
  const versions = [resource.apiVersion, ...(resource.fallbackApiVersions ?? [])];
  const atVersion = (apiVersion: string): WatchedResource => (apiVersion === resource.apiVersion ? resource : { ...resource, apiVersion });
  return concat(...versions.map((apiVersion) => defer(() => served(atVersion(apiVersion)).pipe(map((isServed) => (isServed ? atVersion(apiVersion) : undefined)))))).pipe(
    first((found) => found !== undefined, undefined),
  );
}

/**
 * Resource events for a configuration whose optional resources (a CRD's
 * kinds) may not be served: each is asked of discovery first; one not
 * served is not watched, its store is empty and synced at once, and the
 * log says so once, where a watch would fail again and again. When
 * discovery cannot answer, the resource is watched anyway: the informer's
 * own retries then say what is wrong. With a recheck, discovery is asked
 * again about each unserved resource until it serves it, which is then
 * watched; a recheck that fails counts as not served yet (the next one
 * asks again), so an API server away for a while adds no warning per try.
 * A resource with fallbackApiVersions is watched at the first of its
 * versions discovery serves (a CRD that moved a kind to a new version
 * serves the old one only in older releases).
 */
export function optionalResourceEvents(options: OptionalResourcesOptions): Observable<ResourceEvent> {
  const { resources, served, events, log, recheck } = options;
  const optional = resources.filter((resource) => resource.optional === true);
  if (optional.length === 0) return events(resources);
  return defer(() =>
    forkJoin(
      optional.map((resource) =>
        servedVersion(resource, served).pipe(
          map((version) => ({ resource, version })),
          catchError((error: unknown) => {
            log('warn', `watchedResources.${resource.name}: discovery of ${resource.apiVersion} ${resource.resource} failed (${errorMessage(error)}); watching it anyway`);
            return of({ resource, version: resource });
          }),
        ),
      ),
    ),
  ).pipe(
    mergeMap((answers) => {
      const unserved = new Set(answers.filter((answer) => answer.version === undefined).map((answer) => answer.resource));
      const versions = new Map(answers.map((answer) => [answer.resource, answer.version]));
      for (const resource of unserved) {
        log('info', `watchedResources.${resource.name}: the API server does not serve ${versionsOf(resource)} ${resource.resource} (is its CRD installed?); not watched, empty`);
      }
      const synced = [...unserved].map((resource): ResourceEvent => ({ type: 'synced', kind: resource.name }));
      const late = recheck ? [...unserved].map((resource) => servedLater(resource, options, recheck)) : [];
      const watched = resources.filter((resource) => !unserved.has(resource)).map((resource) => versions.get(resource) ?? resource);
      return merge(from(synced), events(watched), ...late);
    }),
  );
}

/** The events of an unserved resource from the first recheck that finds it served; none before. */
function servedLater(
  resource: WatchedResource,
  { served, events, log }: OptionalResourcesOptions,
  { everyMs, scheduler = asyncScheduler }: NonNullable<OptionalResourcesOptions['recheck']>,
): Observable<ResourceEvent> {
  return timer(everyMs, everyMs, scheduler).pipe(
    concatMap(() => servedVersion(resource, served).pipe(catchError(() => of(undefined)))),
    filter((version): version is WatchedResource => version !== undefined),
    take(1),
    tap((version) => log('info', `watchedResources.${resource.name}: the API server serves ${version.apiVersion} ${resource.resource} now; watching it`)),
    mergeMap((version) => events([version])),
  );
}

/** The versions a resource may be served at, for messages: "a/v1" or "a/v1 (nor a/v1beta1)". */
function versionsOf(resource: WatchedResource): string {
  const fallbacks = resource.fallbackApiVersions ?? [];
  return fallbacks.length === 0 ? resource.apiVersion : `${resource.apiVersion} (nor ${fallbacks.join(', ')})`;
}
