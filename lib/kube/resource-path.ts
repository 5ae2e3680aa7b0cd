/**
 * The REST path of a resource collection: core types live under /api/v1,
 * every group under /apis/<group>/<version>; namespaced collections under
 * namespaces/<ns>. Without a namespace the path lists across all namespaces.
 */
export function collectionPath(apiVersion: string, resource: string, namespace?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${scope}/${resource}`;
}

/** The path of one object in a collection, optionally of a subresource (`status`). */
export function objectPath(apiVersion: string, resource: string, namespace: string | undefined, name: string, subresource?: string): string {
  const path = `${collectionPath(apiVersion, resource, namespace)}/${encodeURIComponent(name)}`;
  return subresource === undefined ? path : `${path}/${subresource}`;
}
