import { KINDS } from './api.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { RouteRecord } from '../routing/route.ts';
import type { UnresolvedStatus } from '../routing/settings.ts';
import { describeObject } from '../object-fields/names.ts';
import { placeOf } from '../routing/order.ts';
import { unserved } from '../routing/capabilities.ts';
import { inLowestTerms } from '../routing/shares.ts';
import { HTTP_ROUTE_HOST_GROUP, leftOutMessage, type LeftOutMatch, type ObjectSettings, type TranslatedHost, type TranslatedObject } from '../routing/translated.ts';

/**
 * The Gateway API translator's last step: the route records of one
 * HTTPRoute (route-records.ts, in precedence order) as the routes it is
 * served as. A record the controller cannot route yet
 * (lib/routing/capabilities.ts) is left out with a warning naming its
 * match, which its status reads, never served as something else. A
 * backendRef that does not resolve keeps its share of the requests,
 * answered 500 (503 for a GRPCRoute: the route setting unresolvedShare),
 * with a warning naming it; backendRefs all of weight 0, and a rule without
 * backendRefs or a redirect, answer every request the same way.
 *
 * Hosts: HTTPRoutes share hosts with one another (their Gateway's
 * listeners say who may attach, for which hostnames), so they form one
 * group in host ownership (HTTP_ROUTE_HOST_GROUP): a host is served by the
 * HTTPRoutes or by the Ingresses of one namespace, whichever claimed it
 * first, unless every namespace shares hosts.
 */

const NO_LEFT_OUT: readonly LeftOutMatch[] = Object.freeze([]);
const NO_PROBLEMS: readonly Problem[] = Object.freeze([]);

const NO_SETTINGS: ObjectSettings = Object.freeze({ backend: Object.freeze({}), route: Object.freeze({}) });

/**
 * The status a rule answers by itself with: HTTPRoute asks for 500; GRPCRoute
 * for gRPC's UNAVAILABLE, which HTTP 503 is to a gRPC client
 * (grpc/doc/http-grpc-status-mapping.md).
 */
function unresolvedStatus(kind: string): UnresolvedStatus {
  return kind === KINDS.grpcRoute ? 503 : 500;
}

/**
 * A record whose backendRefs do not all resolve, as the specification
 * serves it: the refused ones' share of the requests answered with `status`
 * (a route setting, so its policy says it), the rest split by weight between the
 * resolved ones. A refused backendRef of weight 0 asks for nothing. When
 * every backendRef has weight 0, none may have a request ("If weight is
 * set to 0, no traffic should be forwarded for this entry"): every request
 * is answered so, as for backendRefs that are all invalid. A rule without
 * backendRefs (omitted or an empty list) and without a redirect, the one
 * filter that answers by itself, is answered so as well, never left out:
 * its requests would fall through to a shorter match.
 */
function withUnresolvedShare(record: RouteRecord, status: UnresolvedStatus): RouteRecord {
  const everyRequest = { share: 1, of: 1, status };
  if (record.backends.length === 0 && record.settings.redirect === undefined) return { ...record, settings: { ...record.settings, unresolvedShare: everyRequest } };
  const total = record.backends.reduce((sum, backend) => sum + backend.weight, 0);
  if (record.backends.length > 0 && total === 0) return { ...record, backends: [], settings: { ...record.settings, unresolvedShare: everyRequest } };
  const refused = record.backends.filter((backend) => backend.refused !== undefined);
  if (refused.length === 0) return record;
  const share = refused.reduce((sum, backend) => sum + backend.weight, 0);
  const backends = record.backends.filter((backend) => backend.refused === undefined);
  if (share === 0) return { ...record, backends };
  const unresolvedShare = { ...inLowestTerms(share, total), status };
  return { ...record, backends: share === total ? [] : backends, settings: { ...record.settings, unresolvedShare } };
}

/** What is said of the backendRefs of a record that do not resolve (their share is answered with `status`), or that all have weight 0. */
function unresolvedWarnings(record: RouteRecord, label: string, status: UnresolvedStatus): Problem[] {
  if (record.backends.length === 0 && record.settings.redirect === undefined) {
    return [{ object: label, field: record.origin.field, message: `for host ${record.host.key}, every request is answered ${status}: it has no backendRefs and no RequestRedirect` }];
  }
  if (record.backends.length > 0 && record.backends.every((backend) => backend.weight === 0)) {
    return [{ object: label, field: record.origin.field, message: `for host ${record.host.key}, every request is answered ${status}: its backendRefs all have weight 0` }];
  }
  return record.backends
    .filter((backend) => backend.refused !== undefined && backend.weight > 0)
    .map((backend) => ({
      object: label,
      field: record.origin.field,
      message: `for host ${record.host.key}, the share of its backendRef to ${backend.namespace}/${backend.service} is answered ${status}: ${backend.refused}`,
    }));
}

/**
 * map_reg lines have no candidate lists: a regular expression path on one
 * protocol alone says so in its policy (servedOver), not as a condition.
 */
function servedOverOfRegex(record: RouteRecord): RouteRecord {
  if (record.path.kind !== 'regex' || record.onlyOver === undefined) return record;
  return { ...record, settings: { ...record.settings, servedOver: { tls: record.onlyOver === 'HTTPS' } }, onlyOver: undefined };
}

/** The records of an HTTPRoute or a GRPCRoute and the object, as the gateway model judged them (gateway-api.ts RouteOutcome). */
export interface RoutedObject {
  /** KINDS.httpRoute or KINDS.grpcRoute. */
  readonly kind: string;
  readonly object: KubeObject;
  readonly records: readonly RouteRecord[];
}

/**
 * What a GRPCRoute asks of every backend it routes to: gRPC is HTTP/2, so
 * HAProxy speaks HTTP/2 to the servers, in clear text (proto h2: h2c with
 * prior knowledge, as gRPC servers take it) as a Service's endpoints are
 * plain unless a policy says otherwise. Backend settings, so a Service an
 * older object asks other settings of is told (backend-settings.ts).
 */
const GRPC_SETTINGS: ObjectSettings = Object.freeze({ backend: Object.freeze({ protocol: Object.freeze({ version: 'h2c', tls: false }) }), route: Object.freeze({}) });

/**
 * An HTTPRoute's or a GRPCRoute's translation. The key it is known by is a stand-in object,
 * made anew with each translation: one translated again (its Gateway,
 * Services or grants changed its records) is another object to the map
 * model, one whose records stayed the same keeps its translation
 * (translation-cache.ts).
 */
export function translateHttpRoute(routed: RoutedObject): TranslatedObject {
  const { object } = routed;
  const label = describeObject(routed.kind, object.metadata.namespace, object.metadata.name);
  const key: KubeObject = Object.freeze({ apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata });
  const hosts = new Map<string, TranslatedHost>();
  const routes: RouteRecord[] = [];
  const warnings: Problem[] = [];
  const leftOut: LeftOutMatch[] = [];
  const status = unresolvedStatus(routed.kind);
  for (const asked of routed.records) {
    const field = asked.origin.field;
    const reason = unserved(asked);
    if (reason !== undefined) {
      const match: LeftOutMatch = { object: label, field, host: asked.host.key, reason };
      leftOut.push(match);
      warnings.push({ object: label, field, message: leftOutMessage(match) });
      continue;
    }
    warnings.push(...unresolvedWarnings(asked, label, status));
    const record = servedOverOfRegex(withUnresolvedShare(asked, status));
    const host = record.host.key;
    // A Gateway API wildcard covers any number of labels; the map model looks up those below one in host-suffix.map.
    if (!hosts.has(host)) hosts.set(host, Object.freeze({ key: host, wildcard: record.host.wildcard, field }));
    routes.push(record);
  }
  return {
    key,
    object,
    kind: routed.kind,
    label,
    place: placeOf(object),
    problems: NO_PROBLEMS,
    warnings: warnings.length > 0 ? warnings : NO_PROBLEMS,
    leftOut: leftOut.length > 0 ? leftOut : NO_LEFT_OUT,
    served: {
      namespace: String(object.metadata.namespace ?? ''),
      hostGroup: HTTP_ROUTE_HOST_GROUP,
      hosts: [...hosts.values()],
      routes,
      defaultBackend: undefined,
      tls: [],
      settings: routed.kind === KINDS.grpcRoute ? GRPC_SETTINGS : NO_SETTINGS,
    },
  };
}

/** The content of a route's records: what decides whether it is read again. */
export function recordsContent(records: readonly RouteRecord[]): string {
  return JSON.stringify(records);
}
