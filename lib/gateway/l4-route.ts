import { sameItems } from '../collections/sorted-list.ts';
import { isFields } from '../object-fields/fields.ts';
import { CATCH_ALL_HOST } from '../routing/route.ts';
import type { L4Certificate, L4Listener, L4Mode, L4Route, L4Routing } from '../routing/l4-route.ts';
import { inL4PrecedenceOrder } from '../routing/precedence.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { KINDS } from './api.ts';
import { attach, carriesEntryOf, gatewayOf, servedKey, type Acceptance, type AttachedListener, type ParentOutcome, type ServedGateway } from './attachment.ts';
import { readBackendReference, resolveBackend, type BackendLookup, type BackendReference, type Unresolved } from './backend-refs.ts';
import { absent } from './field-reader.ts';
import { readRouteHead, type ParentRef, type RouteBase } from './http-route.ts';
import { isL4Protocol, type ListenerState } from './listeners.ts';

/**
 * Reading and translating TLSRoutes and TCPRoutes (apis/v1/tlsroute_types.go,
 * apis/v1/tcproute_types.go): parentRefs, SNI hostnames (TLSRoute) and the
 * one rule's weighted backendRefs, each value checked for where it lands;
 * then, on the listeners a route attached to, the layer-4 routes of
 * lib/routing/l4-route.ts. As for HTTPRoutes (http-route.ts), a fault
 * leaves the whole route out, named; a backendRef that does not resolve
 * leaves it served, its share of the connections refused.
 */

/** A TLSRoute or TCPRoute read; `hostnames` are SNI names (a TCPRoute has none). */
export interface L4RouteSpec extends RouteBase {
  readonly backends: readonly { readonly reference: BackendReference; readonly weight: number }[];
}

export interface L4RouteRead {
  readonly label: string;
  readonly parents: readonly ParentRef[];
  /** Undefined when a problem leaves the route out. */
  readonly route: L4RouteSpec | undefined;
  readonly problems: readonly Problem[];
}

export function readL4Route(object: KubeObject, kind: string): L4RouteRead {
  const { reader, ownNamespace, spec, parents, base } = readRouteHead(object, kind);
  if (!absent(spec['hostnames']) && kind !== KINDS.tlsRoute) reader.problem('spec.hostnames', `a ${kind} has no hostnames`);
  // The CRDs allow exactly one rule.
  const rules = reader.list(spec['rules'], 'spec.rules');
  if (rules.length !== 1) reader.problem('spec.rules', `holds ${rules.length} rules: a ${kind} has exactly one`);
  const backends: { reference: BackendReference; weight: number }[] = [];
  const rule = rules[0];
  if (rule !== undefined && !isFields(rule)) reader.problem('spec.rules[0]', 'is not an object');
  const listed = isFields(rule) ? reader.list(rule['backendRefs'], 'spec.rules[0].backendRefs') : [];
  listed.forEach((entry, index) => {
    const at = `spec.rules[0].backendRefs[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const reference = readBackendReference(reader, entry, at, ownNamespace);
    const weight = absent(entry['weight']) ? 1 : reader.integer(entry['weight'], `${at}.weight`, 0, 1_000_000);
    if (reference && weight !== undefined) backends.push({ reference, weight });
  });
  const label = reader.label;
  if (reader.problems.length > 0) return { label, parents, route: undefined, problems: reader.problems };
  return { label, parents, route: { ...base(), backends }, problems: [] };
}

function modeOf(state: ListenerState): L4Mode {
  if (state.listener.protocol === 'TCP') return 'tcp';
  return state.listener.tlsMode === 'Passthrough' ? 'tls-passthrough' : 'tls-terminate';
}

export interface TranslatedL4Route {
  readonly records: readonly L4Route[];
  readonly unresolved: readonly Unresolved[];
}

/** The route's layer-4 routes on the listeners it attached to: one per listener port and, for a TLSRoute, SNI name. */
export function translateL4Route(route: L4RouteSpec, attached: readonly AttachedListener[], lookup: BackendLookup): TranslatedL4Route {
  const unresolved: Unresolved[] = [];
  const backends = route.backends.map(({ reference, weight }) => {
    const fault = resolveBackend(reference, route, lookup);
    if (fault) unresolved.push(fault);
    return { namespace: reference.namespace, service: reference.name, port: reference.port ?? 0, weight, ...(fault ? { refused: fault.message } : {}) };
  });
  const records = new Map<string, L4Route>();
  const origin = { kind: route.kind, namespace: route.namespace, name: route.name, age: route.age, rule: 0, match: 0, field: 'spec.rules[0]' };
  for (const { state, hostnames } of attached) {
    const mode = modeOf(state);
    const port = state.listener.port;
    const names = mode === 'tcp' ? [undefined] : hostnames.map((hostname) => (hostname === '*' ? CATCH_ALL_HOST : hostname));
    for (const sni of names) records.set(`${port}/${sni ?? ''}`, { port, mode, sni, backends, origin });
  }
  return { records: [...records.values()], unresolved };
}

/** The layer-4 listeners of the served Gateways: each gets its frontend, whether routes attach to it or not (a route to come is then a map change). */
export function l4Listeners(gateways: Iterable<ServedGateway>): L4Listener[] {
  const listeners: L4Listener[] = [];
  for (const { gateway, listeners: states } of gateways) {
    for (const state of states) {
      const { listener } = state;
      if (!state.serving || !isL4Protocol(listener.protocol)) continue;
      const mode = modeOf(state);
      const certificates: L4Certificate[] =
        mode === 'tls-terminate' ? listener.certificateRefs.map((ref) => ({ namespace: ref.namespace, name: ref.name, object: gateway.label, field: ref.field })) : [];
      listeners.push({ port: listener.port, mode, certificates, object: gateway.label, field: `spec.listeners[${listener.index}]` });
    }
  }
  return listeners;
}

/** What a TLSRoute or TCPRoute is judged against. */
export interface L4Judging {
  readonly controllerName: string;
  readonly namespace: (name: string) => KubeObject | undefined;
  readonly served: ReadonlyMap<string, ServedGateway>;
  readonly lookup: BackendLookup;
}

/** A TLSRoute's or TCPRoute's standing with its parents, and the layer-4 routes it is served as. */
export interface L4RouteOutcome {
  readonly object: KubeObject;
  /** KINDS.tlsRoute or KINDS.tcpRoute. */
  readonly kind: string;
  readonly parents: readonly ParentOutcome[];
  readonly unresolved: readonly Unresolved[];
  readonly records: readonly L4Route[];
}

/** A route judged: its outcome, and the listeners it attached to (Gateway namespace/name, listener name), each once. */
export interface L4Judged {
  readonly outcome: L4RouteOutcome;
  readonly attachedTo: readonly (readonly [gateway: string, listener: string])[];
}

/** The route's outcome against the served Gateways; undefined for a route that is not this controller's. */
export function judgeL4Route(object: KubeObject, kind: string, read: L4RouteRead, { controllerName, namespace, served, lookup }: L4Judging): L4Judged | undefined {
  const ours = read.parents.flatMap((parent) => {
    const gateway = gatewayOf(parent, served);
    return gateway ? [{ parent, gateway }] : [];
  });
  if (ours.length === 0) return carriesEntryOf(object, controllerName) ? { outcome: { object, kind, parents: [], unresolved: [], records: [] }, attachedTo: [] } : undefined;
  const route = read.route;
  const parents: ParentOutcome[] = [];
  const attached: AttachedListener[] = [];
  const attachedTo: (readonly [string, string])[] = [];
  for (const { parent, gateway } of ours) {
    const acceptance: Acceptance = route
      ? attach(route, parent, gateway, namespace)
      : { accepted: false, reason: 'UnsupportedValue', message: read.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ') };
    parents.push({ parent, acceptance });
    if (!acceptance.accepted) continue;
    for (const listener of acceptance.listeners) {
      if (attached.some((known) => known.state === listener.state)) continue;
      attached.push(listener);
      attachedTo.push([servedKey(gateway), listener.state.listener.name]);
    }
  }
  const translated = route ? translateL4Route(route, attached, lookup) : { records: [], unresolved: [] };
  return { outcome: { object, kind, parents, unresolved: translated.unresolved, records: translated.records }, attachedTo };
}

/** The TLSRoutes and TCPRoutes judged: their outcomes, the layer-4 routing they give, and what was left out. */
export interface L4Part {
  readonly outcomes: readonly L4RouteOutcome[];
  readonly routing: L4Routing;
  /** Routes attached, by Gateway (namespace/name), then listener name. */
  readonly counts: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly excluded: readonly Problem[];
}

/** What one judging keeps for the next: each route's read (a function of its object alone), and, while the judging's inputs are the same, its judging (null: not this controller's). */
export interface L4JudgingMemo {
  readonly reads: WeakMap<KubeObject, L4RouteRead>;
  readonly judged: WeakMap<KubeObject, L4Judged | null>;
}

/** The memo judgings share: the reads for as long as their objects live, the judged routes while the context (the stores judging reads, and their versions) is the same. */
export class L4JudgingCache {
  readonly #reads = new WeakMap<KubeObject, L4RouteRead>();
  #judged: { readonly context: readonly unknown[]; readonly judged: WeakMap<KubeObject, L4Judged | null> } | undefined;

  /** The memo for a judging in `context`; without one, nothing judged is kept. */
  forContext(context: readonly unknown[] | undefined): L4JudgingMemo {
    if (context === undefined) return { reads: this.#reads, judged: new WeakMap() };
    if (this.#judged === undefined || !sameItems(this.#judged.context, context)) this.#judged = { context, judged: new WeakMap() };
    return { reads: this.#reads, judged: this.#judged.judged };
  }
}

/** Every route of `lists` (each a kind, KINDS.tlsRoute or KINDS.tcpRoute, and its objects) judged; a route `memo` holds is not judged again. */
export function judgeL4Routes(lists: readonly (readonly [string, readonly KubeObject[]])[], judging: L4Judging, memo?: L4JudgingMemo): L4Part {
  const outcomes: L4RouteOutcome[] = [];
  const excluded: Problem[] = [];
  const counts = new Map<string, Map<string, number>>();
  for (const [kind, objects] of lists) {
    for (const object of objects) {
      let read = memo?.reads.get(object);
      if (read === undefined) {
        read = readL4Route(object, kind);
        memo?.reads.set(object, read);
      }
      let judged = memo?.judged.get(object);
      if (judged === undefined) {
        judged = judgeL4Route(object, kind, read, judging) ?? null;
        memo?.judged.set(object, judged);
      }
      if (judged === null) continue;
      for (const [gateway, listener] of judged.attachedTo) {
        const byListener = counts.get(gateway) ?? new Map<string, number>();
        counts.set(gateway, byListener);
        byListener.set(listener, (byListener.get(listener) ?? 0) + 1);
      }
      excluded.push(...read.problems);
      outcomes.push(judged.outcome);
    }
  }
  const routing = { listeners: l4Listeners(judging.served.values()), routes: inL4PrecedenceOrder(outcomes.flatMap((outcome) => outcome.records)) };
  return { outcomes, routing, counts, excluded };
}

/** The Gateways' outcomes with the layer-4 routes counted on their listeners (layer-4 listeners admit no HTTPRoute or GRPCRoute, so no route is counted twice). */
export function withL4Counts<T extends { readonly attachedRoutes: ReadonlyMap<string, number> }>(
  gateways: ReadonlyMap<string, T>,
  counts: ReadonlyMap<string, ReadonlyMap<string, number>>,
): ReadonlyMap<string, T> {
  if (counts.size === 0) return gateways;
  const merged = new Map(gateways);
  for (const [key, byListener] of counts) {
    const outcome = gateways.get(key);
    if (outcome === undefined) continue;
    const attachedRoutes = new Map(outcome.attachedRoutes);
    for (const [listener, count] of byListener) attachedRoutes.set(listener, (attachedRoutes.get(listener) ?? 0) + count);
    merged.set(key, { ...outcome, attachedRoutes });
  }
  return merged;
}
