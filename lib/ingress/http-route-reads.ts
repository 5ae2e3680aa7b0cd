import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { RouteRecord, WeightedBackend } from '../routing/route.ts';
import type { ReadSettings } from '../annotations/settings.ts';
import { NO_BACKEND } from './backend-names.ts';
import type { BackendRef, IngressRead, RouteClaim } from './ingress-reader.ts';
import { HostItem, ModelSource, RouteItem } from './model-source.ts';
import { describeObject } from './names.ts';
import { placeOf } from './order.ts';
import { NO_PROBLEMS } from './problems.ts';
import { routeConditions } from './route-conditions.ts';
import { escapeRegex, greatestCommonDivisor, routePolicy } from './route-policies.ts';
import { backendChoice, type BackendUse } from './backend-choice.ts';
import { backendFiltersConflict, withBackendFilters } from '../routing/backend-filters.ts';
import type { HostEntry, RoutedObject } from './types.ts';

/**
 * HTTPRoutes in the Ingress routing model: the route records of one
 * HTTPRoute (lib/gateway/route-records.ts) read as what an Ingress
 * contributes, so both APIs share the host map, the path maps, the
 * backends (`<namespace>_<service>_<port>`, see backend-names.ts) and the
 * route policies, and a new HTTPRoute to a served Service changes map
 * lines only, as a new Ingress does.
 *
 * Served so far: host and an Exact, PathPrefix or RegularExpression path
 * (path-regex.map, as an Ingress's regex paths: after exact lines, before
 * prefix lines, longest first), one backend or
 * weighted ones (a split backend: servers.ts), and the filters the route
 * policies render, a backendRef's own among them (joined to its rule's; for
 * several backendRefs, a choice in the frontend: backend-choice.ts). A
 * backendRef that does not resolve keeps its share of
 * the requests, answered 500 by the route's policy (unresolvedShare), with
 * a warning naming it; backendRefs all of weight 0 answer every request
 * 500 the same way. Header, query parameter and method matches make claims
 * with conditions, which the aggregate serves as candidate lists
 * (route-lists.ts), or on a regular expression path as regex lines that
 * look for the request's condition keys (regex-candidates.ts). A record
 * asking for more (filters of a backendRef that cannot join its rule's,
 * backend-filters.ts) is left out with a warning naming its match
 * (LeftOutMatch, which its route's status reads), never served as
 * something else. A mirror, a rule's or a backendRef's, is the route
 * policy's (route-policies.ts), its Service port's backend kept by the
 * aggregate (mirror-backends.ts).
 *
 * Conflicts follow the Ingress rules (route-claims.ts): an Exact path
 * outranks a PathPrefix's exact line, then the older object wins, whichever
 * API it comes from. Hosts: HTTPRoutes share hosts with one another (their
 * Gateway's listeners say who may attach, for which hostnames), so they
 * form one group in host ownership (host-ownership.ts): a host is served
 * by the HTTPRoutes or by the Ingresses of one namespace, whichever claimed
 * it first, unless sharedHostNamespaces is `*` (everyone shares).
 */

/** The host ownership group of every HTTPRoute: not a namespace name (those have no upper case). */
export const HTTP_ROUTE_HOST_GROUP = 'Gateway API HTTPRoutes';

export interface HttpRouteRead {
  /**
   * What the aggregate knows the route by: a stand-in object, the same
   * while the route's records are the same, so an HTTPRoute whose Gateway,
   * Services or grants changed is read again, and one whose records did
   * not is left as it is.
   */
  readonly key: KubeObject;
  readonly read: IngressRead;
  /** The records left out, with why, and the backendRefs answered 500. */
  readonly warnings: readonly Problem[];
  /** The matches left out as not routed yet, for the route's status. */
  readonly leftOut: readonly LeftOutMatch[];
  /** The records' content: equal for equal records. */
  readonly content: string;
  /** True when a route of it chooses between backendRefs with filters of their own (backend-choice.ts). */
  readonly choices: boolean;
}

/**
 * A match left out as not routed yet (as against one that cannot be served
 * at all): its warning and its route's status (PartiallyInvalid) say so.
 */
export interface LeftOutMatch {
  /** The HTTPRoute, as messages name it. */
  readonly object: string;
  readonly field: string;
  readonly host: string;
  /** What of it is not routed yet: unserved()'s answer. */
  readonly reason: string;
}

/** How a left-out match is named: in its warning, and in its route's status. */
export function leftOutMessage(match: LeftOutMatch): string {
  return `not served for host ${match.host}: ${match.reason} not routed yet`;
}

const NO_LEFT_OUT: readonly LeftOutMatch[] = Object.freeze([]);

const NO_SETTINGS: ReadSettings = Object.freeze({ backend: Object.freeze({}), route: Object.freeze({}), outcomes: Object.freeze([]) });

/** Why a record cannot be served yet, or undefined when it can. */
function unserved(record: RouteRecord): string | undefined {
  // A map line's key is one word read raw: what an Ingress's regex path may not hold (names.ts checkRegexPath), this may not either.
  if (record.path.kind === 'regex' && /[#%`]/.test(record.path.value)) return "a RegularExpression path with '#', '%' or '`'";
  for (const backend of record.backends) {
    if (backend.settings === undefined || backend.refused !== undefined) continue;
    const conflict = backendFiltersConflict(record.settings, backend.settings);
    if (conflict !== undefined) return conflict;
  }
  return undefined;
}

/** Every request answered 500: what routes whose backendRefs all fail, or all have weight 0, share. */
const EVERY_REQUEST = Object.freeze({ share: 1, of: 1 });

/**
 * A record whose backendRefs do not all resolve, as the specification
 * serves it: the refused ones' share of the requests answered 500 (a route
 * setting, so its policy says it), the rest split by weight between the
 * resolved ones. A refused backendRef of weight 0 asks for nothing. When
 * every backendRef has weight 0, none may have a request ("If weight is
 * set to 0, no traffic should be forwarded for this entry"): every request
 * is answered 500, as for backendRefs that are all invalid. A rule without
 * backendRefs (omitted or an empty list) and without a redirect, the one
 * filter that answers by itself, is answered 500 as well, never left out:
 * its requests would fall through to a shorter match.
 */
function withUnresolvedShare(record: RouteRecord): RouteRecord {
  if (record.backends.length === 0 && record.settings.redirect === undefined) return { ...record, settings: { ...record.settings, unresolvedShare: EVERY_REQUEST } };
  const total = record.backends.reduce((sum, backend) => sum + backend.weight, 0);
  if (record.backends.length > 0 && total === 0) return { ...record, backends: [], settings: { ...record.settings, unresolvedShare: EVERY_REQUEST } };
  const refused = record.backends.filter((backend) => backend.refused !== undefined);
  if (refused.length === 0) return record;
  const share = refused.reduce((sum, backend) => sum + backend.weight, 0);
  const backends = record.backends.filter((backend) => backend.refused === undefined);
  if (share === 0) return { ...record, backends };
  const divisor = greatestCommonDivisor(share, total);
  const unresolvedShare = { share: share / divisor, of: total / divisor };
  return { ...record, backends: share === total ? [] : backends, settings: { ...record.settings, unresolvedShare } };
}

/** What is said of the backendRefs of a record that do not resolve (their share is answered 500), or that all have weight 0. */
function unresolvedWarnings(record: RouteRecord, label: string): Problem[] {
  if (record.backends.length === 0 && record.settings.redirect === undefined) {
    return [{ object: label, field: record.origin.field, message: `for host ${record.host.key}, every request is answered 500: it has no backendRefs and no RequestRedirect` }];
  }
  if (record.backends.length > 0 && record.backends.every((backend) => backend.weight === 0)) {
    return [{ object: label, field: record.origin.field, message: `for host ${record.host.key}, every request is answered 500: its backendRefs all have weight 0` }];
  }
  return record.backends
    .filter((backend) => backend.refused !== undefined && backend.weight > 0)
    .map((backend) => ({
      object: label,
      field: record.origin.field,
      message: `for host ${record.host.key}, the share of its backendRef to ${backend.namespace}/${backend.service} is answered 500: ${backend.refused}`,
    }));
}

function serviceBackend({ namespace, service, port }: WeightedBackend): BackendRef {
  return { name: `${namespace}_${service}_${port}`, namespace, service, port: { number: port } };
}

/**
 * Where a record's requests go, and the policy on their way: the Service
 * port's backend, as an Ingress names it; for several backendRefs, a split
 * backend named after the route and rule (three '_', so never a Service
 * port's name), which a weight change keeps; none for a redirect, answered
 * by its policy first. A backendRef's own filters join its rule's in its
 * policy: the route's alone for one backendRef, each share's in a choice
 * (backend-choice.ts) for several. Or why it cannot be served.
 */
function routeOf(record: RouteRecord, source: ModelSource): BackendUse | { readonly reason: string } {
  const { backends, origin, settings } = record;
  const path = record.path.value;
  const backend = backends[0];
  if (backend === undefined) return { backend: NO_BACKEND, policy: routePolicy(settings, path, source) };
  if (backends.length === 1) return { backend: serviceBackend(backend), policy: routePolicy(withBackendFilters(settings, backend.settings), path, source) };
  if (backends.some((share) => share.settings !== undefined)) {
    const shares = backends.map((share) => ({ backend: serviceBackend(share), weight: share.weight, policy: routePolicy(withBackendFilters(settings, share.settings), path, source) }));
    const choice = backendChoice(origin.namespace, origin.name, origin.rule, shares);
    return 'reason' in choice ? choice : { backend: choice, policy: undefined };
  }
  const split = Object.freeze(backends.map(({ namespace, service, port, weight }) => Object.freeze({ namespace, service, port, weight })));
  const name = `${origin.namespace}_${origin.name}_${origin.rule}_split`;
  return { backend: { name, namespace: origin.namespace, service: origin.name, port: { number: origin.rule }, split }, policy: routePolicy(settings, path, source) };
}

/**
 * map_reg lines have no candidate lists: a regular expression path on one
 * protocol alone says so in its policy (servedOver), not as a condition.
 */
function servedOverOfRegex(record: RouteRecord): RouteRecord {
  if (record.path.kind !== 'regex' || record.onlyOver === undefined) return record;
  return { ...record, settings: { ...record.settings, servedOver: { tls: record.onlyOver === 'HTTPS' } }, onlyOver: undefined };
}

export function readHttpRoute(routed: RoutedObject, content: string): HttpRouteRead {
  const { object } = routed;
  const label = describeObject('HTTPRoute', object.metadata.namespace, object.metadata.name);
  const place = placeOf(object);
  const key: KubeObject = Object.freeze({ apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata });
  const hosts = new Map<string, HostEntry>();
  const routes: RouteClaim[] = [];
  const warnings: Problem[] = [];
  const leftOut: LeftOutMatch[] = [];
  for (const asked of routed.records) {
    const field = asked.origin.field;
    const reason = unserved(asked);
    if (reason !== undefined) {
      const match: LeftOutMatch = { object: label, field, host: asked.host.key, reason };
      leftOut.push(match);
      warnings.push({ object: label, field, message: leftOutMessage(match) });
      continue;
    }
    warnings.push(...unresolvedWarnings(asked, label));
    const record = servedOverOfRegex(withUnresolvedShare(asked));
    const source = new ModelSource('HTTPRoute', object, field);
    const route = routeOf(record, source);
    if ('reason' in route) {
      warnings.push({ object: label, field, message: `not served for host ${record.host.key}: ${route.reason} not routed yet` });
      continue;
    }
    const { backend, policy } = route;
    const host = record.host.key;
    if (!hosts.has(host)) hosts.set(host, Object.freeze(new HostItem(host, host.startsWith('*.'), source)));
    const conditions = routeConditions(record, source);
    const claim = (map: RouteClaim['map'], path: string, fromExactPath: boolean, routeKey = `${host}${path}`): RouteClaim => {
      const line = Object.freeze(new RouteItem(routeKey, backend.name, policy, source));
      return { map, key: routeKey, host, asked: backend, backend, fromExactPath, policy, conditions, field, ingress: key, label, place, rank: record, line };
    };
    if (record.path.kind === 'exact') {
      routes.push(claim('exact', record.path.value, true));
      continue;
    }
    if (record.path.kind === 'regex') {
      // The whole path, case-sensitive, under the host key: matched against "<host key><path>" as an Ingress's regex path is.
      routes.push(claim('regex', record.path.value, false, `^${escapeRegex(host)}(?:${record.path.value})$`));
      continue;
    }
    // Element-wise as an Ingress Prefix path (lib/routing/route.ts keeps it without a trailing '/'): an exact line and a prefix line.
    const trimmed = record.path.value === '/' ? '' : record.path.value;
    if (trimmed !== '') routes.push(claim('exact', trimmed, false));
    routes.push(claim('prefix', `${trimmed}/`, false));
  }
  const hostEntries = [...hosts.values()];
  return {
    key,
    content,
    choices: routes.some((claim) => claim.backend.choice !== undefined),
    warnings: warnings.length > 0 ? warnings : NO_PROBLEMS,
    leftOut: leftOut.length > 0 ? leftOut : NO_LEFT_OUT,
    read: {
      place,
      problems: NO_PROBLEMS,
      served: {
        label,
        namespace: String(object.metadata.namespace ?? ''),
        hostGroup: HTTP_ROUTE_HOST_GROUP,
        hosts: hostEntries,
        hostKeys: hostEntries.map((entry) => entry.host),
        routes,
        defaultBackend: undefined,
        tls: [],
        settings: NO_SETTINGS,
      },
    },
  };
}

/** The content of a route's records: what decides whether it is read again. */
export function recordsContent(records: readonly RouteRecord[]): string {
  return JSON.stringify(records);
}
