import type { WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { GATEWAY_GROUP, KINDS } from './api.ts';
import type { GatewayApiSources } from './gateway-api.ts';

/** True when the configuration watches a kind of the Gateway API group. */
export function watchesGatewayApi(resources: readonly WatchedResource[]): boolean {
  return resources.some((resource) => resource.apiVersion.startsWith(`${GATEWAY_GROUP}/`));
}

/**
 * The Gateway API sources from the watched stores, found by group and kind
 * whatever the configuration names them: the Gateway API kinds in the
 * gateway.networking.k8s.io group, Services, Secrets and Namespaces in
 * the core group. A kind not watched reads as none (a Namespace selector
 * then admits no namespace).
 */
export function storeSources(stores: ReadonlyMap<string, StoreReader>, resources: readonly WatchedResource[], controllerName: string): GatewayApiSources {
  const store = (group: string, kind: string): StoreReader | undefined => {
    const resource = resources.find((candidate) => candidate.kind === kind && (group === '' ? !candidate.apiVersion.includes('/') : candidate.apiVersion.startsWith(`${group}/`)));
    return resource && stores.get(resource.name);
  };
  const list = (kind: string) => store(GATEWAY_GROUP, kind)?.list() ?? [];
  const find =
    (kind: string) =>
    (namespace: string, name: string): KubeObject | undefined =>
      store('', kind)?.get(namespace, name);
  return {
    controllerName,
    gatewayClasses: list(KINDS.gatewayClass),
    gateways: list(KINDS.gateway),
    httpRoutes: list(KINDS.httpRoute),
    referenceGrants: list(KINDS.referenceGrant),
    service: find('Service'),
    secret: find('Secret'),
    namespace: (name) => store('', 'Namespace')?.get(undefined, name),
  };
}
