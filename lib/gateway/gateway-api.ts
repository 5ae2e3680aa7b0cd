import type { KubeObject, Problem } from '../pipeline/model.ts';
import { inPrecedenceOrder } from '../routing/precedence.ts';
import type { RouteRecord } from '../routing/route.ts';
import type { L4Routing } from '../routing/l4-route.ts';
import { KINDS } from './api.ts';
import { attach, carriesEntryOf, gatewayOf, servedKey, type Acceptance, type AttachedListener, type ParentOutcome } from './attachment.ts';
export type { ParentOutcome } from './attachment.ts';
export type { L4RouteOutcome } from './l4-route.ts';
import type { Unresolved } from './backend-refs.ts';
import { judgeL4Routes, L4JudgingCache, withL4Counts, type L4Part, type L4RouteOutcome } from './l4-route.ts';
import type { GatewayClassRead } from './gateway-class.ts';
import { keyOf, readGateways, type GatewayEntry, type GatewaySources, type GatewaysRead } from './gateways-read.ts';
import { readGrpcRoute } from './grpc-route.ts';
import { readHttpRoute, type HttpRouteRead } from './http-route.ts';
import type { ListenerState } from './listeners.ts';
import { sameItems } from '../collections/sorted-list.ts';
import { describeObject } from '../object-fields/names.ts';
import { placeOf } from '../routing/order.ts';
import { kindConflicts } from './kind-conflicts.ts';
import { translateRoute } from './route-records.ts';
import { NO_BACKEND_TLS, readBackendTlsPolicies, type BackendTlsRead } from './backend-tls-policy.ts';

/**
 * The Gateway API objects of this controller, read and judged together:
 * which GatewayClasses are its own, which Gateways of those classes it
 * serves and how each listener fares, which HTTPRoutes attach where, the
 * route records they become, and everything status needs. Pure: the same
 * objects give the same model, whatever order they come in.
 */

export interface GatewayApiSources extends GatewaySources {
  readonly httpRoutes: readonly KubeObject[];
  /** None when GRPCRoutes are not watched (their CRD not served). */
  readonly grpcRoutes?: readonly KubeObject[];
  /** TLSRoutes and TCPRoutes (none when their CRDs are not served). */
  readonly tlsRoutes?: readonly KubeObject[];
  readonly tcpRoutes?: readonly KubeObject[];
  /** None when BackendTLSPolicies are not watched (their CRD not served). */
  readonly backendTlsPolicies?: readonly KubeObject[];
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  readonly namespace: (name: string) => KubeObject | undefined;
  /**
   * What identifies every source but the routes (the stores read and
   * their versions): equal to the last read's, it lets a memo keep the
   * Gateways and each unchanged route's outcome. Undefined: nothing is kept.
   */
  readonly context?: readonly unknown[];
}

/** A Gateway of one of this controller's classes, or a ListenerSet of one: served, or left out with its problems. */
export interface GatewayOutcome extends Pick<GatewayEntry, 'object' | 'served' | 'problems' | 'listenerSet' | 'attachedListenerSets' | 'insecureFallback'> {
  /** Routes attached, by listener name. */
  readonly attachedRoutes: ReadonlyMap<string, number>;
  /** The hostnames routes are served for, by listener name ('*': any). */
  readonly attachedHostnames: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface RouteOutcome {
  /** KINDS.httpRoute or KINDS.grpcRoute. */
  readonly kind: string;
  readonly object: KubeObject;
  readonly parents: readonly ParentOutcome[];
  readonly unresolved: readonly Unresolved[];
  /** The route records it is served as, in precedence order: the same array while the route's outcome is kept. */
  readonly records: readonly RouteRecord[];
}

export interface GatewayApiModel {
  readonly classes: ReadonlyMap<string, GatewayClassRead>;
  /** Gateways by namespace/name, and their ListenerSets by listenerSetKey (gateways-read.ts). */
  readonly gateways: ReadonlyMap<string, GatewayOutcome>;
  /**
   * By routeKey: every HTTPRoute and GRPCRoute naming at least one served
   * Gateway, and every other one whose status still carries this
   * controller's entries (it named a served Gateway once): with no parents,
   * so they are removed.
   */
  readonly routes: ReadonlyMap<string, RouteOutcome>;
  /** In precedence order (lib/routing/precedence.ts). */
  readonly records: readonly RouteRecord[];
  /** By routeKey: the TLSRoutes and TCPRoutes, as `routes` holds the HTTPRoutes and GRPCRoutes. */
  readonly l4Routes: ReadonlyMap<string, L4RouteOutcome>;
  /** The layer-4 listeners and routes, for the map model. */
  readonly l4: L4Routing;
  /** Objects and listeners left out, with why. */
  readonly excluded: readonly Problem[];
  /** The BackendTLSPolicies: how each Service port is spoken to, and each policy's conditions. */
  readonly backendTls: BackendTlsRead;
}

/** How the model's routes are keyed: namespace/name for an HTTPRoute, the kind before it for any other kind. */
export function routeKey(kind: string, object: KubeObject): string {
  return kind === KINDS.httpRoute ? keyOf(object) : `${kind} ${keyOf(object)}`;
}

/** The route kinds of the model's HTTP part, each with its reader and where the sources hold its objects. */
interface RouteKind {
  readonly kind: string;
  readonly read: (object: KubeObject) => HttpRouteRead;
  readonly objects: (sources: GatewayApiSources) => readonly KubeObject[];
}

const NO_OBJECTS: readonly KubeObject[] = Object.freeze([]);

const ROUTE_KINDS: readonly RouteKind[] = [
  { kind: KINDS.httpRoute, read: readHttpRoute, objects: (sources) => sources.httpRoutes },
  { kind: KINDS.grpcRoute, read: readGrpcRoute, objects: (sources) => sources.grpcRoutes ?? NO_OBJECTS },
];

const routeLists = (sources: GatewayApiSources) => ROUTE_KINDS.map((kind) => kind.objects(sources));

/**
 * What one read leaves for the next. Stores replace an object when it
 * changes, never mutate it, so what is worked out from one object is kept
 * for as long as the stores keep that object (weakly, so objects gone take
 * their entries with them). An HTTPRoute's outcome also depends on
 * everything else (Gateways, grants, Services, Namespaces, Secrets): it is
 * kept only while the sources' `context` is the same.
 */
export class GatewayApiMemo {
  /** Each route's read: a function of the object alone. */
  readonly reads = new WeakMap<KubeObject, HttpRouteRead>();
  last:
    | {
        readonly context: readonly unknown[];
        /** The objects of each of ROUTE_KINDS, in its order. */
        readonly routeLists: readonly (readonly KubeObject[])[];
        readonly gateways: GatewaysRead;
        /** The routes a route of the other kind keeps from a listener: judged again at every read. */
        readonly refused: ReadonlySet<KubeObject>;
        /** Per route, its outcome; null for one that is not this controller's. */
        readonly routes: WeakMap<KubeObject, RouteWork | null>;
        readonly model: HttpModel;
      }
    | undefined;
  /** Each TLSRoute's and TCPRoute's read and judging. */
  readonly l4 = new L4JudgingCache();
  /** The last model with its layer-4 part, kept while the HTTP part and the TLSRoute and TCPRoute lists are the same. */
  lastL4: { readonly key: readonly unknown[]; readonly model: GatewayApiModel } | undefined;
  /** The last judging of the TLSRoutes and TCPRoutes, kept while they and the stores it reads (the context) are: an HTTPRoute change keeps it. */
  lastL4Judging: { readonly key: readonly unknown[]; readonly judged: L4Part } | undefined;
  /** The last BackendTLSPolicies read, kept while the policies and the stores they read (the context) are the same. */
  lastBackendTls: { readonly key: readonly unknown[]; readonly read: BackendTlsRead } | undefined;
}

/** The model but its layer-4 part. */
type HttpModel = Omit<GatewayApiModel, 'l4Routes' | 'l4' | 'backendTls'>;

/** One HTTPRoute judged against the Gateways: its outcome, records and problems, and the listeners it attaches to. */
interface RouteWork {
  readonly outcome: RouteOutcome;
  readonly problems: readonly Problem[];
  readonly attachments: readonly { readonly gateway: string; readonly listeners: readonly AttachedListener[] }[];
}

/**
 * One route judged against the Gateways; `refused`: the listeners a route
 * of the other kind keeps it from (kind-conflicts.ts), each with why.
 */
function judgeRoute(
  kind: string,
  object: KubeObject,
  read: HttpRouteRead,
  sources: GatewayApiSources,
  gateways: GatewaysRead,
  refused?: ReadonlyMap<ListenerState, string>,
): RouteWork | null {
  const ours = read.parents.flatMap((parent) => {
    const gateway = gatewayOf(parent, gateways.served);
    return gateway ? [{ parent, gateway }] : [];
  });
  if (ours.length === 0) {
    if (!carriesEntryOf(object, sources.controllerName)) return null;
    return { outcome: { kind, object, parents: [], unresolved: [], records: [] }, problems: [], attachments: [] };
  }
  const route = read.route;
  const parents: ParentOutcome[] = [];
  const attachments: RouteWork['attachments'][number][] = [];
  for (const { parent, gateway } of ours) {
    let acceptance: Acceptance = route
      ? attach(route, parent, gateway, sources.namespace)
      : { accepted: false, reason: 'UnsupportedValue', message: read.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ') };
    if (acceptance.accepted && refused) acceptance = withoutRefused(acceptance.listeners, refused);
    parents.push({ parent, acceptance });
    if (acceptance.accepted) attachments.push({ gateway: servedKey(gateway), listeners: acceptance.listeners });
  }
  const attached = attachments.flatMap((attachment) => attachment.listeners);
  const translated = route ? translateRoute(route, attached, { service: sources.service, grants: gateways.grants }, gateways.protocols) : { records: [], unresolved: [] };
  return { outcome: { kind, object, parents, unresolved: translated.unresolved, records: inPrecedenceOrder(translated.records) }, problems: read.problems, attachments };
}

/** An acceptance on `listeners` less the `refused` ones: not accepted, saying why, when none is left. */
function withoutRefused(listeners: readonly AttachedListener[], refused: ReadonlyMap<ListenerState, string>): Acceptance {
  const kept = listeners.filter((listener) => !refused.has(listener.state));
  if (kept.length > 0) return { accepted: true, listeners: kept };
  return { accepted: false, reason: 'NotAllowedByListeners', message: listeners.map((listener) => refused.get(listener.state)!).join('; ') };
}

/** The route's work: kept while the object and everything else are the same. */
function workOf(
  kind: RouteKind,
  object: KubeObject,
  sources: GatewayApiSources,
  gatewaysRead: GatewaysRead,
  cache: WeakMap<KubeObject, RouteWork | null>,
  memo: GatewayApiMemo | undefined,
): RouteWork | null {
  let work = cache.get(object);
  if (work === undefined) {
    let routeRead = memo?.reads.get(object);
    if (routeRead === undefined) {
      routeRead = kind.read(object);
      memo?.reads.set(object, routeRead);
    }
    work = judgeRoute(kind.kind, object, routeRead, sources, gatewaysRead);
    cache.set(object, work);
  }
  return work;
}

/** The model's parts, its records sorted only when asked for (the renderer reads each route's own). */
function modelOf(classes: GatewayApiModel['classes'], gateways: GatewayApiModel['gateways'], routes: ReadonlyMap<string, RouteOutcome>, excluded: readonly Problem[]): HttpModel {
  let records: readonly RouteRecord[] | undefined;
  return {
    classes,
    gateways,
    routes,
    excluded,
    get records() {
      records ??= inPrecedenceOrder(Array.from(routes.values(), (route) => route.records).flat());
      return records;
    },
  };
}

const sameAttachments = (a: RouteWork['attachments'], b: RouteWork['attachments']) =>
  a.length === b.length &&
  a.every(
    (attachment, i) =>
      attachment.gateway === b[i]!.gateway &&
      attachment.listeners.length === b[i]!.listeners.length &&
      attachment.listeners.every((listener, j) => listener.state === b[i]!.listeners[j]!.state && sameItems(listener.hostnames, b[i]!.listeners[j]!.hostnames)),
  );

/** Past this many replaced routes, reading them all costs about what patching does. */
const PATCHED_AT_MOST = 64;

/**
 * The last model with a few routes replaced where they stand (the stores
 * replace a changed object in its place): each judged again, the rest
 * kept. Undefined where routes came or went, or where a replaced one
 * attaches differently or has problems (the Gateways' counts and the
 * excluded list would change): then everything is read again.
 */
function patchedModel(last: NonNullable<GatewayApiMemo['last']>, sources: GatewayApiSources, memo: GatewayApiMemo): HttpModel | undefined {
  let routes: Map<string, RouteOutcome> | undefined;
  let replaced = 0;
  for (const [k, kind] of ROUTE_KINDS.entries()) {
    const before = last.routeLists[k]!;
    const now = kind.objects(sources);
    if (before.length !== now.length) return undefined;
    for (let i = 0; i < now.length; i++) {
      const old = before[i]!;
      const object = now[i]!;
      if (old === object) continue;
      if (++replaced > PATCHED_AT_MOST || keyOf(old) !== keyOf(object) || last.refused.has(old) || placeOf(old).age !== placeOf(object).age) return undefined;
      const was = last.routes.get(old);
      const work = workOf(kind, object, sources, last.gateways, last.routes, memo);
      if (was === undefined || (was === null) !== (work === null)) return undefined;
      if (was === null || work === null) continue;
      if (was.problems.length > 0 || work.problems.length > 0 || !sameAttachments(was.attachments, work.attachments)) return undefined;
      routes ??= new Map(last.model.routes);
      routes.set(routeKey(kind.kind, object), work.outcome);
    }
  }
  return modelOf(last.model.classes, last.model.gateways, routes ?? last.model.routes, last.model.excluded);
}

/**
 * Reads the model. With a memo and a `context` in the sources, a read after
 * only routes changed judges only the changed ones again (and after a
 * few were replaced, keeps the rest of the model), and a read after nothing
 * changed returns the last model.
 */
function readHttpPart(sources: GatewayApiSources, memo?: GatewayApiMemo): { readonly model: HttpModel; readonly gateways: GatewaysRead } {
  const last = memo?.last && sources.context && sameItems(memo.last.context, sources.context) ? memo.last : undefined;
  const lists = routeLists(sources);
  if (last && sameItems(last.routeLists, lists)) return { model: last.model, gateways: last.gateways };
  const patched = last && patchedModel(last, sources, memo!);
  if (patched) {
    memo!.last = { ...last, routeLists: lists, model: patched };
    return { model: patched, gateways: last.gateways };
  }
  const gatewaysRead = last?.gateways ?? readGateways(sources);
  const cache = last?.routes ?? new WeakMap<KubeObject, RouteWork | null>();
  const excluded: Problem[] = [...gatewaysRead.excluded];
  const attachedCounts = new Map<string, Map<string, number>>();
  const attachedHostnames = new Map<string, Map<string, Set<string>>>();
  const gateways = new Map<string, GatewayOutcome>();
  for (const { key, listeners, ...entry } of gatewaysRead.gateways) {
    const counts = new Map<string, number>(listeners.map((name) => [name, 0]));
    const hostnames = new Map<string, Set<string>>(listeners.map((name) => [name, new Set<string>()]));
    attachedCounts.set(key, counts);
    attachedHostnames.set(key, hostnames);
    gateways.set(key, { ...entry, attachedRoutes: counts, attachedHostnames: hostnames });
  }
  const works: { readonly kind: RouteKind; readonly object: KubeObject; work: RouteWork }[] = [];
  for (const [k, kind] of ROUTE_KINDS.entries()) {
    for (const object of lists[k]!) {
      const work = workOf(kind, object, sources, gatewaysRead, cache, memo);
      if (work !== null) works.push({ kind, object, work });
    }
  }
  const refused = new Set<KubeObject>();
  if (lists.filter((list) => list.length > 0).length > 1) {
    const attached = works.map(({ kind, object, work }) => ({
      kind: kind.kind,
      standing: placeOf(object),
      label: describeObject(kind.kind, object.metadata.namespace, object.metadata.name),
      listeners: work.attachments.flatMap((attachment) => attachment.listeners),
    }));
    const conflicts = kindConflicts(attached);
    attached.forEach((route, i) => {
      const listeners = conflicts.get(route);
      if (listeners === undefined) return;
      const entry = works[i]!;
      refused.add(entry.object);
      entry.work = judgeRoute(entry.kind.kind, entry.object, memo?.reads.get(entry.object) ?? entry.kind.read(entry.object), sources, gatewaysRead, listeners)!;
    });
  }
  const routes = new Map<string, RouteOutcome>();
  for (const { kind, object, work } of works) {
    excluded.push(...work.problems);
    const counted = new Set<ListenerState>();
    for (const { gateway, listeners } of work.attachments) {
      const counts = attachedCounts.get(gateway)!;
      const hostnames = attachedHostnames.get(gateway)!;
      for (const listener of listeners) {
        for (const hostname of listener.hostnames) hostnames.get(listener.state.listener.name)?.add(hostname);
        if (counted.has(listener.state)) continue;
        counted.add(listener.state);
        counts.set(listener.state.listener.name, (counts.get(listener.state.listener.name) ?? 0) + 1);
      }
    }
    routes.set(routeKey(kind.kind, object), work.outcome);
  }
  const model = modelOf(gatewaysRead.classes, gateways, routes, excluded);
  if (memo) memo.last = sources.context ? { context: sources.context, routeLists: lists, gateways: gatewaysRead, refused, routes: cache, model } : undefined;
  return { model, gateways: gatewaysRead };
}

/**
 * Reads the model: the HTTP part (readHttpPart: HTTPRoutes and GRPCRoutes),
 * then the TLSRoutes and TCPRoutes against the same Gateways. The layer-4
 * part is read again whenever the HTTP part or a TLSRoute or TCPRoute list
 * changed (they are few beside HTTPRoutes; each one's read is kept while
 * its object is).
 */
export function readGatewayApi(sources: GatewayApiSources, memo?: GatewayApiMemo): GatewayApiModel {
  const { model: http, gateways } = readHttpPart(sources, memo);
  const backendTls = readBackendTls(sources, memo);
  const key = [http, sources.tlsRoutes, sources.tcpRoutes, backendTls];
  if (memo?.lastL4 && sameItems(memo.lastL4.key, key)) return memo.lastL4.model;
  const judgingKey = sources.context === undefined ? undefined : [...sources.context, sources.tlsRoutes, sources.tcpRoutes];
  let l4 = judgingKey && memo?.lastL4Judging && sameItems(memo.lastL4Judging.key, judgingKey) ? memo.lastL4Judging.judged : undefined;
  if (l4 === undefined) {
    const lists = [
      [KINDS.tlsRoute, sources.tlsRoutes ?? NO_OBJECTS],
      [KINDS.tcpRoute, sources.tcpRoutes ?? NO_OBJECTS],
    ] as const;
    const lookup = { service: sources.service, grants: gateways.grants };
    l4 = judgeL4Routes(lists, { controllerName: sources.controllerName, namespace: sources.namespace, served: gateways.served, lookup }, memo?.l4.forContext(sources.context));
    if (memo && judgingKey) memo.lastL4Judging = { key: judgingKey, judged: l4 };
  }
  const model: GatewayApiModel = {
    classes: http.classes,
    gateways: withL4Counts(http.gateways, l4.counts),
    routes: http.routes,
    get records() {
      return http.records;
    },
    l4Routes: new Map(l4.outcomes.map((outcome) => [routeKey(outcome.kind, outcome.object), outcome])),
    l4: l4.routing,
    excluded: l4.excluded.length === 0 ? http.excluded : [...http.excluded, ...l4.excluded],
    backendTls,
  };
  if (memo) memo.lastL4 = { key, model };
  return model;
}

/** The BackendTLSPolicies read (backend-tls-policy.ts); the last read while the policies and the context are the same. */
function readBackendTls(sources: GatewayApiSources, memo: GatewayApiMemo | undefined): BackendTlsRead {
  const policies = sources.backendTlsPolicies ?? NO_OBJECTS;
  if (policies.length === 0) return NO_BACKEND_TLS;
  const key = sources.context === undefined ? undefined : [policies, ...sources.context];
  if (key && memo?.lastBackendTls && sameItems(memo.lastBackendTls.key, key)) return memo.lastBackendTls.read;
  const read = readBackendTlsPolicies(policies, { service: sources.service, configMap: sources.configMap ?? (() => undefined) });
  if (memo) memo.lastBackendTls = key && { key, read };
  return read;
}
