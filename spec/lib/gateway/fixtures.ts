import { DEFAULT_CONTROLLER_NAME, GATEWAY_GROUP } from '../../../lib/gateway/api.ts';
import type { GatewayApiSources } from '../../../lib/gateway/gateway-api.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

/** Gateway API objects as the API server returns them, for specs. */

const API_VERSION = `${GATEWAY_GROUP}/v1`;

export function gatewayClass(name = 'haproxy', controllerName = DEFAULT_CONTROLLER_NAME, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: API_VERSION, kind: 'GatewayClass', metadata: { name, generation: 1 }, spec: { controllerName, ...spec } };
}

export function gateway(name: string, listeners: readonly Record<string, unknown>[], namespace = 'infra', className = 'haproxy'): KubeObject {
  return { apiVersion: API_VERSION, kind: 'Gateway', metadata: { namespace, name, generation: 1 }, spec: { gatewayClassName: className, listeners } };
}

/** A ListenerSet adding `listeners` to Gateway `parent` (in the ListenerSet's namespace unless named `ns/name`). */
export function listenerSet(name: string, parent: string, listeners: readonly Record<string, unknown>[], namespace = 'infra', created = '2026-01-01T00:00:00Z'): KubeObject {
  const [parentNamespace, parentName] = parent.includes('/') ? parent.split('/') : [undefined, parent];
  const parentRef = { group: GATEWAY_GROUP, kind: 'Gateway', name: parentName, ...(parentNamespace ? { namespace: parentNamespace } : {}) };
  return { apiVersion: API_VERSION, kind: 'ListenerSet', metadata: { namespace, name, generation: 1, creationTimestamp: created }, spec: { parentRef, listeners } };
}

export const httpListener = (name = 'http', extra: Record<string, unknown> = {}) => ({ name, port: 80, protocol: 'HTTP', ...extra });

export function httpRoute(name: string, spec: Record<string, unknown>, namespace = 'infra', created = '2026-01-01T00:00:00Z'): KubeObject {
  return { apiVersion: API_VERSION, kind: 'HTTPRoute', metadata: { namespace, name, generation: 1, creationTimestamp: created }, spec };
}

export function grpcRoute(name: string, spec: Record<string, unknown>, namespace = 'infra', created = '2026-01-01T00:00:00Z'): KubeObject {
  return { apiVersion: API_VERSION, kind: 'GRPCRoute', metadata: { namespace, name, generation: 1, creationTimestamp: created }, spec };
}

/** A TLSRoute or TCPRoute. */
export function l4Route(kind: 'TLSRoute' | 'TCPRoute', name: string, spec: Record<string, unknown>, namespace = 'infra', created = '2026-01-01T00:00:00Z'): KubeObject {
  return { apiVersion: API_VERSION, kind, metadata: { namespace, name, generation: 1, creationTimestamp: created }, spec };
}

export function referenceGrant(namespace: string, from: Record<string, unknown>[], to: Record<string, unknown>[], name = 'grant'): KubeObject {
  return { apiVersion: `${GATEWAY_GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { namespace, name }, spec: { from, to } };
}

export function service(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace, name }, spec: { ports: [{ port: 8080 }] } };
}

export function tlsSecret(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' } };
}

/** A ConfigMap with a CA certificate under ca.crt (any PEM block: the Gateway API reader checks no more). */
export function caConfigMap(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name }, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' } };
}

export function namespaceObject(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/** Sources over plain lists, every other input empty. */
export function sources(objects: {
  readonly classes?: readonly KubeObject[];
  readonly gateways?: readonly KubeObject[];
  readonly listenerSets?: readonly KubeObject[];
  readonly routes?: readonly KubeObject[];
  readonly grpcRoutes?: readonly KubeObject[];
  readonly tlsRoutes?: readonly KubeObject[];
  readonly tcpRoutes?: readonly KubeObject[];
  readonly grants?: readonly KubeObject[];
  readonly services?: readonly KubeObject[];
  readonly secrets?: readonly KubeObject[];
  readonly namespaces?: readonly KubeObject[];
  readonly configMaps?: readonly KubeObject[];
}): GatewayApiSources {
  const find = (list: readonly KubeObject[] | undefined) => (namespace: string, name: string) =>
    list?.find((object) => object.metadata.namespace === namespace && object.metadata.name === name);
  return {
    controllerName: DEFAULT_CONTROLLER_NAME,
    gatewayClasses: objects.classes ?? [gatewayClass()],
    gateways: objects.gateways ?? [],
    listenerSets: objects.listenerSets ?? [],
    httpRoutes: objects.routes ?? [],
    ...(objects.grpcRoutes ? { grpcRoutes: objects.grpcRoutes } : {}),
    tlsRoutes: objects.tlsRoutes ?? [],
    tcpRoutes: objects.tcpRoutes ?? [],
    referenceGrants: objects.grants ?? [],
    service: find(objects.services),
    secret: find(objects.secrets),
    configMap: find(objects.configMaps),
    namespace: (name) => objects.namespaces?.find((object) => object.metadata.name === name),
  };
}

/** A rule sending everything to one Service port. */
export function toService(name: string, extra: Record<string, unknown> = {}, port = 8080) {
  return { backendRefs: [{ name, port }], ...extra };
}
