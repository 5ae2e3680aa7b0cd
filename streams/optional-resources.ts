import { asyncScheduler, catchError, concatMap, defer, filter, forkJoin, from, map, merge, mergeMap, of, take, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
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
 * Resource events for a configuration whose optional resources (a CRD's
 * kinds) may not be served: each is asked of discovery first; one not
 * served is not watched, its store is empty and synced at once, and the
 * log says so once, where a watch would fail again and again. When
 * discovery cannot answer, the resource is watched anyway: the informer's
 * own retries then say what is wrong. With a recheck, discovery is asked
 * again about each unserved resource until it serves it, which is then
 * watched; a recheck that fails counts as not served yet (the next one
 * asks again), so an API server away for a while adds no warning per try.
 */
export function optionalResourceEvents(options: OptionalResourcesOptions): Observable<ResourceEvent> {
  const { resources, served, events, log, recheck } = options;
  const optional = resources.filter((resource) => resource.optional === true);
  if (optional.length === 0) return events(resources);
  return defer(() =>
    forkJoin(
      optional.map((resource) =>
        served(resource).pipe(
          catchError((error: unknown) => {
            log('warn', `watchedResources.${resource.name}: discovery of ${resource.apiVersion} ${resource.resource} failed (${errorMessage(error)}); watching it anyway`);
            return of(true);
          }),
          map((isServed) => ({ resource, isServed })),
        ),
      ),
    ),
  ).pipe(
    mergeMap((answers) => {
      const unserved = new Set(answers.filter((answer) => !answer.isServed).map((answer) => answer.resource));
      for (const resource of unserved) {
        log('info', `watchedResources.${resource.name}: the API server does not serve ${resource.apiVersion} ${resource.resource} (is its CRD installed?); not watched, empty`);
      }
      const synced = [...unserved].map((resource): ResourceEvent => ({ type: 'synced', kind: resource.name }));
      const late = recheck ? [...unserved].map((resource) => servedLater(resource, options, recheck)) : [];
      return merge(from(synced), events(resources.filter((resource) => !unserved.has(resource))), ...late);
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
    concatMap(() => served(resource).pipe(catchError(() => of(false)))),
    filter(Boolean),
    take(1),
    tap(() => log('info', `watchedResources.${resource.name}: the API server serves ${resource.apiVersion} ${resource.resource} now; watching it`)),
    mergeMap(() => events([resource])),
  );
}
