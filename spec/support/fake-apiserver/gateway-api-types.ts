/**
 * The Gateway API kinds as their CustomResourceDefinitions serve them
 * (kubernetes-sigs/gateway-api config/crd/standard/
 * gateway.networking.k8s.io_{gatewayclasses,gateways,listenersets,httproutes,grpcroutes,referencegrants}.yaml):
 * GatewayClass cluster-scoped, the others namespaced; GatewayClass, Gateway
 * and HTTPRoute with a status subresource (`subresources: status: {}`),
 * ReferenceGrant without one (`subresources: {}`); the CRDs' short names.
 * Each CRD but GRPCRoute's serves v1 and v1beta1 from one storage: v1 for
 * all but ReferenceGrant, stored at v1beta1 (`storage: true` in each file),
 * with no conversion webhook, so the versions differ by apiVersion only;
 * GRPCRoute's and ListenerSet's serve v1 alone, with a status subresource.
 */
import type { ResourceTypeDefinition } from './resource-types.ts';

const group = 'gateway.networking.k8s.io';

const kinds: readonly (Omit<ResourceTypeDefinition, 'group' | 'version'> & { readonly storageVersion: string })[] = [
  { kind: 'GatewayClass', plural: 'gatewayclasses', namespaced: false, statusSubresource: true, shortNames: ['gc'], storageVersion: 'v1' },
  { kind: 'Gateway', plural: 'gateways', namespaced: true, statusSubresource: true, shortNames: ['gtw'], storageVersion: 'v1' },
  { kind: 'ListenerSet', plural: 'listenersets', namespaced: true, statusSubresource: true, shortNames: ['lset'], storageVersion: 'v1' },
  { kind: 'HTTPRoute', plural: 'httproutes', namespaced: true, statusSubresource: true, storageVersion: 'v1' },
  { kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true, statusSubresource: true, storageVersion: 'v1' },
  { kind: 'ReferenceGrant', plural: 'referencegrants', namespaced: true, shortNames: ['refgrant'], storageVersion: 'v1beta1' },
];

/** The kinds whose CRD serves v1 alone. */
const V1_ALONE: ReadonlySet<string> = new Set(['GRPCRoute', 'ListenerSet']);

/** v1 first: discovery's preferred version of the group is the first it lists. */
export const GATEWAY_API_TYPES: readonly ResourceTypeDefinition[] = ['v1', 'v1beta1'].flatMap((version) =>
  kinds.filter((kind) => version === 'v1' || !V1_ALONE.has(kind.kind)).map((kind) => ({ group, version, ...kind })),
);
