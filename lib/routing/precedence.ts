import { compareCodeUnits } from '../compare.ts';
import { CATCH_ALL_HOST, type PathMatch, type RouteHost, type RouteRecord } from './route.ts';
import type { L4Route } from './l4-route.ts';

/**
 * Route precedence, for every API, in this one file: which route serves a
 * request several could serve, and which object keeps what several ask for
 * (a host, a Service's settings, a Secret's certificate).
 *
 * The order is the one Gateway API v1 prescribes for HTTPRoute
 * (HTTPRouteSpec.Hostnames and HTTPRouteRule.Matches in
 * apis/v1/httproute_types.go), criterion by criterion, each only breaking
 * the ties of those before it:
 *
 * 1. the host: most characters in a matching non-wildcard hostname, then
 *    most characters in a matching hostname (an exact name before a
 *    wildcard, a longer wildcard before a shorter one, both before any host);
 * 2. an Exact path match;
 * 3. a prefix path match with the largest number of characters;
 * 4. a method match;
 * 5. the largest number of header matches;
 * 6. the largest number of query parameter matches;
 * 7. the oldest object by creation timestamp (a missing one counts as newest);
 * 8. the object first in alphabetical order of "{namespace}/{name}", one
 *    string: "a-b/r" before "a/r", as '-' sorts before '/';
 * 9. within one object, the first rule, then the first match, in list order;
 *    past that, routes tie only where they cannot match the same request,
 *    and host key and path settle them, so the order never depends on the input's.
 *
 * Where Ingress differs, and what the specification leaves open:
 * - Ingress paths: Exact before Prefix, the longest Prefix first, as the
 *   Kubernetes Ingress API ranks them (criteria 2 and 3); an
 *   ImplementationSpecific path is a Prefix. An Ingress has no method,
 *   header or query matches, and its paths are its rules, in order
 *   (criterion 9: `rule` is the path's place among the Ingress's paths).
 * - Conflicts between Ingresses, which the Ingress API leaves open, are
 *   settled by criteria 7 and 8, as between HTTPRoutes.
 * - A host is served by one namespace's Ingresses, or by HTTPRoutes: the
 *   oldest object asking for it decides (criteria 7 and 8, `compareStanding`),
 *   before any of the criteria above is asked.
 * - RegularExpression paths (HTTPRoute, and Ingress paths under use-regex)
 *   rank as the specification leaves to implementations: after Exact and
 *   before every prefix (a regular expression is written to catch specific
 *   requests a prefix would swallow), longer expressions first.
 */

/** Where an object stands when objects tie on everything they match (criteria 7 and 8). */
export interface Standing {
  /** creationTimestamp in milliseconds; +Infinity when missing or unparsable. */
  readonly age: number;
  readonly namespace: string;
  readonly name: string;
}

/** What precedence reads of a route: a RouteRecord is one, which a route's map lines carry (lib/map-model/claims.ts). */
export interface Ranked {
  readonly host: RouteHost;
  readonly path: PathMatch;
  readonly method: string | undefined;
  readonly headers: readonly unknown[];
  readonly query: readonly unknown[];
  readonly origin: Standing & {
    /** Index of the rule in its object, and of the match in its rule. */
    readonly rule: number;
    readonly match: number;
  };
}

/** Negative when `a` comes first: the order of the criteria above. */
export function comparePrecedence(a: Ranked, b: Ranked): number {
  return (
    compareHosts(a.host, b.host) ||
    comparePaths(a.path, b.path) ||
    compareMatches(a, b) ||
    compareOrigins(a.origin, b.origin) ||
    // Records of one match differ only by host or path kind: a stable order between them keeps the output independent of the input's.
    compareCodeUnits(a.host.key, b.host.key) ||
    compareCodeUnits(`${a.path.kind}:${a.path.value}`, `${b.path.kind}:${b.path.value}`)
  );
}

/** Routes sorted in precedence order (a new array). */
export function inPrecedenceOrder(routes: readonly RouteRecord[]): RouteRecord[] {
  return routes.toSorted(comparePrecedence);
}

/** What a route asks for besides host and path: the counts criteria 4 to 6 read. */
export interface MatchCounts {
  readonly method: string | undefined;
  readonly headers: { readonly length: number };
  readonly query: { readonly length: number };
}

/** Criteria 4 to 6: a method match, then the most header matches, then the most query parameter matches. */
export function compareMatches(a: MatchCounts, b: MatchCounts): number {
  return Number(b.method !== undefined) - Number(a.method !== undefined) || b.headers.length - a.headers.length || b.query.length - a.query.length;
}

/** Criteria 7 to 9: the older object, then "{namespace}/{name}", then the earlier rule and match. */
export function compareOrigins(a: Ranked['origin'], b: Ranked['origin']): number {
  return compareStanding(a, b) || a.rule - b.rule || a.match - b.match;
}

/**
 * Criteria 7 and 8: oldest first, then "{namespace}/{name}" as one string,
 * so the order never depends on the order of the input.
 */
export function compareStanding(a: Standing, b: Standing): number {
  const byTime = a.age - b.age;
  // Two missing timestamps (+Infinity each) tie.
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime < 0 ? -1 : 1;
  return a.namespace === b.namespace ? compareCodeUnits(a.name, b.name) : compareCodeUnits(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`);
}

/**
 * How a message names `winner` (by `label`), ahead of `loser` of the same
 * matches by criteria 7 and 8: "older <label>", or, of the same age,
 * "<label>, as old and first by namespace/name,".
 */
export function aheadBy(winner: Standing, loser: Standing, label: string): string {
  return winner.age === loser.age ? `${label}, as old and first by namespace/name,` : `older ${label}`;
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

/**
 * Layer-4 routes (l4-route.ts) match by port and SNI name alone: of routes
 * asking for the same, the oldest object serves (criteria 7 to 9), as
 * apis/v1/tcproute_types.go's conformance asks of TCPRoutes on one
 * listener; port and SNI name keep the order independent of the input's.
 */
export function inL4PrecedenceOrder(routes: readonly L4Route[]): L4Route[] {
  return routes.toSorted((a, b) => compareOrigins(a.origin, b.origin) || a.port - b.port || compareCodeUnits(a.sni ?? '', b.sni ?? ''));
}
