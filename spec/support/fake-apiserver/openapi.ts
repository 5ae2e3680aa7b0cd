/**
 * The least OpenAPI v3 kubectl needs. Before create, replace and apply,
 * kubectl 1.35 reads /openapi/v3 to learn whether the server validates
 * fields itself: it looks for the kind's PATCH operation (found by its
 * `x-kubernetes-group-version-kind` extension) with a `fieldValidation`
 * query parameter. Finding one, it sends `fieldValidation=Strict` and skips
 * client-side schema validation, which would need full schemas; without
 * it, it fails with "failed to download openapi". The documents hold those
 * operations and no schemas, so kubectl apply computes strategic merge
 * patches from its built-in types (merge patches for custom resources), as
 * it does when a server's OpenAPI lacks patch metadata.
 *
 * The fake accepts fieldValidation and ignores it: it has no schemas to
 * find unknown fields with.
 */
import { createHash } from 'node:crypto';
import type { ResourceType, TypeRegistry } from './resource-types.ts';

/** `api/v1` or `apis/group/version`, the key /openapi/v3 lists a group version under. */
function documentKey(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function objectPath(type: ResourceType): string {
  const prefix = `/${documentKey(type.group, type.version)}`;
  return type.namespaced ? `${prefix}/namespaces/{namespace}/${type.plural}/{name}` : `${prefix}/${type.plural}/{name}`;
}

function collectionPath(type: ResourceType): string {
  const prefix = `/${documentKey(type.group, type.version)}`;
  return type.namespaced ? `${prefix}/namespaces/{namespace}/${type.plural}` : `${prefix}/${type.plural}`;
}

function operation(type: ResourceType, id: string): Record<string, unknown> {
  return {
    operationId: id,
    'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
    parameters: [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }],
    responses: { '200': { description: 'OK' } },
  };
}

export function groupVersionDocument(types: TypeRegistry, group: string, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const type of types.all().filter((candidate) => candidate.group === group && candidate.version === version)) {
    paths[collectionPath(type)] = { post: operation(type, `create${type.kind}`) };
    paths[objectPath(type)] = { put: operation(type, `replace${type.kind}`), patch: operation(type, `patch${type.kind}`) };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.35.0' }, paths, components: { schemas: {} } };
}

/** The index of group version documents; the hash changes when the served types do, so kubectl's cache follows. */
export function openApiIndex(types: TypeRegistry): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const { group, version } of types.groupVersions()) {
    const key = documentKey(group, version);
    const hash = createHash('sha256')
      .update(JSON.stringify(groupVersionDocument(types, group, version)))
      .digest('hex')
      .slice(0, 32)
      .toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}
