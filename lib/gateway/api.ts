/**
 * Names the Gateway API (v1, standard channel) fixes: its group, the kinds
 * this controller reads, and the controller name a GatewayClass must carry
 * for this controller to take it (configurable; this is the default).
 */

import { DEFAULT_GATEWAY_CONTROLLER_NAME } from '../config/load.ts';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export const DEFAULT_CONTROLLER_NAME = DEFAULT_GATEWAY_CONTROLLER_NAME;

export const KINDS = {
  gatewayClass: 'GatewayClass',
  gateway: 'Gateway',
  httpRoute: 'HTTPRoute',
  grpcRoute: 'GRPCRoute',
  tlsRoute: 'TLSRoute',
  tcpRoute: 'TCPRoute',
  referenceGrant: 'ReferenceGrant',
  listenerSet: 'ListenerSet',
  backendTlsPolicy: 'BackendTLSPolicy',
} as const;

/** Group and kind of a reference; the core group is ''. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export const SERVICE: GroupKind = { group: '', kind: 'Service' };
export const SECRET: GroupKind = { group: '', kind: 'Secret' };
export const GATEWAY: GroupKind = { group: GATEWAY_GROUP, kind: KINDS.gateway };
export const LISTENER_SET: GroupKind = { group: GATEWAY_GROUP, kind: KINDS.listenerSet };

export function sameGroupKind(a: GroupKind, b: GroupKind): boolean {
  return a.group === b.group && a.kind === b.kind;
}

/** "Kind" for the core group, "group/Kind" otherwise: how messages name a kind. */
export function groupKindText(groupKind: GroupKind): string {
  return groupKind.group === '' ? groupKind.kind : `${groupKind.group}/${groupKind.kind}`;
}
