import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { TranslatedObject } from '../routing/translated.ts';
import { claimsOf } from './claims.ts';
import { type ObjectClaims } from './claim-types.ts';

/**
 * The claims of the translated HTTPRoutes, kept from one build to the next
 * (see build-model.ts): a translation is made into claims once, and a build
 * after a few routes changed in place looks at those alone.
 */
export class RouteReadCache {
  /** Per translation, what it was made into. */
  readonly byTranslation = new WeakMap<TranslatedObject, RouteRead>();
  /** Each read, by the key the aggregate knows the route by. */
  readonly byKey = new WeakMap<KubeObject, ObjectClaims>();
  /** The translations of the last build, in order: their reads, and the wildcard hosts they claim. */
  last: RoutesRead | undefined;
}

/** One translated route as claims, with its warnings: the translation's, then those of routes no map line can serve. */
export interface RouteRead {
  readonly key: KubeObject;
  readonly read: ObjectClaims;
  readonly warnings: readonly Problem[];
  /** True when a route of it chooses between backendRefs with filters of their own (backend-choice.ts). */
  readonly choices: boolean;
}

export interface RoutesRead {
  readonly translated: readonly TranslatedObject[];
  readonly reads: readonly RouteRead[];
  readonly wildcards: ReadonlySet<string>;
}

/** Past this many routes read again, one sync of every route costs about what updating them does. */
const REPLACED_AT_MOST = 64;

/**
 * Routes read again where they stand (as many as before, a few keys new):
 * the keys they had and what each is now, so the aggregate updates those
 * alone. Undefined where routes came, went or moved, or many were read
 * again: then every route is synced.
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

/** Whether a route claims a wildcard host. */
const claimsWildcard = (route: RouteRead) => route.read.served?.hosts.some((host) => host.wildcard) === true;

/**
 * Each translated route's read, and the wildcard hosts they claim. A
 * translation in the same place as the last build's is not looked at again.
 */
export function readRoutes(translated: readonly TranslatedObject[], cache: RouteReadCache): RoutesRead {
  const previous = cache.last;
  let wildcardsMoved = previous === undefined || previous.translated.length !== translated.length;
  const reads = translated.map((route, i) => {
    if (previous?.translated[i] === route) return previous.reads[i]!;
    const read = readOnce(route, cache);
    // Only the routes in changed places can change the wildcard hosts claimed.
    wildcardsMoved ||= claimsWildcard(read) || claimsWildcard(previous!.reads[i]!);
    return read;
  });
  let wildcards = previous?.wildcards;
  if (wildcardsMoved || wildcards === undefined) {
    const found = new Set<string>();
    for (const route of reads) for (const host of route.read.served?.hosts ?? []) if (host.wildcard) found.add(host.host);
    wildcards = found;
  }
  cache.last = { translated, reads, wildcards };
  return cache.last;
}

function readOnce(translated: TranslatedObject, cache: RouteReadCache): RouteRead {
  let read = cache.byTranslation.get(translated);
  if (read !== undefined) return read;
  const claims = claimsOf(translated);
  const warnings = claims.warnings.length === 0 ? translated.warnings : translated.warnings.length === 0 ? claims.warnings : [...translated.warnings, ...claims.warnings];
  read = { key: translated.key, read: claims.read, warnings, choices: claims.read.served?.routes.some((claim) => claim.backend.choice !== undefined) === true };
  cache.byTranslation.set(translated, read);
  cache.byKey.set(translated.key, claims.read);
  return read;
}
