import type { KubeObject, Problem } from '../pipeline/model.ts';
import { isFields, type Fields } from '../object-fields/fields.ts';
import { portText, type BackendRef } from './claim-types.ts';
import { checkIpAddress, describeObject, endpointAddressProblem, ipAddress, isPortNumber, quote, type Checked } from '../object-fields/names.ts';
import { compareCodeUnits } from '../compare.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';
import { EndpointAddressSource, ModelSource, ServerItem } from './model-source.ts';
import { backendName } from './service-backend-name.ts';
import { NO_PROBLEMS } from './problems.ts';
import type { Backend, BackendShare, MapModelSources, Server } from './types.ts';
import type { BackendSettings } from '../routing/settings.ts';
import { transportOf } from './transport.ts';
import type { CheckedCa } from './certificates.ts';
import { fitted } from '../collections/fitted.ts';

/**
 * The servers of a backend: the ready endpoints of its Service's
 * EndpointSlices at the slice port matching the Service port. Results are
 * kept per object (see ServerCache), so resolving a backend whose
 * Service and slices did not change costs a few lookups.
 */

const NO_SERVERS: readonly Server[] = Object.freeze([]);

/** What one EndpointSlice contributes to a backend for one Service port name. */
interface SliceServers {
  readonly servers: readonly Server[];
  readonly problems: readonly Problem[];
  readonly hasEndpoints: boolean;
  readonly portFound: boolean;
}

function sliceLabel(slice: KubeObject): string {
  return describeObject('EndpointSlice', slice.metadata.namespace, slice.metadata.name);
}

/** Why a check refused its value (an address that is not one). */
function refusal(checked: Checked<string>): string {
  return checked.ok ? '' : checked.reason;
}

/** The servers one EndpointSlice gives a Service port (by name), with the problems it has. */
function sliceServers(slice: KubeObject, portName: string): SliceServers {
  const endpointList = slice['endpoints'];
  const endpoints: readonly unknown[] = Array.isArray(endpointList) ? endpointList : [];
  const hasEndpoints = endpoints.length > 0;
  const addressType = slice['addressType'];
  if (addressType !== undefined && addressType !== 'IPv4' && addressType !== 'IPv6') {
    const problem = { object: sliceLabel(slice), field: 'addressType', message: `${quote(addressType)} is not supported; only IPv4 and IPv6` };
    return { servers: NO_SERVERS, problems: [problem], hasEndpoints, portFound: false };
  }
  const portList = slice['ports'];
  const slicePorts: readonly unknown[] = Array.isArray(portList) ? portList : [];
  let portIndex = -1;
  for (let i = 0; i < slicePorts.length && portIndex < 0; i++) {
    const port = slicePorts[i];
    if (isFields(port) && (port['name'] ?? '') === portName) portIndex = i;
  }
  if (portIndex < 0) return { servers: NO_SERVERS, problems: NO_PROBLEMS, hasEndpoints, portFound: false };
  const number = (slicePorts[portIndex] as Fields)['port'];
  if (!isPortNumber(number)) {
    const problem = { object: sliceLabel(slice), field: `ports[${portIndex}].port`, message: `${quote(number)} is not a port number (1-65535)` };
    return { servers: NO_SERVERS, problems: [problem], hasEndpoints, portFound: true };
  }
  const servers: Server[] = [];
  let problems: Problem[] | undefined;
  for (let index = 0; index < endpoints.length; index++) {
    const endpoint = endpoints[index];
    if (!isFields(endpoint)) continue;
    const conditions = endpoint['conditions'];
    if (isFields(conditions) && conditions['ready'] === false) continue;
    const addressList = endpoint['addresses'];
    const addresses: readonly unknown[] = Array.isArray(addressList) ? addressList : [];
    // One bad address leaves the whole endpoint out.
    const kept = servers.length;
    for (let i = 0; i < addresses.length; i++) {
      const address = ipAddress(addresses[i]);
      const reason = address === undefined ? refusal(checkIpAddress(addresses[i])) : endpointAddressProblem(address);
      if (address === undefined || reason !== undefined) {
        servers.length = kept;
        (problems ??= []).push({ object: sliceLabel(slice), field: `endpoints[${index}].addresses[${i}]`, message: `endpoint left out: ${reason}` });
        break;
      }
      const name = `srv-${address.includes(':') ? address.replaceAll(':', '_') : address}-${number}`;
      const source = new EndpointAddressSource(slice, index, i);
      servers.push(Object.freeze(new ServerItem(name, address, number, source)));
    }
  }
  return { servers: sortedServers(servers), problems: problems ?? NO_PROBLEMS, hasEndpoints, portFound: true };
}

/**
 * Servers sorted by name, each name once. A name is made from the address
 * and port alone, so servers with one name are alike and any of them will do.
 */
function sortedServers(servers: Server[]): readonly Server[] {
  let ordered = true;
  for (let i = 1; i < servers.length && ordered; i++) ordered = servers[i - 1]!.name < servers[i]!.name;
  if (!ordered) {
    servers.sort((a, b) => compareCodeUnits(a.name, b.name));
    let kept = 0;
    for (const server of servers) if (kept === 0 || servers[kept - 1]!.name !== server.name) servers[kept++] = server;
    servers.length = kept;
  }
  return Object.freeze(fitted(servers));
}

/** The servers of one Service port as the Service's EndpointSlices give them. */
export interface ResolvedServers {
  readonly servers: readonly Server[];
  /**
   * Why the backend has no servers when that is a configuration fault (a
   * missing Service, port or EndpointSlices). No ready endpoints is not one:
   * that is a workload scaled to zero or starting.
   */
  readonly issue: string | undefined;
  readonly problems: readonly Problem[];
}

/**
 * Per Service, one entry per port a backend uses (most use one): the slice
 * list its servers came from (stores hand out the same list until it
 * changes) and the Backend made from them.
 */
export interface BackendEntry {
  readonly portKey: string | number;
  slices: readonly KubeObject[];
  resolved: ResolvedServers;
  backend: Backend | undefined;
  readonly next: BackendEntry | undefined;
}

/**
 * The results kept per object between builds (the view model's cache holds
 * them), weakly: an object gone from the stores takes its entries with it.
 */
export interface ServerCache {
  /** Per EndpointSlice of a Service that has several. */
  readonly slices: WeakMap<KubeObject, SliceEntry>;
  /** Per Service: the servers and Backend of each port a backend uses. */
  readonly backends: WeakMap<KubeObject, BackendEntry>;
  /** Per CA Secret named by a backend's settings. */
  readonly caSecrets: WeakMap<KubeObject, CheckedCa>;
}

/** Built only for messages: most backends have none. */
function serviceLabel(ref: BackendRef): string {
  return describeObject('Service', ref.namespace, ref.service);
}

/** A backend with its servers; the same Backend object as last time when nothing it depends on changed. */
export function resolveBackend(ref: BackendRef, settings: BackendSettings, sources: MapModelSources, cache: ServerCache): { readonly backend: Backend; readonly resolved: ResolvedServers } {
  if (ref.split) return resolveSplit(ref, ref.split, settings, sources, cache);
  const service = sources.service(ref.namespace, ref.service);
  if (!service) {
    const resolved = { servers: NO_SERVERS, issue: `${serviceLabel(ref)} not found`, problems: NO_PROBLEMS };
    return { backend: backendOf(ref, settings, NO_SERVERS, undefined), resolved };
  }
  const entry = servicePortEntry(ref, service, sources, cache);
  if (entry.backend?.name !== ref.name || entry.backend.settings !== settings) entry.backend = backendOf(ref, settings, entry.resolved.servers, service);
  return { backend: entry.backend, resolved: entry.resolved };
}

/** The cached servers of one Service port, resolved again when its slice list changed. */
function servicePortEntry(ref: BackendRef, service: KubeObject, sources: MapModelSources, cache: ServerCache): BackendEntry {
  const slices = sources.endpointSlices(ref.namespace, ref.service);
  // Port names are strings and numbers are numbers: the two never collide.
  const portKey = 'name' in ref.port ? ref.port.name : ref.port.number;
  const first = cache.backends.get(service);
  let entry = first;
  while (entry !== undefined && entry.portKey !== portKey) entry = entry.next;
  if (!entry) {
    entry = { portKey, slices, resolved: serversOf(ref, service, slices, cache), backend: undefined, next: first };
    cache.backends.set(service, entry);
  } else if (entry.slices !== slices) {
    entry.slices = slices;
    entry.resolved = serversOf(ref, service, slices, cache);
    entry.backend = undefined;
  }
  return entry;
}

/** HAProxy's largest server weight. */
const MAX_WEIGHT = 256;

/**
 * A split backend: the servers of every share, each weighted so that a
 * share gets its weight's part of the requests whatever its number of
 * servers (the share's weight over its servers, scaled so that the largest
 * is 256; a share with a weight keeps at least 1). Endpoints coming and
 * going, and weight changes, change server weights: Runtime API changes.
 */
function resolveSplit(
  ref: BackendRef,
  shares: readonly BackendShare[],
  settings: BackendSettings,
  sources: MapModelSources,
  cache: ServerCache,
): { readonly backend: Backend; readonly resolved: ResolvedServers } {
  const parts = shares.map((share) => {
    const part: BackendRef = { name: backendName(share.namespace, share.service, share.port), namespace: share.namespace, service: share.service, port: { number: share.port } };
    const service = sources.service(share.namespace, share.service);
    const resolved: ResolvedServers = service
      ? servicePortEntry(part, service, sources, cache).resolved
      : { servers: NO_SERVERS, issue: `${serviceLabel(part)} not found`, problems: NO_PROBLEMS };
    return { share, resolved, each: resolved.servers.length === 0 ? 0 : share.weight / resolved.servers.length };
  });
  const top = Math.max(0, ...parts.map((part) => part.each));
  const servers: Server[] = [];
  const problems: Problem[] = [];
  for (const { share, resolved, each } of parts) {
    const weight = top === 0 ? 0 : Math.max(share.weight > 0 ? 1 : 0, Math.round((each * MAX_WEIGHT) / top));
    for (const server of resolved.servers) servers.push(Object.freeze(new ServerItem(server.name, server.address, server.port, sourceOf(server)!, String(weight))));
    problems.push(...resolved.problems);
  }
  const sorted = sortedServers(servers);
  const issue = sorted.length === 0 ? parts.find((part) => part.resolved.issue !== undefined)?.resolved.issue : undefined;
  return { backend: backendOf(ref, settings, sorted, undefined), resolved: { servers: sorted, issue, problems: problems.length > 0 ? problems : NO_PROBLEMS } };
}

/** A backend made from its Service (when there is one): the lines it writes are charged to that Service. */
function backendOf(ref: BackendRef, settings: BackendSettings, servers: readonly Server[], service: KubeObject | undefined): Backend {
  const backend = {
    name: ref.name,
    namespace: ref.namespace,
    service: ref.service,
    port: portText(ref.port),
    servers,
    settings,
    transport: transportOf(settings),
    ...(ref.split ? { split: ref.split } : {}),
  };
  return Object.freeze(service ? withSource(backend, new ModelSource('Service', service, 'spec.ports')) : backend);
}

/** Per EndpointSlice of a Service with several, what it gives each Service port name asked for (mostly one). */
export interface SliceEntry {
  readonly portName: string;
  readonly servers: SliceServers;
  readonly next: SliceEntry | undefined;
}

function cachedSliceServers(slice: KubeObject, portName: string, cache: ServerCache): SliceServers {
  const first = cache.slices.get(slice);
  for (let entry = first; entry !== undefined; entry = entry.next) if (entry.portName === portName) return entry.servers;
  const servers = sliceServers(slice, portName);
  cache.slices.set(slice, { portName, servers, next: first });
  return servers;
}

function serversOf(backend: BackendRef, service: KubeObject, found: readonly KubeObject[], cache: ServerCache): ResolvedServers {
  const spec = isFields(service['spec']) ? service['spec'] : {};
  if (spec['type'] === 'ExternalName') {
    return { servers: NO_SERVERS, problems: NO_PROBLEMS, issue: `${serviceLabel(backend)} is an ExternalName Service, which is not supported` };
  }
  const ports: readonly unknown[] = Array.isArray(spec['ports']) ? spec['ports'] : [];
  const wanted = backend.port;
  let servicePort: Fields | undefined;
  for (const port of ports) {
    if (isFields(port) && ('name' in wanted ? port['name'] === wanted.name : port['port'] === wanted.number)) {
      servicePort = port;
      break;
    }
  }
  if (!servicePort) {
    const which = 'name' in wanted ? `named ${quote(wanted.name)}` : String(wanted.number);
    return { servers: NO_SERVERS, problems: NO_PROBLEMS, issue: `${serviceLabel(backend)} has no port ${which}` };
  }
  // EndpointSlices name their ports after the Service port and carry the
  // resolved target port, so a named targetPort needs no Pod lookup. A
  // single unnamed Service port is '' or absent on both sides.
  const portName = typeof servicePort['name'] === 'string' ? servicePort['name'] : '';

  if (found.length === 0) return { servers: NO_SERVERS, problems: NO_PROBLEMS, issue: `${serviceLabel(backend)} has no EndpointSlices` };
  let servers: readonly Server[];
  let problems: readonly Problem[];
  let anyEndpoints: boolean;
  let portFound: boolean;
  if (found.length === 1) {
    // One slice (the common case): its servers are already sorted and unique, and
    // kept with the backend (a new slice is a new list), so not cached per slice too.
    ({ servers, problems, hasEndpoints: anyEndpoints, portFound } = sliceServers(found[0]!, portName));
  } else {
    const slices = [...found].sort((a, b) => compareCodeUnits(String(a.metadata.name), String(b.metadata.name)));
    const all: Server[] = [];
    const allProblems: Problem[] = [];
    anyEndpoints = false;
    portFound = false;
    for (const slice of slices) {
      const result = cachedSliceServers(slice, portName, cache);
      allProblems.push(...result.problems);
      anyEndpoints ||= result.hasEndpoints;
      portFound ||= result.portFound;
      all.push(...result.servers);
    }
    servers = sortedServers(all);
    problems = allProblems;
  }
  if (anyEndpoints && !portFound) {
    return { servers, problems, issue: `no EndpointSlice of ${serviceLabel(backend)} has a port named ${quote(portName)}` };
  }
  return { servers, problems, issue: undefined };
}
