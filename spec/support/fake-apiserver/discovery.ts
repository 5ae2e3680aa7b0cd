/**
 * Discovery documents in their unaggregated form (APIVersions,
 * APIGroupList, APIGroup, APIResourceList) and /version. kubectl 1.35 asks
 * /api and /apis for the aggregated form first and takes these when the
 * answer is a plain APIVersions / APIGroupList, then reads each group
 * version's resource list.
 */
import type { ResourceType, TypeRegistry } from './resource-types.ts';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];

/** The Kubernetes version the fake says it is: the kubectl shipped with the project's tools. */
const SERVER_VERSION = { major: '1', minor: '35', gitVersion: 'v1.35.0' } as const;

export function versionInfo(): Record<string, string> {
  return {
    ...SERVER_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-12-17T00:00:00Z',
    goVersion: 'go1.25.5',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupEntry(types: TypeRegistry, group: string): Record<string, unknown> {
  const versions = types
    .groupVersions()
    .filter((entry) => entry.group === group)
    .map(({ version }) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(types: TypeRegistry): Record<string, unknown> {
  const groups = [...new Set(types.groupVersions().map(({ group }) => group))].filter((group) => group !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((group) => groupEntry(types, group)) };
}

export function apiGroup(types: TypeRegistry, group: string): Record<string, unknown> {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(types, group) };
}

function resourceEntries(type: ResourceType): Record<string, unknown>[] {
  const main = {
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: ALL_VERBS,
    ...(type.shortNames.length === 0 ? {} : { shortNames: type.shortNames }),
  };
  if (!type.statusSubresource) return [main];
  return [main, { name: `${type.plural}/status`, singularName: '', namespaced: type.namespaced, kind: type.kind, verbs: STATUS_VERBS }];
}

export function apiResourceList(types: TypeRegistry, group: string, version: string): Record<string, unknown> {
  const served = types.all().filter((type) => type.group === group && type.version === version);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: served.flatMap(resourceEntries),
  };
}
