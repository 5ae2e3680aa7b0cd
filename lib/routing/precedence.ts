import { compareCodeUnits } from '../compare.ts';
import { CATCH_ALL_HOST, type PathMatch, type RouteHost, type RouteRecord } from './route.ts';

/**
 * The order in which routes are tried: the first route (in this order) whose
 * host, path and extra matches all hold serves a request. It is the order
 * Gateway API v1 prescribes for HTTPRoute (HTTPRouteSpec.Hostnames and
 * HTTPRouteRule.Matches in apis/v1/httproute_types.go), criterion by
 * criterion, each only breaking the ties of those before it:
 *
 * 1. the host: most characters in a matching non-wildcard hostname, then
 *    most characters in a matching hostname (an exact name before a
 *    wildcard, a longer wildcard before a shorter one, both before any host);
 * 2. an Exact path match;
 * 3. a prefix path match with the largest number of characters;
 * 4. a method match;
 * 5. the largest number of header matches;
 * 6. the largest number of query parameter matches;
 * 7. the oldest route by creation timestamp;
 * 8. the route first in alphabetical order of "{namespace}/{name}";
 * 9. within one route, the first rule, then the first match, in list order;
 *    past that, records tie only where they cannot match the same request,
 *    and host key and path settle them, so the order never depends on the input's.
 *
 * RegularExpression paths rank as the specification leaves to
 * implementations: after Exact and before every prefix (a regular
 * expression is written to catch specific requests a prefix would
 * swallow), longer expressions first.
 */
export function comparePrecedence(a: RouteRecord, b: RouteRecord): number {
  return (
    compareHosts(a.host, b.host) ||
    comparePaths(a.path, b.path) ||
    Number(b.method !== undefined) - Number(a.method !== undefined) ||
    b.headers.length - a.headers.length ||
    b.query.length - a.query.length ||
    compareAge(a.origin.age, b.origin.age) ||
    compareCodeUnits(`${a.origin.namespace}/${a.origin.name}`, `${b.origin.namespace}/${b.origin.name}`) ||
    a.origin.rule - b.origin.rule ||
    a.origin.match - b.origin.match ||
    // Records of one match differ only by host or path kind: a stable order between them keeps the output independent of the input's.
    compareCodeUnits(a.host.key, b.host.key) ||
    compareCodeUnits(`${a.path.kind}:${a.path.value}`, `${b.path.kind}:${b.path.value}`)
  );
}

/** Routes sorted in precedence order (a new array). */
export function inPrecedenceOrder(routes: readonly RouteRecord[]): RouteRecord[] {
  return routes.toSorted(comparePrecedence);
}

function compareHosts(a: RouteHost, b: RouteHost): number {
  const exact = (host: RouteHost) => (host.wildcard === 'none' && host.key !== CATCH_ALL_HOST ? host.key.length : 0);
  const any = (host: RouteHost) => (host.key === CATCH_ALL_HOST ? 0 : host.key.length);
  return exact(b) - exact(a) || any(b) - any(a);
}

const PATH_RANK: Readonly<Record<PathMatch['kind'], number>> = { exact: 0, regex: 1, prefix: 2 };

function comparePaths(a: PathMatch, b: PathMatch): number {
  return PATH_RANK[a.kind] - PATH_RANK[b.kind] || (a.kind === 'exact' ? 0 : b.value.length - a.value.length);
}

/** Older first; a missing timestamp (+Infinity) counts as newest. */
function compareAge(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
