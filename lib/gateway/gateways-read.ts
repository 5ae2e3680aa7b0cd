import { matchesLabels } from '../kube-syntax/label-selector.ts';
import { describeObject } from '../object-fields/names.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { compareStanding } from '../routing/precedence.ts';
import { placeOf } from '../routing/order.ts';
import type { RouteEntrypoint } from '../routing/route.ts';
import { KINDS } from './api.ts';
import { listenerSetKey, type ServedGateway } from './attachment.ts';
import { listenerSetParent, readGateway, readListenerSet, type Gateway, type GatewayRead } from './gateway.ts';
import { readGatewayClasses, type GatewayClassRead } from './gateway-class.ts';
import { resolveListeners, type EarlierListener, type Frontend, type ListenerLookup } from './listeners.ts';
import { readReferenceGrants } from './reference-grants.ts';
import { objectKey } from '../pipeline/object-key.ts';

/**
 * The Gateway side of the Gateway API model (gateway-api.ts): this
 * controller's GatewayClasses, the ReferenceGrants, and the Gateways of
 * those classes with each listener judged. Every route kind is judged
 * against what this reads.
 */

/** What the Gateways are read from. */
export interface GatewaySources {
  /** spec.controllerName of the GatewayClasses this controller takes. */
  readonly controllerName: string;
  readonly gatewayClasses: readonly KubeObject[];
  readonly gateways: readonly KubeObject[];
  /** ListenerSets (none when their CRD is not served). */
  readonly listenerSets?: readonly KubeObject[];
  /** Namespaces, for allowedListeners selectors; none admits no namespace by a selector. */
  readonly namespace?: (name: string) => KubeObject | undefined;
  readonly referenceGrants: readonly KubeObject[];
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  /** ConfigMaps holding CA certificates (caCertificateRefs); none when not watched. */
  readonly configMap?: (namespace: string, name: string) => KubeObject | undefined;
  /** The frontends the template declares; undefined admits every listener port. */
  readonly frontends?: readonly Frontend[];
}

/** namespace/name: how the model keys Gateways, and routes of the first kind (gateway-api.ts routeKey). */
export const keyOf = (object: { readonly metadata: { readonly namespace?: string; readonly name: string } }) => objectKey(object.metadata.namespace, object.metadata.name);

/** Why a ListenerSet adds no listener to its Gateway (apis/v1/listenerset_types.go ListenerSetConditionReason). */
export interface ListenerSetRefusal {
  readonly reason: 'NotAllowed' | 'ParentNotAccepted';
  readonly message: string;
}

/** A Gateway or ListenerSet of this controller's, served or left out with its problems. */
export interface GatewayEntry {
  /** keyOf for a Gateway, listenerSetKey for a ListenerSet. */
  readonly key: string;
  readonly object: KubeObject;
  readonly served: ServedGateway | undefined;
  readonly problems: readonly Problem[];
  readonly listeners: readonly string[];
  /** A ListenerSet's: the key of its Gateway, and why it is refused there, if it is. */
  readonly listenerSet?: { readonly parent: string; readonly refusal: ListenerSetRefusal | undefined };
  /** A Gateway's: the ListenerSets accepted on it (status attachedListenerSets). */
  readonly attachedListenerSets?: number;
  /** A Gateway's: some HTTPS listener of its own or of its ListenerSets falls back to no client certificate (condition InsecureFrontendValidationMode). */
  readonly insecureFallback?: boolean;
}

/** The GatewayClasses, grants and Gateways, judged: everything a route is judged against. */
export interface GatewaysRead {
  readonly classes: ReadonlyMap<string, GatewayClassRead>;
  readonly grants: ReturnType<typeof readReferenceGrants>;
  readonly excluded: readonly Problem[];
  readonly served: ReadonlyMap<string, ServedGateway>;
  /** The protocols of every listener served: a route on listeners of one of them alone is kept from the other's requests. */
  readonly protocols: ReadonlySet<RouteEntrypoint['protocol']>;
  readonly gateways: readonly GatewayEntry[];
}

/** The GatewayClasses and grants read, and the Gateways of this controller's classes and their ListenerSets with their listeners judged against the frontends. */
export function readGateways(sources: GatewaySources): GatewaysRead {
  const classes = readGatewayClasses(sources.gatewayClasses, sources.controllerName);
  const grants = readReferenceGrants(sources.referenceGrants);
  const excluded: Problem[] = [...grants.problems];
  const served = new Map<string, ServedGateway>();
  const protocols = new Set<RouteEntrypoint['protocol']>();
  const gateways: GatewayEntry[] = [];
  const lookup: ListenerLookup = { secret: sources.secret, ...(sources.configMap ? { configMap: sources.configMap } : {}), grants, frontends: sources.frontends };
  const serve = (key: string, read: GatewayRead, earlier?: readonly EarlierListener[]) => {
    const servedGateway = { gateway: read.gateway!, listeners: resolveListeners(read.gateway!, lookup, earlier) };
    served.set(key, servedGateway);
    for (const state of servedGateway.listeners) {
      const { protocol } = state.listener;
      if (state.serving && (protocol === 'HTTP' || protocol === 'HTTPS')) protocols.add(protocol);
      for (const fault of state.faults) excluded.push({ object: read.label, field: `spec.listeners[${state.listener.index}]`, message: `${fault.reason}: ${fault.message}` });
    }
    return servedGateway;
  };
  const ours = new Map<string, { readonly entry: number; readonly gateway: Gateway | undefined }>();
  for (const object of sources.gateways) {
    const className = (object['spec'] as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    const gatewayClass = typeof className === 'string' ? classes.get(className) : undefined;
    if (gatewayClass === undefined) continue;
    const read = readGateway(object);
    const refusal = gatewayClass.refusal && {
      object: read.label,
      field: 'spec.gatewayClassName',
      message: `GatewayClass ${gatewayClass.name} is not accepted: ${gatewayClass.refusal.message}`,
    };
    const problems = refusal ? [...read.problems, refusal] : read.problems;
    excluded.push(...problems);
    const servedGateway = read.gateway && gatewayClass.refusal === undefined ? serve(keyOf(object), read) : undefined;
    ours.set(keyOf(object), { entry: gateways.length, gateway: servedGateway?.gateway });
    gateways.push({ key: keyOf(object), object, served: servedGateway, problems, listeners: (read.gateway?.listeners ?? []).map((listener) => listener.name) });
  }
  readListenerSets(sources, ours, gateways, served, serve, excluded);
  return { classes, grants, excluded, served, protocols, gateways };
}

/** Whether a Gateway's spec.allowedListeners admits ListenerSets of `namespace`. */
function allowsListenersOf(gateway: Gateway, namespace: string, namespaceOf: GatewaySources['namespace']): boolean {
  const { from, selector } = gateway.allowedListeners;
  if (from === 'All') return true;
  if (from === 'Same') return namespace === gateway.namespace;
  if (from === 'Selector' && selector) return matchesLabels(selector, namespaceOf?.(namespace)?.metadata.labels);
  return false;
}

/**
 * The ListenerSets of the Gateways in `ours`, each judged after its
 * Gateway's listeners and those of the ListenerSets before it (oldest
 * first, then by namespace/name), so a conflict is the later listener's.
 * One its Gateway does not admit, or whose Gateway is not served, adds
 * nothing and says why.
 */
function readListenerSets(
  sources: GatewaySources,
  ours: ReadonlyMap<string, { readonly entry: number; readonly gateway: Gateway | undefined }>,
  gateways: GatewayEntry[],
  served: ReadonlyMap<string, ServedGateway>,
  serve: (key: string, read: GatewayRead, earlier: readonly EarlierListener[]) => ServedGateway,
  excluded: Problem[],
): void {
  const sets = (sources.listenerSets ?? []).flatMap((object) => {
    const parent = listenerSetParent(object);
    const gateway = parent && ours.get(`${parent.namespace}/${parent.name}`);
    return gateway ? [{ object, parent: `${parent.namespace}/${parent.name}`, gateway }] : [];
  });
  sets.sort((a, b) => compareStanding(placeOf(a.object), placeOf(b.object)));
  const earlier = new Map<string, EarlierListener[]>();
  const attached = new Map<string, number>();
  const fallingBack = new Set<string>();
  for (const { object, parent, gateway } of sets) {
    const key = listenerSetKey(String(object.metadata.namespace), object.metadata.name);
    const namespace = String(object.metadata.namespace);
    let refusal: ListenerSetRefusal | undefined;
    if (gateway.gateway === undefined) refusal = { reason: 'ParentNotAccepted', message: `Gateway ${parent} is not accepted` };
    else if (!allowsListenersOf(gateway.gateway, namespace, sources.namespace))
      refusal = { reason: 'NotAllowed', message: `Gateway ${parent} does not allow ListenerSets of namespace ${namespace} (spec.allowedListeners)` };
    const read = gateway.gateway && refusal === undefined ? readListenerSet(object, gateway.gateway) : undefined;
    excluded.push(...(read?.problems ?? []));
    if (refusal) excluded.push({ object: describeObject(KINDS.listenerSet, namespace, object.metadata.name), field: 'spec.parentRef', message: `${refusal.reason}: ${refusal.message}` });
    let servedSet: ServedGateway | undefined;
    if (read?.gateway) {
      let before = earlier.get(parent);
      if (before === undefined) {
        const own = served.get(parent)!;
        before = own.listeners.filter((state) => state.conflict === undefined).map((state) => ({ listener: state.listener, label: own.gateway.label }));
        earlier.set(parent, before);
      }
      servedSet = serve(key, read, before);
      for (const state of servedSet.listeners) if (state.conflict === undefined) before.push({ listener: state.listener, label: read.label });
      if (servedSet.listeners.some((state) => state.serving)) attached.set(parent, (attached.get(parent) ?? 0) + 1);
      if (read.gateway.insecureFallback) fallingBack.add(parent);
    }
    gateways.push({
      key,
      object,
      served: servedSet,
      problems: read?.problems ?? [],
      listeners: (read?.gateway?.listeners ?? []).map((listener) => listener.name),
      listenerSet: { parent, refusal },
    });
  }
  for (const { entry } of ours.values()) {
    const gateway = gateways[entry]!;
    if (gateway.served)
      gateways[entry] = { ...gateway, attachedListenerSets: attached.get(gateway.key) ?? 0, insecureFallback: gateway.served.gateway.insecureFallback || fallingBack.has(gateway.key) };
  }
}
