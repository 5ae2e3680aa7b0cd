import { matchesLabels } from '../kube-syntax/label-selector.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { GATEWAY, GATEWAY_GROUP, KINDS, LISTENER_SET, sameGroupKind } from './api.ts';
import type { Gateway } from './gateway.ts';
import { hostnamesOn } from './hostnames.ts';
import type { ParentRef, RouteBase } from './http-route.ts';
import type { ListenerState } from './listeners.ts';

/**
 * Which listeners of its Gateways a route attaches to, per parentRef
 * (apis/v1/shared_types.go ParentReference): the listeners the ref selects
 * by sectionName and port, those of them whose allowedRoutes admit the
 * route's kind and namespace, and of those the ones whose hostname shares
 * one with the route's. The first step that leaves none is the reason the
 * route is not accepted there.
 */

export interface AttachedListener {
  readonly state: ListenerState;
  /** The hostnames the route is served for on this listener ('*': any). */
  readonly hostnames: readonly string[];
}

export type Acceptance =
  | { readonly accepted: true; readonly listeners: readonly AttachedListener[] }
  | { readonly accepted: false; readonly reason: 'NoMatchingParent' | 'NotAllowedByListeners' | 'NoMatchingListenerHostname' | 'UnsupportedValue'; readonly message: string };

/** A route's standing with one of its parentRefs to a served Gateway. */
export interface ParentOutcome {
  readonly parent: ParentRef;
  readonly acceptance: Acceptance;
}

/** Whether a route's status carries an entry of this controller's: it named a served Gateway once, and its entries are to be removed. */
export function carriesEntryOf(route: KubeObject, controllerName: string): boolean {
  const parents = (route['status'] as { parents?: unknown } | undefined)?.parents;
  return Array.isArray(parents) && parents.some((entry) => (entry as { controllerName?: unknown } | null)?.controllerName === controllerName);
}

/** A Gateway of this controller, with its listeners judged. */
export interface ServedGateway {
  readonly gateway: Gateway;
  readonly listeners: readonly ListenerState[];
}

/** How the model keys a ListenerSet, beside the Gateways by namespace/name (apart from them: a Gateway and a ListenerSet may share a name). */
export const listenerSetKey = (namespace: string, name: string) => `${KINDS.listenerSet} ${namespace}/${name}`;

/** The key of a served Gateway or ListenerSet in the model. */
export const servedKey = ({ gateway }: ServedGateway) =>
  gateway.groupKind.kind === KINDS.listenerSet ? listenerSetKey(gateway.namespace, gateway.name) : `${gateway.namespace}/${gateway.name}`;

/**
 * The served Gateway or ListenerSet a parentRef names, if any: refs to
 * other kinds or other controllers' Gateways are not this controller's to
 * answer. A Gateway's listeners are its own: a route naming it attaches
 * to none of its ListenerSets' (conformance ListenerSetHTTPRouting).
 */
export function gatewayOf(parent: ParentRef, gateways: ReadonlyMap<string, ServedGateway>): ServedGateway | undefined {
  if (sameGroupKind(parent, GATEWAY)) return gateways.get(`${parent.namespace}/${parent.name}`);
  if (sameGroupKind(parent, LISTENER_SET)) return gateways.get(listenerSetKey(parent.namespace, parent.name));
  return undefined;
}

/** What attaching reads of a route of any kind. */
export type AttachingRoute = Pick<RouteBase, 'kind' | 'namespace' | 'hostnames'>;

function admits(state: ListenerState, gateway: Gateway, route: AttachingRoute, namespace: (name: string) => KubeObject | undefined): boolean {
  if (!state.listener.kinds.some((kind) => sameGroupKind(kind, { group: GATEWAY_GROUP, kind: route.kind }))) return false;
  const { from, selector } = state.listener.namespaces;
  if (from === 'All') return true;
  if (from === 'Same') return route.namespace === gateway.namespace;
  if (from === 'Selector' && selector) return matchesLabels(selector, namespace(route.namespace)?.metadata.labels);
  return false;
}

export function attach(route: AttachingRoute, parent: ParentRef, served: ServedGateway, namespace: (name: string) => KubeObject | undefined): Acceptance {
  const selected = served.listeners.filter(
    (state) => (parent.sectionName === undefined || state.listener.name === parent.sectionName) && (parent.port === undefined || state.listener.port === parent.port),
  );
  const which = [parent.sectionName && `sectionName ${parent.sectionName}`, parent.port && `port ${parent.port}`].filter(Boolean).join(' and ');
  if (selected.length === 0) return { accepted: false, reason: 'NoMatchingParent', message: `${served.gateway.label} has no listener with ${which}` };
  const allowed = selected.filter((state) => state.serving && admits(state, served.gateway, route, namespace));
  if (allowed.length === 0) {
    const listeners = `listener of ${served.gateway.label}${which ? ` with ${which}` : ''}`;
    // A listener that is not served (its port, protocol or certificates refused) admits nothing: its own conditions say why.
    const message = selected.some((state) => state.serving)
      ? `no ${listeners} admits ${route.kind}s from namespace ${route.namespace}`
      : `no ${listeners} is served: see the Gateway's listener conditions`;
    return { accepted: false, reason: 'NotAllowedByListeners', message };
  }
  const listeners = allowed.flatMap((state) => {
    const hostnames = hostnamesOn(state.listener.hostname, route.hostnames);
    return hostnames.length === 0 ? [] : [{ state, hostnames }];
  });
  if (listeners.length === 0) {
    return { accepted: false, reason: 'NoMatchingListenerHostname', message: `no hostname of the route matches a listener hostname of ${served.gateway.label}` };
  }
  return { accepted: true, listeners };
}
