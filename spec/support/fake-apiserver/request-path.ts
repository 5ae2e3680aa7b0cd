/**
 * What a request path names, by the API server's URL layout:
 *
 *   /api, /apis, /apis/{group}                  discovery roots
 *   /api/v1, /apis/{group}/{version}            a group version's resources
 *   {prefix}/{plural}[/{name}[/{subresource}]]  cluster-scoped, or a namespaced type across namespaces (collection only)
 *   {prefix}/namespaces/{ns}/{plural}[/{name}[/{subresource}]]
 *   /openapi/v3, /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version}
 *   /version, /healthz, /livez, /readyz
 *
 * `/api/v1/namespaces/{name}/status` is the Namespace's status: a
 * namespaced form needs a namespaced plural in third place.
 */
import type { ResourceType, TypeRegistry } from './resource-types.ts';

export type ApiPath =
  | { readonly kind: 'root'; readonly which: 'api' | 'apis' }
  | { readonly kind: 'group'; readonly group: string }
  | { readonly kind: 'group-version'; readonly group: string; readonly version: string }
  | { readonly kind: 'openapi-index' }
  | { readonly kind: 'openapi-document'; readonly group: string; readonly version: string }
  | { readonly kind: 'version' }
  | { readonly kind: 'health' }
  | {
      readonly kind: 'resource';
      readonly type: ResourceType;
      /** The path's namespace; undefined for cluster-scoped types and across all namespaces. */
      readonly namespace: string | undefined;
      readonly name: string | undefined;
      readonly subresource: string | undefined;
    }
  | { readonly kind: 'unknown' };

const HEALTH = new Set(['healthz', 'livez', 'readyz']);

function decodeSegments(path: string): string[] | undefined {
  try {
    return path
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

function resourcePath(types: TypeRegistry, group: string, version: string, rest: readonly string[]): ApiPath {
  const namespacedType = rest[0] === 'namespaces' && rest.length >= 3 ? types.byPath(group, version, rest[2]!) : undefined;
  if (namespacedType?.namespaced === true) {
    if (rest.length > 5) return { kind: 'unknown' };
    return { kind: 'resource', type: namespacedType, namespace: rest[1], name: rest[3], subresource: rest[4] };
  }
  if (rest.length > 3) return { kind: 'unknown' };
  const type = types.byPath(group, version, rest[0]!);
  if (type === undefined) return { kind: 'unknown' };
  // A namespaced type is reachable without a namespace only as a collection (list and watch across namespaces).
  if (type.namespaced && rest.length > 1) return { kind: 'unknown' };
  return { kind: 'resource', type, namespace: undefined, name: rest[1], subresource: rest[2] };
}

function servesGroupVersion(types: TypeRegistry, group: string, version: string): boolean {
  return types.groupVersions().some((entry) => entry.group === group && entry.version === version);
}

function openApiPath(types: TypeRegistry, rest: readonly string[]): ApiPath {
  if (rest[0] !== 'v3') return { kind: 'unknown' };
  if (rest.length === 1) return { kind: 'openapi-index' };
  if (rest[1] === 'api' && rest.length === 3 && rest[2] === 'v1') return { kind: 'openapi-document', group: '', version: 'v1' };
  if (rest[1] === 'apis' && rest.length === 4 && servesGroupVersion(types, rest[2]!, rest[3]!)) {
    return { kind: 'openapi-document', group: rest[2]!, version: rest[3]! };
  }
  return { kind: 'unknown' };
}

export function parseApiPath(types: TypeRegistry, path: string): ApiPath {
  const segments = decodeSegments(path);
  if (segments === undefined || segments.length === 0) return { kind: 'unknown' };
  const [first, second, third] = segments;
  if (segments.length === 1 && first === 'version') return { kind: 'version' };
  if (HEALTH.has(first!)) return { kind: 'health' };
  if (first === 'openapi') return openApiPath(types, segments.slice(1));
  if (first === 'api') {
    if (segments.length === 1) return { kind: 'root', which: 'api' };
    if (second !== 'v1') return { kind: 'unknown' };
    if (segments.length === 2) return { kind: 'group-version', group: '', version: 'v1' };
    return resourcePath(types, '', 'v1', segments.slice(2));
  }
  if (first === 'apis') {
    if (segments.length === 1) return { kind: 'root', which: 'apis' };
    if (!types.groupVersions().some((entry) => entry.group === second)) return { kind: 'unknown' };
    if (segments.length === 2) return { kind: 'group', group: second! };
    if (!servesGroupVersion(types, second!, third!)) return { kind: 'unknown' };
    if (segments.length === 3) return { kind: 'group-version', group: second!, version: third! };
    return resourcePath(types, second!, third!, segments.slice(3));
  }
  return { kind: 'unknown' };
}
