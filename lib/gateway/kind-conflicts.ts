import { aheadBy, compareStanding, type Standing } from '../routing/precedence.ts';
import type { AttachedListener } from './attachment.ts';
import { intersectHostname } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';

/**
 * HTTPRoutes and GRPCRoutes on one listener (apis/v1/grpcroute_types.go,
 * GRPCRouteSpec.Hostnames): where a route of one kind and a route of the
 * other share a hostname there, exactly one is accepted, the oldest, then
 * the first by "{namespace}/{name}" (compareStanding); the other is not
 * accepted on that listener. A route is refused wherever an older route of
 * the other kind shares a hostname with it, whether or not that one is
 * refused elsewhere: what a route is served as never depends on a chain of
 * other routes.
 */

export interface AttachedRoute {
  readonly kind: string;
  readonly standing: Standing;
  /** As messages name it. */
  readonly label: string;
  readonly listeners: readonly AttachedListener[];
}

/** Per hostname ('*': any) of one kind on one listener, the oldest route serving it. */
type Oldest = Map<string, AttachedRoute>;

/** Whether hostnames `a` and `b` (names, `*.` wildcards or '*') have a name in common. */
function overlap(a: string, b: string): boolean {
  return a === '*' || b === '*' || intersectHostname(a, b) !== undefined;
}

/** The oldest route of `others` with a hostname overlapping `hostname`: the same name, any, a wildcard covering it, or a name it covers. */
function oldestOverlapping(hostname: string, others: Oldest): AttachedRoute | undefined {
  let found: AttachedRoute | undefined;
  const consider = (candidate: AttachedRoute | undefined) => {
    if (candidate !== undefined && (found === undefined || compareStanding(candidate.standing, found.standing) < 0)) found = candidate;
  };
  if (hostname === '*' || hostname.startsWith('*.')) {
    for (const [other, route] of others) if (overlap(hostname, other)) consider(route);
    return found;
  }
  consider(others.get(hostname));
  consider(others.get('*'));
  for (let dot = hostname.indexOf('.'); dot >= 0; dot = hostname.indexOf('.', dot + 1)) consider(others.get(`*${hostname.slice(dot)}`));
  return found;
}

/** For each route refused on some listener, those listeners with why; routes refused nowhere are not in the map. */
export function kindConflicts(routes: readonly AttachedRoute[]): Map<AttachedRoute, Map<ListenerState, string>> {
  const byListener = new Map<ListenerState, Map<string, Oldest>>();
  for (const route of routes) {
    for (const { state, hostnames } of route.listeners) {
      const kinds = byListener.get(state) ?? new Map<string, Oldest>();
      byListener.set(state, kinds);
      const oldest = kinds.get(route.kind) ?? new Map<string, AttachedRoute>();
      kinds.set(route.kind, oldest);
      for (const hostname of hostnames) {
        const before = oldest.get(hostname);
        if (before === undefined || compareStanding(route.standing, before.standing) < 0) oldest.set(hostname, route);
      }
    }
  }
  const refused = new Map<AttachedRoute, Map<ListenerState, string>>();
  for (const route of routes) {
    for (const { state, hostnames } of route.listeners) {
      const kinds = byListener.get(state)!;
      if (kinds.size < 2) continue;
      for (const [kind, others] of kinds) {
        if (kind === route.kind) continue;
        const winner = hostnames
          .map((hostname) => ({ hostname, by: oldestOverlapping(hostname, others) }))
          .find(({ by }) => by !== undefined && compareStanding(by.standing, route.standing) < 0);
        if (winner === undefined) continue;
        const listeners = refused.get(route) ?? new Map<ListenerState, string>();
        refused.set(route, listeners);
        const shared = winner.hostname === '*' ? 'any hostname' : `hostname ${winner.hostname}`;
        listeners.set(
          state,
          `listener ${state.listener.name} serves ${aheadBy(winner.by!.standing, route.standing, winner.by!.label)} for ${shared}: of an HTTPRoute and a GRPCRoute sharing a hostname on a listener, one is accepted`,
        );
        break;
      }
    }
  }
  return refused;
}
