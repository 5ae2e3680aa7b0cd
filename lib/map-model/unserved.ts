import type { KubeObject } from '../pipeline/model.ts';
import type { ObjectClaims } from './claim-types.ts';
import type { HostOwnership } from './host-ownership.ts';

/** No object unserved: most builds' answer, one set for all. */
export const NOTHING_UNSERVED: ReadonlySet<KubeObject> = new Set();

/**
 * The objects the aggregate serves nothing of, by the keys it holds them
 * under: those a problem leaves out whole, and those refused the host of
 * every route (another namespace owns it) without a default backend. An
 * object refused some hosts only is served: the status side streams say it
 * is, and the refusals are its problems.
 */
export function unservedObjects(withProblems: ReadonlyMap<ObjectClaims, KubeObject>, refused: Iterable<ObjectClaims>, ownership: HostOwnership): ReadonlySet<KubeObject> {
  const unserved = new Set<KubeObject>();
  for (const [read, key] of withProblems) if (read.served === undefined) unserved.add(key);
  for (const read of refused) {
    const { routes, defaultBackend } = read.served!;
    // A route's claim names its object by the key the aggregate holds it under.
    if (routes.length > 0 && defaultBackend === undefined && routes.every((claim) => !ownership.admitted(read, claim.host))) unserved.add(routes[0]!.ingress);
  }
  return unserved.size === 0 ? NOTHING_UNSERVED : unserved;
}
