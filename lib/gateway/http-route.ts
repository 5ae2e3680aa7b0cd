import type { RouteSettings } from '../routing/settings.ts';
import { isFields, type Fields } from '../object-fields/fields.ts';
import { describeObject, isDnsLabel, isPortNumber, quote } from '../object-fields/names.ts';
import { placeOf } from '../routing/order.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { KINDS, type GroupKind } from './api.ts';
import { readBackendReference, type BackendReference } from './backend-refs.ts';
import { absent, FieldReader, GATEWAY_DEFAULTS } from './field-reader.ts';
import { checkHostname } from './hostnames.ts';
import { HTTP_ROUTE_FILTERS, readFilters } from './route-filters.ts';
import { DEFAULT_MATCH, readMatch, type RouteMatch } from './route-matches.ts';
import { checkDuration } from './values.ts';

/**
 * Reading one HTTPRoute (apis/v1/httproute_types.go): its parents, hostnames
 * and rules, every value checked for where it lands. Any fault leaves the
 * whole route out, named (its Accepted condition says why), as a faulty
 * Ingress is: a route half-served would route what its author did not write.
 * Whether its references resolve is settled later (resolveBackend, backend-refs.ts),
 * because an unresolved backend leaves the route served, answering 500.
 */

export interface ParentRef extends GroupKind {
  readonly namespace: string;
  readonly name: string;
  readonly sectionName: string | undefined;
  readonly port: number | undefined;
  /** Index in spec.parentRefs: status is written per parentRef. */
  readonly index: number;
  /** The parentRef as written, for status (which echoes it). */
  readonly written: Fields;
}

export interface RouteBackendRef {
  readonly reference: BackendReference;
  readonly weight: number;
  /** Per-backendRef filters: applied to requests sent to this backend alone. */
  readonly settings: RouteSettings;
  readonly mirrors: readonly BackendReference[];
}

export interface RouteRule {
  readonly index: number;
  readonly matches: readonly RouteMatch[];
  readonly settings: RouteSettings;
  readonly mirrors: readonly BackendReference[];
  /** The ExternalAuth filter's Service, when the rule has one. */
  readonly authService: BackendReference | undefined;
  readonly backends: readonly RouteBackendRef[];
}

/** What every route kind read has: its kind, object, names, parents and hostnames. */
export interface RouteBase {
  /** A name of KINDS (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute): which listeners admit it, and how messages, grants and records name it. */
  readonly kind: string;
  readonly object: KubeObject;
  readonly label: string;
  readonly namespace: string;
  readonly name: string;
  readonly age: number;
  readonly parents: readonly ParentRef[];
  /** Lowercase; empty for any host. */
  readonly hostnames: readonly string[];
}

export interface HttpRoute extends RouteBase {
  readonly rules: readonly RouteRule[];
}

export interface HttpRouteRead {
  readonly label: string;
  /** The parentRefs, read even when the route is left out: status is written to each. */
  readonly parents: readonly ParentRef[];
  /** Undefined when a problem leaves the route out. */
  readonly route: HttpRoute | undefined;
  readonly problems: readonly Problem[];
}

export function readParents(reader: FieldReader, value: unknown, namespace: string): ParentRef[] {
  const parents: ParentRef[] = [];
  reader.list(value, 'spec.parentRefs').forEach((entry, index) => {
    const field = `spec.parentRefs[${index}]`;
    if (!isFields(entry)) return reader.problem(field, 'is not an object');
    const groupKind = reader.groupKind(entry, field, GATEWAY_DEFAULTS);
    const parentNamespace = reader.namespace(entry['namespace'], `${field}.namespace`, namespace);
    const name = reader.name(entry['name'], `${field}.name`, 'Gateway');
    const sectionName = absent(entry['sectionName']) ? undefined : reader.name(entry['sectionName'], `${field}.sectionName`, 'listener');
    const port = absent(entry['port']) ? undefined : isPortNumber(entry['port']) ? entry['port'] : undefined;
    if (!absent(entry['port']) && port === undefined) reader.problem(`${field}.port`, `${quote(entry['port'])} is not a port number (1-65535)`);
    if (!groupKind || !parentNamespace || !name) return;
    parents.push({ ...groupKind, namespace: parentNamespace, name, sectionName, port, index, written: entry });
  });
  return parents;
}

function readTimeouts(reader: FieldReader, value: unknown, field: string): RouteSettings['timeouts'] {
  const timeouts = reader.fields(value, field);
  if (timeouts === undefined) return undefined;
  const request = absent(timeouts['request']) ? undefined : reader.take(checkDuration(timeouts['request']), `${field}.request`);
  const backendRequest = absent(timeouts['backendRequest']) ? undefined : reader.take(checkDuration(timeouts['backendRequest']), `${field}.backendRequest`);
  // The specification: backendRequest must not exceed request (0 being no limit).
  if (request && backendRequest !== undefined && (backendRequest === 0 || backendRequest > request)) {
    reader.problem(`${field}.backendRequest`, 'must not be longer than request');
  }
  return { ...(request === undefined ? {} : { request }), ...(backendRequest === undefined ? {} : { backendRequest }) };
}

function readBackends(reader: FieldReader, value: unknown, field: string, namespace: string, matches: readonly RouteMatch[], filterTypes: readonly string[]): RouteBackendRef[] {
  const backends: RouteBackendRef[] = [];
  reader.list(value, field).forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const reference = readBackendReference(reader, entry, at, namespace);
    const weight = absent(entry['weight']) ? 1 : reader.integer(entry['weight'], `${at}.weight`, 0, 1_000_000);
    const filters = readFilters(reader, entry['filters'], `${at}.filters`, namespace, matches, filterTypes);
    // The specification gives ExternalAuth support in rules alone, not in backendRefs.
    if (filters.authService !== undefined || filters.settings.gatewayExternalAuth !== undefined) reader.problem(`${at}.filters`, 'ExternalAuth is a filter of a rule, not of a backendRef');
    if (reference && weight !== undefined) backends.push({ reference, weight, settings: filters.settings, mirrors: filters.mirrors });
  });
  return backends;
}

/** How one kind's rules differ: how a match is read, the filter types it has, and whether it has timeouts (an HTTPRoute's). */
export interface RuleKind {
  readonly readMatch: (reader: FieldReader, value: unknown, field: string) => RouteMatch | undefined;
  readonly filterTypes: readonly string[];
  readonly timeouts: boolean;
}

/** The rule reader of a kind: matches, filters, timeouts and backendRefs, every fault recorded by field. */
export function ruleReader(kind: RuleKind): RuleReader {
  return (reader, value, index, namespace) => {
    const field = `spec.rules[${index}]`;
    if (!isFields(value)) {
      reader.problem(field, 'is not an object');
      return undefined;
    }
    const listed = reader.list(value['matches'], `${field}.matches`);
    const matches = listed.length === 0 ? [DEFAULT_MATCH] : listed.map((match, i) => kind.readMatch(reader, match, `${field}.matches[${i}]`));
    const read = matches.filter((match): match is RouteMatch => match !== undefined);
    const filters = readFilters(reader, value['filters'], `${field}.filters`, namespace, read, kind.filterTypes);
    const timeouts = kind.timeouts ? readTimeouts(reader, value['timeouts'], `${field}.timeouts`) : undefined;
    const backends = readBackends(reader, value['backendRefs'], `${field}.backendRefs`, namespace, read, kind.filterTypes);
    if (read.length < matches.length) return undefined;
    return { index, matches: read, settings: timeouts ? { ...filters.settings, timeouts } : filters.settings, mirrors: filters.mirrors, authService: filters.authService, backends };
  };
}

const readRule = ruleReader({ readMatch, filterTypes: HTTP_ROUTE_FILTERS, timeouts: true });

/** How the rules of one kind of route are read: an HTTPRoute's here, a GRPCRoute's in grpc-route.ts. */
export type RuleReader = (reader: FieldReader, value: unknown, index: number, namespace: string) => RouteRule | undefined;

/** Reads a route of `kind`: parents and hostnames as every HTTP kind has them, its rules by `readRule`. */
/** What every route kind begins with, read: its own namespace, parentRefs and hostnames; `base` is the route once the rest of it is read without problems. */
export function readRouteHead(
  object: KubeObject,
  kind: string,
): { readonly reader: FieldReader; readonly ownNamespace: string; readonly spec: Readonly<Record<string, unknown>>; readonly parents: readonly ParentRef[]; readonly base: () => RouteBase } {
  const { namespace, name } = object.metadata;
  const reader = new FieldReader(describeObject(kind, namespace, name));
  const ownNamespace = isDnsLabel(namespace) ? namespace : '';
  if (ownNamespace === '') reader.problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
  const spec = isFields(object['spec']) ? object['spec'] : {};
  const parents = readParents(reader, spec['parentRefs'], ownNamespace);
  const hostnames = new Set<string>();
  reader.list(spec['hostnames'], 'spec.hostnames').forEach((hostname, index) => {
    const checked = reader.take(checkHostname(hostname), `spec.hostnames[${index}]`);
    if (checked !== undefined) hostnames.add(checked);
  });
  const base = (): RouteBase => ({ kind, object, label: reader.label, namespace: ownNamespace, name: String(name), age: placeOf(object).age, parents, hostnames: [...hostnames] });
  return { reader, ownNamespace, spec, parents, base };
}

export function readRouteObject(object: KubeObject, kind: string, readRuleOf: RuleReader): HttpRouteRead {
  const { reader, ownNamespace, spec, parents, base } = readRouteHead(object, kind);
  // An absent rules list is one rule matching every request, with no backend (the CRD's default).
  const listed = absent(spec['rules']) ? [{}] : reader.list(spec['rules'], 'spec.rules');
  const rules = listed.map((rule, index) => readRuleOf(reader, rule, index, ownNamespace));
  const label = reader.label;
  if (reader.problems.length > 0) return { label, parents, route: undefined, problems: reader.problems };
  return { label, parents, route: { ...base(), rules: rules as RouteRule[] }, problems: [] };
}

export function readHttpRoute(object: KubeObject): HttpRouteRead {
  return readRouteObject(object, KINDS.httpRoute, readRule);
}
