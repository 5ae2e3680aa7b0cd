import type { KubeObject } from '../pipeline/model.ts';
import type { RouteRecord } from '../routing/route.ts';
import { readHttpRoute, recordsContent, type HttpRouteRead } from './http-route-reads.ts';
import type { IngressRead } from './ingress-reader.ts';
import type { RoutedObject } from './types.ts';

/**
 * The HTTPRoutes' reads kept from one view model build to the next (see
 * view-model.ts): a route is read again only when its records changed, and
 * a build after a few routes changed in place looks at those alone.
 */
export class HttpRouteReadCache {
  /** Per HTTPRoute, its read as of the last build that had it, and the records it was last given: kept while its records are the same. */
  readonly byObject = new WeakMap<KubeObject, { readonly records: readonly RouteRecord[]; readonly read: HttpRouteRead }>();
  /** Each read, by the key the aggregate knows the route by. */
  readonly byKey = new WeakMap<KubeObject, IngressRead>();
  /** The HTTPRoutes of the last build, by position: their reads, and the wildcard hosts they claim. */
  last: RoutesRead | undefined;
}

/** Past this many HTTPRoutes read again, one sync of every route costs about what updating them does. */
const REPLACED_AT_MOST = 64;

/**
 * HTTPRoutes read again where they stand (as many as before, a few keys
 * new): the keys they had and what each is now, so the aggregate updates
 * those alone. Undefined where routes came, went or moved, or many were
 * read again: then every route is synced.
 */
export function replacedRoutes(before: readonly KubeObject[], after: readonly KubeObject[]): { readonly before: KubeObject[]; readonly now: Map<KubeObject, KubeObject> } | undefined {
  if (before.length !== after.length) return undefined;
  const replaced = { before: [] as KubeObject[], now: new Map<KubeObject, KubeObject>() };
  for (let i = 0; i < after.length; i++) {
    const [was, is] = [before[i]!, after[i]!];
    if (was === is) continue;
    if (replaced.before.length === REPLACED_AT_MOST || was.metadata.namespace !== is.metadata.namespace || was.metadata.name !== is.metadata.name) return undefined;
    replaced.before.push(was);
    replaced.now.set(was, is);
  }
  return replaced;
}

export interface RoutesRead {
  readonly routed: readonly RoutedObject[];
  readonly reads: readonly HttpRouteRead[];
  readonly wildcards: ReadonlySet<string>;
}

/** Whether a route claims a wildcard host. */
const claimsWildcard = (route: HttpRouteRead) => route.read.served!.hosts.some((host) => host.wildcard);

/**
 * Each HTTPRoute's read: the last one while its records are the same, so
 * the aggregate keeps it as it is; and the wildcard hosts they claim. A
 * route in the same place as the last build's, as the same routed object
 * (sources keep it while its records are the same), is not looked at again.
 */
export function readHttpRoutes(routes: readonly RoutedObject[], cache: HttpRouteReadCache): RoutesRead {
  const previous = cache.last;
  let wildcardsMoved = previous === undefined || previous.routed.length !== routes.length;
  const reads = routes.map((routed, i) => {
    if (previous?.routed[i] === routed) return previous.reads[i]!;
    const read = readHttpRouteOnce(routed, cache);
    // Only the routes in changed places can change the wildcard hosts claimed.
    wildcardsMoved ||= claimsWildcard(read) || claimsWildcard(previous!.reads[i]!);
    return read;
  });
  let wildcards = previous?.wildcards;
  if (wildcardsMoved || wildcards === undefined) {
    const found = new Set<string>();
    for (const route of reads) for (const host of route.read.served!.hosts) if (host.wildcard) found.add(host.host);
    wildcards = found;
  }
  cache.last = { routed: routes, reads, wildcards };
  return cache.last;
}

function readHttpRouteOnce(routed: RoutedObject, cache: HttpRouteReadCache): HttpRouteRead {
  const before = cache.byObject.get(routed.object);
  // The same records (sources that keep them, lib/render/ingress-sources.ts) need no comparing.
  if (before?.records === routed.records) return before.read;
  const content = recordsContent(routed.records);
  if (before?.read.content === content) {
    cache.byObject.set(routed.object, { records: routed.records, read: before.read });
    return before.read;
  }
  const read = readHttpRoute(routed, content);
  cache.byObject.set(routed.object, { records: routed.records, read });
  cache.byKey.set(read.key, read.read);
  return read;
}
