/**
 * The Gateway API kinds as their CustomResourceDefinitions serve them
 * (kubernetes-sigs/gateway-api config/crd/standard/
 * gateway.networking.k8s.io_{gatewayclasses,gateways,httproutes,referencegrants}.yaml):
 * GatewayClass cluster-scoped, the others namespaced; GatewayClass, Gateway
 * and HTTPRoute with a status subresource (`subresources: status: {}`),
 * ReferenceGrant without one (`subresources: {}`); the CRDs' short names.
 *
 * Each CRD serves two versions from one storage (v1 and v1beta1; v1 is the
 * storage version but for ReferenceGrant, stored as v1beta1). The fake
 * serves each kind at one version: the storage version, so whatever the
 * controller reads is what any version's writes stored. A spec that needs
 * both versions of one kind needs the fake to share storage across
 * versions first.
 */
import type { ResourceTypeDefinition } from './resource-types.ts';

const group = 'gateway.networking.k8s.io';

export const GATEWAY_API_TYPES: readonly ResourceTypeDefinition[] = [
  { group, version: 'v1', kind: 'GatewayClass', plural: 'gatewayclasses', namespaced: false, statusSubresource: true, shortNames: ['gc'] },
  { group, version: 'v1', kind: 'Gateway', plural: 'gateways', namespaced: true, statusSubresource: true, shortNames: ['gtw'] },
  { group, version: 'v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true, statusSubresource: true },
  { group, version: 'v1beta1', kind: 'ReferenceGrant', plural: 'referencegrants', namespaced: true, shortNames: ['refgrant'] },
];
