import type { CompiledPath, WatchedResource } from '../config/types.ts';
import { withoutPath } from '../config/json-path.ts';
import type { KubeObject, WatchedType } from '../pipeline/model.ts';
import { matchesLabels, parseLabelSelector } from '../kube-syntax/label-selector.ts';
import { pluralOf } from '../kube-syntax/plural.ts';

/**
 * Whether an object belongs to a watched resource: its API version and kind
 * (or plural), namespace, label selector (the API server applies it in a
 * cluster; manifests need it applied here) and client-side field selector.
 */
export function selectionFor(resource: WatchedResource): (object: KubeObject) => boolean {
  const labels = resource.labelSelector ? parseLabelSelector(resource.labelSelector) : undefined;
  return (object) =>
    (object.apiVersion === resource.apiVersion || resource.fallbackApiVersions?.includes(String(object.apiVersion)) === true) &&
    (resource.kind !== undefined ? object.kind === resource.kind : typeof object.kind === 'string' && pluralOf(object.kind) === resource.resource) &&
    (resource.namespace === undefined || object.metadata.namespace === resource.namespace) &&
    (labels === undefined || matchesLabels(labels, object.metadata.labels)) &&
    matchesFieldSelector(resource, object);
}

/** Whether an object meets every requirement of a resource's client-side field selector. */
export function matchesFieldSelector(resource: WatchedResource, object: KubeObject): boolean {
  return resource.fieldSelector.every(({ path, operator, value }) => (path.get(object) === value) === (operator === '='));
}

/** The object as stored: fields the configuration ignores are dropped, so their churn never triggers a render. */
export function withoutIgnoredFields(object: KubeObject, ignoreFields: readonly CompiledPath[]): KubeObject {
  return ignoreFields.reduce((stripped, path) => withoutPath(stripped, path), object);
}

/**
 * The resources whose status the controller writes, by API group and plural:
 * Ingress status (lib/kube/ingress-status-writer.ts) and Gateway API status
 * (lib/gateway/status-writer.ts). Nothing the shipped templates render
 * reads their status.
 */
const statusWritten = new Set([
  'networking.k8s.io/ingresses',
  'gateway.networking.k8s.io/gatewayclasses',
  'gateway.networking.k8s.io/gateways',
  'gateway.networking.k8s.io/listenersets',
  'gateway.networking.k8s.io/httproutes',
  'gateway.networking.k8s.io/grpcroutes',
  'gateway.networking.k8s.io/tlsroutes',
  'gateway.networking.k8s.io/tcproutes',
  'gateway.networking.k8s.io/backendtlspolicies',
]);

/** Whether the controller writes the status of a watched resource's objects. */
export function writesStatusOf(resource: Pick<WatchedResource, 'apiVersion' | 'resource'>): boolean {
  const slash = resource.apiVersion.indexOf('/');
  return slash > 0 && statusWritten.has(`${resource.apiVersion.slice(0, slash)}/${resource.resource}`);
}

/** The pipeline's view of a watched resource: its store name, index key extractors, and whether its status is the controller's. */
export function watchedType(resource: WatchedResource): WatchedType {
  return { kind: resource.name, indexBy: resource.indexBy.map((path) => path.get), ownStatus: writesStatusOf(resource) };
}

/**
 * What one watch delivers, as a string: the same key from two controller
 * configurations means the same events into a store of the same name, so
 * the watch and what it listed can be kept from the one to the other. What
 * the informer asks the API server, the client-side field selector and the
 * ignored fields shape the events; relations and the webhook setting do not.
 */
export function watchKey(resource: WatchedResource, ignoreFields: readonly CompiledPath[]): string {
  return JSON.stringify([
    resource.name,
    resource.apiVersion,
    resource.kind ?? null,
    resource.resource,
    resource.namespace ?? null,
    resource.labelSelector ?? null,
    resource.fieldSelector.map(({ path, operator, value }) => [path.source, operator, value]),
    resource.optional === true,
    resource.fallbackApiVersions ?? [],
    ignoreFields.map((path) => path.source),
  ]);
}

/** What a set of stores holds and how it is indexed, as a string: equal strings, stores one configuration can hand to the next. */
export function storesKey(resources: readonly WatchedResource[], ignoreFields: readonly CompiledPath[]): string {
  return JSON.stringify(resources.map((resource) => [watchKey(resource, ignoreFields), resource.indexBy.map((path) => path.source)]));
}
