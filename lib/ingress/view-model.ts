import { createHash } from 'node:crypto';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { checkTlsSecret } from './certificates.ts';
import {
  checkHost,
  checkIpAddress,
  ipAddress,
  checkPath,
  describeObject,
  isDnsLabel,
  isDnsSubdomain,
  isPortName,
  isPortNumber,
  quote,
} from './names.ts';

/**
 * The view model the shipped templates render: HTTP routing by a host map,
 * then an exact-path map and a prefix-path map keyed by host key and path.
 *
 * Every string in it that came from a Kubernetes object passed a check for
 * where it lands (see names.ts), so no object can add a line, a word, a
 * comment or a directive to the configuration or a map file. Whatever fails
 * a check is left out with a Problem naming the object and field, and the
 * rest is still built: one bad Ingress never takes the others down.
 */

export interface IngressSources {
  /** Ingress class to serve (default "haproxy"). */
  readonly className: string;
  readonly ingresses: readonly KubeObject[];
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  /** EndpointSlices labelled kubernetes.io/service-name=<service>. */
  readonly endpointSlices: (namespace: string, service: string) => readonly KubeObject[];
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  /**
   * Versions of the Service, EndpointSlice and Secret stores. When given and
   * unchanged since the last build with the same cache, the servers and
   * certificates of that build are reused as they are.
   */
  readonly versions?: readonly number[];
  /**
   * The Services and EndpointSlices changed since the given store versions,
   * or undefined when the stores cannot tell: lets a build resolve only the
   * backends of the Services that changed.
   */
  readonly changedSince?: (versions: readonly number[]) => readonly KubeObject[] | undefined;
}

export interface IngressModel {
  /** host.map lines: every distinct host key, sorted. */
  readonly hosts: readonly HostEntry[];
  /** path-exact.map lines, sorted by key. */
  readonly exactRoutes: readonly Route[];
  /** path-prefix.map lines: longest key first (map_beg takes the first match), ties by key. */
  readonly prefixRoutes: readonly Route[];
  /** Sorted by name. */
  readonly backends: readonly Backend[];
  /** Sorted by file. */
  readonly certificates: readonly Certificate[];
  /** Backend of spec.defaultBackend of the oldest served Ingress that has one. */
  readonly defaultBackend: string | undefined;
  /** Objects, or the rules, paths, TLS entries and endpoints in them, left out, with why. */
  readonly excluded: readonly Problem[];
  /** Served but degraded: backends without servers, routes lost to an older Ingress. */
  readonly warnings: readonly Problem[];
}

/**
 * A host.map key (written as "<host> <host>"). Rules without a host use the
 * catch-all key CATCH_ALL_HOST, which is not a wildcard: `wildcard` is true
 * only for '*.domain' keys, which cover exactly one label.
 */
export interface HostEntry {
  readonly host: string;
  readonly wildcard: boolean;
}

/** A path map line: key = host key + path, e.g. "example.com/api/". */
export interface Route {
  readonly key: string;
  readonly backend: string;
}

export interface Backend {
  /** `<namespace>_<service>_<port>`: no part can hold '_', so names never collide. */
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  /** The Ingress's service port: its name, or its number in decimal. */
  readonly port: string;
  readonly servers: readonly Server[];
}

export interface Server {
  /** `srv-<address with ':' as '_'>-<port>`, unique within a backend. */
  readonly name: string;
  /** IPv4 or IPv6 (lowercase, no brackets). */
  readonly address: string;
  readonly port: number;
}

export interface Certificate {
  /** `<namespace>_<secret>.pem`, shortened with a hash when that would be too long a file name (see certificateFile). */
  readonly file: string;
  /** The certificate chain then the private key, PEM, re-encoded from the parsed objects. */
  readonly pem: string;
  /** SNI names from every spec.tls[].hosts naming this Secret: sorted, deduplicated, lowercase. */
  readonly hosts: readonly string[];
  /** `<namespace>/<secret>`. */
  readonly secret: string;
}

/** The host key of rules without a host. */
export const CATCH_ALL_HOST = '*';
const CATCH_ALL_ENTRY: HostEntry = Object.freeze({ host: CATCH_ALL_HOST, wildcard: false });

interface IngressRead {
  readonly served: ServedIngress | undefined;
  readonly problems: readonly Problem[];
  /** creationTimestamp in milliseconds; +Infinity when missing or unparsable. */
  readonly age: number;
}

/** What one EndpointSlice contributes to a backend for one Service port name. */
interface SliceServers {
  readonly servers: readonly Server[];
  readonly problems: readonly Problem[];
  readonly hasEndpoints: boolean;
  readonly portFound: boolean;
}

/**
 * Results computed from one object, kept while the store keeps that same
 * object (stores replace an object when it changes, never mutate it), so a
 * render after one change only reads that object again. Keyed weakly:
 * objects gone from the stores take their entries with them.
 */
export class IngressModelCache {
  /** Per Ingress: what it contributes, its problems and its age. */
  readonly reads = new WeakMap<KubeObject, IngressRead>();
  /** Per EndpointSlice of a Service that has several. */
  readonly slices = new WeakMap<KubeObject, SliceEntry>();
  readonly secrets = new WeakMap<KubeObject, ReturnType<typeof checkTlsSecret>>();
  /** Per Service: the servers and Backend of each port a backend uses. */
  readonly backends = new WeakMap<KubeObject, BackendEntry>();
  /** The previous build, reused in parts while its inputs are unchanged. */
  last:
    | {
        readonly ingresses: readonly KubeObject[];
        readonly className: string;
        readonly versions: readonly number[] | undefined;
        readonly aggregated: Aggregate;
        readonly resolution: Resolution;
        readonly model: IngressModel;
      }
    | undefined;
}

const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const NO_PROBLEMS: readonly Problem[] = Object.freeze([]);
const NO_SERVERS: readonly Server[] = Object.freeze([]);
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

type Fields = Readonly<Record<string, unknown>>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compare(a: string, b: string): number {
  // Code-unit order, never localeCompare: output must not depend on the host's locale.
  return a < b ? -1 : a > b ? 1 : 0;
}

interface BackendRef {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: { readonly name: string } | { readonly number: number };
}

/** One map line an Ingress asks for, before conflicts are settled. */
interface RouteClaim {
  readonly map: 'exact' | 'prefix';
  readonly key: string;
  readonly backend: BackendRef;
  /** An Exact path outranks the exact line a Prefix path adds for itself, as Kubernetes ranks Exact over Prefix. */
  readonly fromExactPath: boolean;
  readonly field: string;
  /** The Ingress asking, and its label for messages. */
  readonly ingress: KubeObject;
  readonly label: string;
  /** The map line, made once per claim: an unchanged route is the same object in every model. */
  readonly line: Route;
}

interface TlsClaim {
  readonly secretName: string;
  readonly hosts: readonly string[];
  readonly field: string;
}

/** An Ingress that passed every check, reduced to what it contributes. */
interface ServedIngress {
  readonly label: string;
  readonly namespace: string;
  readonly hosts: readonly HostEntry[];
  readonly routes: readonly RouteClaim[];
  readonly defaultBackend: { readonly backend: BackendRef; readonly field: string } | undefined;
  readonly tls: readonly TlsClaim[];
}

function servesClass(ingress: KubeObject, className: string): boolean {
  const spec = ingress['spec'];
  const fieldClass = isFields(spec) ? spec['ingressClassName'] : undefined;
  if (fieldClass !== undefined && fieldClass !== null) return fieldClass === className;
  return ingress.metadata.annotations?.[CLASS_ANNOTATION] === className;
}

function ageOf(ingress: KubeObject): number {
  // Raw API JSON holds an RFC 3339 string; @kubernetes/client-node objects hold a Date.
  const stamp = ingress.metadata['creationTimestamp'];
  const parsed = stamp instanceof Date ? stamp.getTime() : typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
  return Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
}

interface AgedIngress {
  readonly ingress: KubeObject;
  readonly read: IngressRead;
}

/**
 * Oldest first: the age order that settles conflicts. A missing or
 * unparsable creationTimestamp counts as newest; namespace/name breaks ties,
 * so the order never depends on the order of the input.
 */
function olderFirst(a: AgedIngress, b: AgedIngress): number {
  const byTime = a.read.age - b.read.age;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime < 0 ? -1 : 1;
  return (
    compare(String(a.ingress.metadata.namespace ?? ''), String(b.ingress.metadata.namespace ?? '')) ||
    compare(String(a.ingress.metadata.name), String(b.ingress.metadata.name))
  );
}

/** Reads one Ingress; every field it cannot trust becomes a Problem instead. */
class IngressReader {
  readonly problems: Problem[] = [];
  /** Problems that leave out only a TLS entry, not the whole Ingress. */
  readonly tlsProblems: Problem[] = [];
  readonly label: string;
  readonly #ingress: KubeObject;
  readonly #namespace: string;

  constructor(ingress: KubeObject) {
    this.#ingress = ingress;
    this.label = describeObject('Ingress', ingress.metadata.namespace, ingress.metadata.name);
    const namespace = ingress.metadata.namespace;
    if (!isDnsLabel(namespace)) this.#problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
    this.#namespace = isDnsLabel(namespace) ? namespace : '';
  }

  read(): ServedIngress | undefined {
    const spec = this.#ingress['spec'] ?? {};
    if (!isFields(spec)) {
      this.#problem('spec', 'is not an object');
      return undefined;
    }
    const defaultBackend =
      spec['defaultBackend'] === undefined || spec['defaultBackend'] === null
        ? undefined
        : this.#backend(spec['defaultBackend'], 'spec.defaultBackend', '');
    const hosts: HostEntry[] = [];
    const routes: RouteClaim[] = [];
    const rules = this.#list(spec['rules'], 'spec.rules');
    for (let index = 0; index < rules.length; index++) this.#rule(rules[index], `spec.rules[${index}]`, hosts, routes);
    const tls: TlsClaim[] = [];
    const entries = this.#list(spec['tls'], 'spec.tls', this.tlsProblems);
    for (let index = 0; index < entries.length; index++) this.#tls(entries[index], `spec.tls[${index}]`, tls);
    if (this.problems.length > 0) return undefined;
    return {
      label: this.label,
      namespace: this.#namespace,
      hosts,
      routes,
      defaultBackend: defaultBackend && { backend: defaultBackend, field: 'spec.defaultBackend' },
      tls,
    };
  }

  #problem(field: string, message: string, into: Problem[] = this.problems): void {
    into.push({ object: this.label, field, message });
  }

  /** An optional list: absent is empty, anything but a list is a problem. */
  #list(value: unknown, field: string, into: Problem[] = this.problems): readonly unknown[] {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    this.#problem(field, 'is not a list', into);
    return [];
  }

  #rule(rule: unknown, field: string, hosts: HostEntry[], routes: RouteClaim[]): void {
    if (!isFields(rule)) return this.#problem(field, 'is not an object');
    let hostKey = CATCH_ALL_HOST;
    if (rule['host'] === undefined || rule['host'] === null || rule['host'] === '') {
      hosts.push(CATCH_ALL_ENTRY);
    } else {
      const host = checkHost(rule['host']);
      if (!host.ok) return this.#problem(`${field}.host`, `invalid host: ${host.reason}`);
      hostKey = host.value.host;
      hosts.push(Object.freeze(host.value));
    }
    const http = rule['http'];
    if (http === undefined || http === null) return;
    if (!isFields(http)) return this.#problem(`${field}.http`, 'is not an object');
    const paths = http['paths'];
    if (paths === undefined || paths === null) return;
    if (!Array.isArray(paths)) return this.#problem(`${field}.http.paths`, 'is not a list');
    for (let index = 0; index < paths.length; index++) this.#path(paths[index], `${field}.http.paths[${index}]`, hostKey, routes);
  }

  /**
   * Exact: one exact line. Prefix (and ImplementationSpecific, served as
   * Prefix): Kubernetes matches element-wise, so '/foo' matches '/foo' and
   * '/foo/bar' but not '/foobar': an exact line for '/foo' and a prefix line
   * for '/foo/'; '/' is the prefix line '/' alone.
   */
  #path(path: unknown, field: string, hostKey: string, routes: RouteClaim[]): void {
    if (!isFields(path)) return this.#problem(field, 'is not an object');
    const pathType = path['pathType'] ?? 'ImplementationSpecific';
    if (pathType !== 'Exact' && pathType !== 'Prefix' && pathType !== 'ImplementationSpecific') {
      return this.#problem(`${field}.pathType`, `${quote(pathType)} is not Exact, Prefix or ImplementationSpecific`);
    }
    // Only ImplementationSpecific may leave the path out; it then means everything.
    const given = path['path'];
    const omitted = given === undefined || given === null || given === '';
    const checked = checkPath(omitted && pathType === 'ImplementationSpecific' ? '/' : given);
    if (!checked.ok) this.#problem(`${field}.path`, `invalid path: ${checked.reason}`);
    const backend = this.#backend(path['backend'], field, '.backend');
    if (!checked.ok || !backend) return;
    if (pathType === 'Exact') {
      routes.push(this.#claim('exact', hostKey + checked.value, backend, true, field));
      return;
    }
    let end = checked.value.length;
    while (end > 0 && checked.value.charCodeAt(end - 1) === 47) end--;
    const trimmed = checked.value.slice(0, end);
    if (trimmed !== '') routes.push(this.#claim('exact', hostKey + trimmed, backend, false, field));
    routes.push(this.#claim('prefix', `${hostKey}${trimmed}/`, backend, false, field));
  }

  #claim(map: RouteClaim['map'], key: string, backend: BackendRef, fromExactPath: boolean, field: string): RouteClaim {
    const line = Object.freeze({ key, backend: backend.name });
    return { map, key, backend, fromExactPath, field, ingress: this.#ingress, label: this.label, line };
  }

  /**
   * A Service backend at `owner` + `suffix` (joined only for a message: most
   * backends have none); undefined, with the problems recorded, when any part
   * fails its check.
   */
  #backend(backend: unknown, owner: string, suffix: string): BackendRef | undefined {
    if (!isFields(backend)) {
      this.#problem(`${owner}${suffix}`, 'is not an object');
      return undefined;
    }
    if (backend['resource'] !== undefined && backend['resource'] !== null) {
      this.#problem(`${owner}${suffix}.resource`, 'resource backends are not supported; use a Service');
      return undefined;
    }
    const service = backend['service'];
    if (!isFields(service)) {
      this.#problem(`${owner}${suffix}.service`, 'is missing');
      return undefined;
    }
    const name = service['name'];
    if (!isDnsLabel(name)) this.#problem(`${owner}${suffix}.service.name`, `${quote(name)} is not a Service name`);
    const port = this.#port(service['port'], owner, suffix);
    if (!isDnsLabel(name) || !port || this.#namespace === '') return undefined;
    return { name: `${this.#namespace}_${name}_${portText(port)}`, namespace: this.#namespace, service: name, port };
  }

  /** The port of the backend at `owner` + `suffix`. */
  #port(port: unknown, owner: string, suffix: string): BackendRef['port'] | undefined {
    const name = isFields(port) ? (port['name'] ?? undefined) : undefined;
    const number = isFields(port) ? (port['number'] ?? undefined) : undefined;
    if ((name === undefined) === (number === undefined)) {
      this.#problem(`${owner}${suffix}.service.port`, 'needs exactly one of name and number');
    } else if (name !== undefined) {
      if (isPortName(name)) return { name };
      this.#problem(`${owner}${suffix}.service.port.name`, `${quote(name)} is not a port name (1-15 of a-z, 0-9 and '-', with a letter)`);
    } else {
      if (isPortNumber(number)) return { number };
      this.#problem(`${owner}${suffix}.service.port.number`, `${quote(number)} is not a port number (1-65535)`);
    }
    return undefined;
  }

  /** A TLS entry; its problems leave out only the entry. Without secretName it asks for nothing to serve. */
  #tls(entry: unknown, field: string, claims: TlsClaim[]): void {
    const into = this.tlsProblems;
    if (!isFields(entry)) {
      this.#problem(field, 'is not an object', into);
      return;
    }
    const secretName = entry['secretName'];
    if (secretName === undefined || secretName === null || secretName === '') return;
    const before = into.length;
    if (!isDnsSubdomain(secretName)) this.#problem(`${field}.secretName`, `${quote(secretName)} is not a Secret name`, into);
    const hosts: string[] = [];
    this.#list(entry['hosts'], `${field}.hosts`, into).forEach((host, index) => {
      const checked = checkHost(host);
      if (checked.ok) hosts.push(checked.value.host);
      else this.#problem(`${field}.hosts[${index}]`, `invalid host: ${checked.reason}`, into);
    });
    if (into.length > before || !isDnsSubdomain(secretName)) return;
    claims.push({ secretName, hosts, field: `${field}.secretName` });
  }
}

function portText(port: BackendRef['port']): string {
  return 'name' in port ? port.name : String(port.number);
}

/** Problems keyed by their whole content, so one reached twice is reported once. */
class ProblemList {
  readonly #problems = new Map<string, Problem>();

  add(problem: Problem): void {
    this.#problems.set(JSON.stringify([problem.object, problem.field, problem.message]), problem);
  }

  sorted(): Problem[] {
    return [...this.#problems.values()].sort(
      (a, b) => compare(a.object, b.object) || compare(a.field, b.field) || compare(a.message, b.message),
    );
  }
}

/** Who asked for a backend or Secret: the first field of each Ingress that did, in the order they asked, for warnings. */
class Referrers {
  // Most backends have one Ingress asking: a Map is only made for a second.
  #label: string | undefined;
  #field = '';
  #more: Map<string, string> | undefined;

  add(label: string, field: string): void {
    if (this.#label === undefined) {
      this.#label = label;
      this.#field = field;
    } else if (label !== this.#label) {
      this.#more ??= new Map();
      if (!this.#more.has(label)) this.#more.set(label, field);
    }
  }

  entries(): (readonly [string, string])[] {
    if (this.#label === undefined) return [];
    return [[this.#label, this.#field], ...(this.#more ?? [])];
  }
}

function sliceLabel(slice: KubeObject): string {
  return describeObject('EndpointSlice', slice.metadata.namespace, slice.metadata.name);
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
      if (address === undefined) {
        servers.length = kept;
        const checked = checkIpAddress(addresses[i]);
        const reason = checked.ok ? '' : checked.reason;
        (problems ??= []).push({ object: sliceLabel(slice), field: `endpoints[${index}].addresses[${i}]`, message: `endpoint left out: ${reason}` });
        break;
      }
      const name = `srv-${address.includes(':') ? address.replaceAll(':', '_') : address}-${number}`;
      servers.push(Object.freeze({ name, address, port: number }));
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
    servers.sort((a, b) => compare(a.name, b.name));
    let kept = 0;
    for (const server of servers) if (kept === 0 || servers[kept - 1]!.name !== server.name) servers[kept++] = server;
    servers.length = kept;
  }
  return Object.freeze(servers);
}

/** The servers of one Service port as the Service's EndpointSlices give them. */
interface ResolvedServers {
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
interface BackendEntry {
  readonly portKey: string | number;
  slices: readonly KubeObject[];
  resolved: ResolvedServers;
  backend: Backend | undefined;
  readonly next: BackendEntry | undefined;
}

/** Built only for messages: most backends have none. */
function serviceLabel(ref: BackendRef): string {
  return describeObject('Service', ref.namespace, ref.service);
}

/** A backend with its servers; the same Backend object as last time when nothing it depends on changed. */
function resolveBackend(ref: BackendRef, sources: IngressSources, cache: IngressModelCache): { readonly backend: Backend; readonly resolved: ResolvedServers } {
  const service = sources.service(ref.namespace, ref.service);
  if (!service) {
    const resolved = { servers: NO_SERVERS, issue: `${serviceLabel(ref)} not found`, problems: NO_PROBLEMS };
    return { backend: backendOf(ref, NO_SERVERS), resolved };
  }
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
  if (entry.backend?.name !== ref.name) entry.backend = backendOf(ref, entry.resolved.servers);
  return { backend: entry.backend, resolved: entry.resolved };
}

function backendOf(ref: BackendRef, servers: readonly Server[]): Backend {
  return Object.freeze({ name: ref.name, namespace: ref.namespace, service: ref.service, port: portText(ref.port), servers });
}

/** Per EndpointSlice of a Service with several, what it gives each Service port name asked for (mostly one). */
interface SliceEntry {
  readonly portName: string;
  readonly servers: SliceServers;
  readonly next: SliceEntry | undefined;
}

function cachedSliceServers(slice: KubeObject, portName: string, cache: IngressModelCache): SliceServers {
  const first = cache.slices.get(slice);
  for (let entry = first; entry !== undefined; entry = entry.next) if (entry.portName === portName) return entry.servers;
  const servers = sliceServers(slice, portName);
  cache.slices.set(slice, { portName, servers, next: first });
  return servers;
}

function serversOf(
  backend: BackendRef,
  service: KubeObject,
  found: readonly KubeObject[],
  cache: IngressModelCache,
): ResolvedServers {
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
    const slices = [...found].sort((a, b) => compare(String(a.metadata.name), String(b.metadata.name)));
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

/** What the Ingresses alone decide: hosts, routes, which backends and Secrets are used, by whom. */
interface Aggregate {
  readonly hosts: readonly HostEntry[];
  readonly exactRoutes: readonly Route[];
  readonly prefixRoutes: readonly Route[];
  readonly backends: readonly { readonly ref: BackendRef; readonly referrers: Referrers }[];
  readonly defaultBackend: string | undefined;
  readonly secrets: readonly { readonly namespace: string; readonly name: string; readonly hosts: readonly string[]; readonly referrers: Referrers }[];
  readonly excluded: readonly Problem[];
  readonly warnings: readonly Problem[];
}

/** What the Services, EndpointSlices and Secrets add to an aggregate. */
interface Resolution {
  readonly backends: readonly Backend[];
  /** Per backend (same order), why it has no servers, and the problems it adds. */
  readonly issues: readonly (string | undefined)[];
  readonly backendWarnings: readonly (readonly Problem[])[];
  readonly backendExcluded: readonly (readonly Problem[])[];
  /**
   * Backend indexes by "namespace/service", to find what a changed Service or
   * slice touches; made when first asked for (a cold build never needs it).
   */
  readonly byService: () => ReadonlyMap<string, readonly number[]>;
  readonly certificates: readonly Certificate[];
  readonly excluded: readonly Problem[];
  readonly warnings: readonly Problem[];
}

// Loops here index arrays: a cold build runs mostly before the JIT optimises
// it, and an unoptimised for-of allocates an iterator result per step.
function aggregate(sources: IngressSources, cache: IngressModelCache, previous: Aggregate | undefined): Aggregate {
  const excluded = new ProblemList();
  const warnings = new ProblemList();

  const aged: AgedIngress[] = [];
  const ingresses = sources.ingresses;
  for (let i = 0; i < ingresses.length; i++) {
    const ingress = ingresses[i]!;
    if (!servesClass(ingress, sources.className)) continue;
    let read = cache.reads.get(ingress);
    if (!read) {
      const reader = new IngressReader(ingress);
      const result = reader.read();
      const problems = reader.problems.length + reader.tlsProblems.length === 0 ? NO_PROBLEMS : [...reader.problems, ...reader.tlsProblems];
      read = { served: result, problems, age: ageOf(ingress) };
      cache.reads.set(ingress, read);
    }
    for (let p = 0; p < read.problems.length; p++) excluded.add(read.problems[p]!);
    aged.push({ ingress, read });
  }
  aged.sort(olderFirst);

  // Conflicts: an Exact path beats the exact line of a Prefix path (as
  // Kubernetes ranks Exact over Prefix); then the older Ingress wins; within
  // one Ingress, the earlier path. Claims come oldest Ingress first, then in
  // spec order; ranking is a stable partition (exact-path claims first), not a sort.
  const served: ServedIngress[] = [];
  const hosts = new Map<string, HostEntry>();
  const claims: RouteClaim[] = [];
  const fromExactPaths: number[] = [];
  const others: number[] = [];
  for (let i = 0; i < aged.length; i++) {
    const ingress = aged[i]!.read.served;
    if (!ingress) continue;
    served.push(ingress);
    for (let h = 0; h < ingress.hosts.length; h++) hosts.set(ingress.hosts[h]!.host, ingress.hosts[h]!);
    for (let r = 0; r < ingress.routes.length; r++) {
      const claim = ingress.routes[r]!;
      (claim.fromExactPath ? fromExactPaths : others).push(claims.length);
      claims.push(claim);
    }
  }
  // One map per route map, keyed by the route key itself (no key strings to build per claim).
  const winnersByMap = { exact: new Map<string, RouteClaim>(), prefix: new Map<string, RouteClaim>() };
  const won = new Uint8Array(claims.length);
  const settle = (position: number) => {
    const claim = claims[position]!;
    const winners = winnersByMap[claim.map];
    const winner = winners.get(claim.key);
    if (!winner) {
      winners.set(claim.key, claim);
      won[position] = 1;
    } else if (winner.backend.name !== claim.backend.name && winner.fromExactPath === claim.fromExactPath) {
      // Losing an Exact-over-Prefix ranking is Kubernetes semantics, not a
      // conflict; two claims of the same rank for different backends are.
      const by = winner.ingress === claim.ingress ? `the earlier ${winner.field}` : `older ${winner.label}`;
      warnings.add({
        object: claim.label,
        field: claim.field,
        message: `route ${quote(claim.key)} not served here: ${by} sends it to backend ${winner.backend.name}`,
      });
    }
  };
  for (let i = 0; i < fromExactPaths.length; i++) settle(fromExactPaths[i]!);
  for (let i = 0; i < others.length; i++) settle(others[i]!);

  const backends = new Map<string, { readonly ref: BackendRef; readonly referrers: Referrers }>();
  const useBackend = (ref: BackendRef, label: string, field: string) => {
    let entry = backends.get(ref.name);
    if (!entry) {
      entry = { ref, referrers: new Referrers() };
      backends.set(ref.name, entry);
    }
    entry.referrers.add(label, field);
  };
  // Only backends something routes to are built. Referrers are recorded in
  // claim order, so each warning names the first path of an Ingress asking.
  for (let i = 0; i < claims.length; i++) {
    if (won[i] === 1) useBackend(claims[i]!.backend, claims[i]!.label, claims[i]!.field);
  }

  let defaultBackend: { readonly ingress: ServedIngress; readonly backend: BackendRef } | undefined;
  const secrets = new Map<string, { readonly namespace: string; readonly name: string; readonly hosts: Set<string>; readonly referrers: Referrers }>();
  for (let i = 0; i < served.length; i++) {
    const ingress = served[i]!;
    if (ingress.defaultBackend) {
      const { backend, field } = ingress.defaultBackend;
      if (!defaultBackend) {
        defaultBackend = { ingress, backend };
        useBackend(backend, ingress.label, field);
      } else if (defaultBackend.backend.name !== backend.name) {
        warnings.add({
          object: ingress.label,
          field,
          message: `not served: older ${defaultBackend.ingress.label} sets the default backend ${defaultBackend.backend.name}`,
        });
      }
    }
    for (const claim of ingress.tls) {
      const id = `${ingress.namespace}/${claim.secretName}`;
      let entry = secrets.get(id);
      if (!entry) {
        entry = { namespace: ingress.namespace, name: claim.secretName, hosts: new Set(), referrers: new Referrers() };
        secrets.set(id, entry);
      }
      for (const host of claim.hosts) entry.hosts.add(host);
      entry.referrers.add(ingress.label, claim.field);
    }
  }

  const routesOf = (map: RouteClaim['map'], before: readonly Route[] | undefined, order: (a: RouteClaim, b: RouteClaim) => number): Route[] =>
    sortedValues(winnersByMap[map], before, (route) => route.key, order).map((claim) => claim.line);

  // Frozen lists of frozen items: a renderer may reuse what it rendered from them (see
  // SafeWriter); a list with the very same items as last time is last time's list.
  const kept = <T>(before: readonly T[] | undefined, after: T[]): readonly T[] => (sameItems(before, after) ? before : Object.freeze(after));
  return {
    hosts: kept(previous?.hosts, sortedValues(hosts, previous?.hosts, (host) => host.host, (a, b) => compare(a.host, b.host))),
    exactRoutes: kept(previous?.exactRoutes, routesOf('exact', previous?.exactRoutes, (a, b) => compare(a.key, b.key))),
    prefixRoutes: kept(
      previous?.prefixRoutes,
      routesOf('prefix', previous?.prefixRoutes, (a, b) => b.key.length - a.key.length || compare(a.key, b.key)),
    ),
    backends: sortedValues(backends, previous?.backends, (backend) => backend.ref.name, (a, b) => compare(a.ref.name, b.ref.name)),
    defaultBackend: defaultBackend?.backend.name,
    secrets: Array.from(secrets.values(), (entry) => ({ ...entry, hosts: [...entry.hosts].sort(compare) })),
    excluded: excluded.sorted(),
    warnings: warnings.sorted(),
  };
}

/**
 * The values of `byKey` in the order `order` gives. When the keys are exactly
 * those of `before` (a list in that order, from the last build: the common
 * case after a change elsewhere), the order is known without sorting.
 */
function sortedValues<T, B>(byKey: ReadonlyMap<string, T>, before: readonly B[] | undefined, keyOf: (item: B) => string, order: (a: T, b: T) => number): T[] {
  if (before !== undefined && before.length === byKey.size) {
    const values: T[] = [];
    for (let i = 0; i < before.length; i++) {
      const value = byKey.get(keyOf(before[i]!));
      if (value === undefined) break;
      values.push(value);
    }
    // As many keys, all of them known: the same keys.
    if (values.length === before.length) return values;
  }
  return Array.from(byKey.values()).sort(order);
}

/** One backend's servers and the problems that come with them. */
function resolveOne(
  aggregated: Aggregate,
  index: number,
  sources: IngressSources,
  cache: IngressModelCache,
): { readonly backend: Backend; readonly issue: string | undefined; readonly warnings: readonly Problem[]; readonly excluded: readonly Problem[] } {
  const { ref, referrers } = aggregated.backends[index]!;
  const { backend, resolved } = resolveBackend(ref, sources, cache);
  const { issue, problems } = resolved;
  let excluded = NO_PROBLEMS;
  if (problems.length > 0) {
    const list = new ProblemList();
    for (const problem of problems) list.add(problem);
    excluded = list.sorted();
  }
  return { backend, issue, warnings: issueWarnings(ref.name, issue, referrers), excluded };
}

/** A backend without servers is reported on every Ingress that routes to it. */
function issueWarnings(backend: string, issue: string | undefined, referrers: Referrers): readonly Problem[] {
  if (issue === undefined) return NO_PROBLEMS;
  return referrers.entries().map(([label, field]) => ({ object: label, field, message: `backend ${backend} has no servers: ${issue}` }));
}

function resolveCertificates(
  aggregated: Aggregate,
  sources: IngressSources,
  cache: IngressModelCache,
): { readonly certificates: Certificate[]; readonly excluded: Problem[]; readonly warnings: Problem[] } {
  const excluded: Problem[] = [];
  const warnings: Problem[] = [];
  const certificates: Certificate[] = [];
  for (const { namespace, name, hosts: sniHosts, referrers } of aggregated.secrets) {
    const secretLabel = describeObject('Secret', namespace, name);
    const secret = sources.secret(namespace, name);
    if (!secret) {
      for (const [label, field] of referrers.entries()) warnings.push({ object: label, field, message: `${secretLabel} not found; TLS entry not served` });
      continue;
    }
    let checked = cache.secrets.get(secret);
    if (!checked) {
      checked = checkTlsSecret(secret);
      cache.secrets.set(secret, checked);
    }
    if (!checked.ok) {
      excluded.push({ object: secretLabel, field: checked.field, message: `${checked.reason}; TLS entries using it left out` });
      continue;
    }
    certificates.push({ file: certificateFile(namespace, name), pem: checked.pem, hosts: sniHosts, secret: `${namespace}/${name}` });
  }
  certificates.sort((a, b) => compare(a.file, b.file));
  return { certificates, excluded, warnings };
}

function serviceKey(namespace: string, service: string): string {
  return `${namespace}/${service}`;
}

/** The Services a changed Service or EndpointSlice belongs to. */
function touchedServices(changed: readonly KubeObject[]): Set<string> {
  const services = new Set<string>();
  for (const object of changed) {
    const namespace = object.metadata.namespace ?? '';
    const owner = object.metadata.labels?.[SERVICE_NAME_LABEL];
    if (object.kind === 'EndpointSlice') {
      if (owner !== undefined) services.add(serviceKey(namespace, owner));
    } else {
      // A Service (or an object of unknown kind: counted as both, to be safe).
      services.add(serviceKey(namespace, object.metadata.name));
      if (owner !== undefined) services.add(serviceKey(namespace, owner));
    }
  }
  return services;
}

interface PreviousBuild {
  readonly aggregated: Aggregate;
  readonly resolution: Resolution;
  readonly versions: readonly number[] | undefined;
}

function resolve(aggregated: Aggregate, sources: IngressSources, cache: IngressModelCache, previous: PreviousBuild | undefined): Resolution {
  const changed = previous?.versions && sources.changedSince ? sources.changedSince(previous.versions) : undefined;
  const last = previous?.resolution;
  const count = aggregated.backends.length;
  let backends: Backend[];
  let issues: (string | undefined)[];
  let backendWarnings: (readonly Problem[])[];
  let backendExcluded: (readonly Problem[])[];
  let byService: Resolution['byService'];
  let problemsMoved = true;
  if (previous && last && changed !== undefined && previous.aggregated === aggregated) {
    // Only the backends of Services whose Service or EndpointSlices changed are resolved again.
    ({ byService } = last);
    backends = [...last.backends];
    issues = [...last.issues];
    backendWarnings = [...last.backendWarnings];
    backendExcluded = [...last.backendExcluded];
    problemsMoved = false;
    for (const service of touchedServices(changed)) {
      for (const index of byService().get(service) ?? []) {
        const one = resolveOne(aggregated, index, sources, cache);
        problemsMoved ||= backendWarnings[index]!.length + backendExcluded[index]!.length + one.warnings.length + one.excluded.length > 0;
        backends[index] = one.backend;
        issues[index] = one.issue;
        backendWarnings[index] = one.warnings;
        backendExcluded[index] = one.excluded;
      }
    }
  } else {
    // The Ingresses changed (or nothing is known): a backend the last build had keeps its
    // servers unless its Service changed since; its warnings follow its new referrers.
    const touched = previous && last && changed !== undefined ? touchedServices(changed) : undefined;
    const before = touched ? previous!.aggregated.backends : undefined;
    backends = [];
    issues = [];
    backendWarnings = [];
    backendExcluded = [];
    // Both lists are sorted by name: one walk pairs each backend with the one it was last time.
    let next = 0;
    for (let index = 0; index < count; index++) {
      const { ref, referrers } = aggregated.backends[index]!;
      let old: number | undefined;
      if (before) {
        while (next < before.length && compare(before[next]!.ref.name, ref.name) < 0) next++;
        if (next < before.length && before[next]!.ref.name === ref.name) old = next;
      }
      if (old !== undefined && last && !(touched!.size > 0 && touched!.has(serviceKey(ref.namespace, ref.service)))) {
        backends.push(last.backends[old]!);
        issues.push(last.issues[old]);
        backendWarnings.push(issueWarnings(ref.name, last.issues[old], referrers));
        backendExcluded.push(last.backendExcluded[old]!);
      } else {
        const one = resolveOne(aggregated, index, sources, cache);
        backends.push(one.backend);
        issues.push(one.issue);
        backendWarnings.push(one.warnings);
        backendExcluded.push(one.excluded);
      }
    }
    let indexes: Map<string, number[]> | undefined;
    byService = () => {
      if (!indexes) {
        indexes = new Map();
        for (let index = 0; index < count; index++) {
          const { ref } = aggregated.backends[index]!;
          const key = serviceKey(ref.namespace, ref.service);
          const list = indexes.get(key);
          if (list) list.push(index);
          else indexes.set(key, [index]);
        }
      }
      return indexes;
    };
  }
  const tls = resolveCertificates(aggregated, sources, cache);
  const lists = (perBackend: readonly (readonly Problem[])[], extra: readonly Problem[]) => {
    const list = new ProblemList();
    for (let i = 0; i < perBackend.length; i++) {
      const problems = perBackend[i]!;
      for (let p = 0; p < problems.length; p++) list.add(problems[p]!);
    }
    for (const problem of extra) list.add(problem);
    return list.sorted();
  };
  const reuseLists =
    last !== undefined && !problemsMoved && tls.excluded.length === 0 && tls.warnings.length === 0 && last.certificates.length === tls.certificates.length;
  return {
    backends: sameItems(last?.backends, backends) ? last!.backends : Object.freeze(backends),
    issues,
    backendWarnings,
    backendExcluded,
    byService,
    certificates: tls.certificates,
    excluded: reuseLists ? last.excluded : lists(backendExcluded, tls.excluded),
    warnings: reuseLists ? last.warnings : lists(backendWarnings, tls.warnings),
  };
}

/** Whether a new list holds the very same items as an earlier one: then the earlier list is kept, so renderers see no change. */
function sameItems<T>(before: readonly T[] | undefined, after: readonly T[]): before is readonly T[] {
  return before !== undefined && before.length === after.length && after.every((item, i) => item === before[i]);
}

/**
 * Builds the view model from the Ingresses of one class and the Services,
 * EndpointSlices and Secrets they refer to. Pure and deterministic: the same
 * objects in any order give a deep-equal model. With a cache kept between
 * builds, the Ingress-derived part is reused while the Ingress list is the
 * same, and the resolution while the other stores did not change.
 */
export function buildIngressModel(sources: IngressSources, cache: IngressModelCache = new IngressModelCache()): IngressModel {
  const last = cache.last;
  const aggregated =
    last && last.ingresses === sources.ingresses && last.className === sources.className
      ? last.aggregated
      : aggregate(sources, cache, last?.aggregated);
  const versions = sources.versions;
  const resolution =
    last && last.aggregated === aggregated && versions !== undefined && sameVersions(last.versions, versions)
      ? last.resolution
      : resolve(aggregated, sources, cache, last);
  if (last && last.aggregated === aggregated && last.resolution === resolution) return last.model;
  const model: IngressModel = {
    hosts: aggregated.hosts,
    exactRoutes: aggregated.exactRoutes,
    prefixRoutes: aggregated.prefixRoutes,
    backends: resolution.backends,
    certificates: resolution.certificates,
    defaultBackend: aggregated.defaultBackend,
    excluded: merged(aggregated.excluded, resolution.excluded),
    warnings: merged(aggregated.warnings, resolution.warnings),
  };
  cache.last = { ingresses: sources.ingresses, className: sources.className, versions, aggregated, resolution, model };
  return model;
}

function sameVersions(a: readonly number[] | undefined, b: readonly number[]): boolean {
  return a !== undefined && a.length === b.length && a.every((v, i) => v === b[i]);
}

function merged(a: readonly Problem[], b: readonly Problem[]): Problem[] {
  const list = new ProblemList();
  for (const problem of a) list.add(problem);
  for (const problem of b) list.add(problem);
  return list.sorted();
}

/** File systems refuse names over 255 bytes; a namespace and a Secret name may together reach 317. */
const maxFileName = 128;

/**
 * The certificate file of a Secret: `<namespace>_<name>.pem`, or, when that
 * is too long, a prefix of it with a hash of the whole, which keeps it
 * unique, deterministic and recognisable.
 */
export function certificateFile(namespace: string, name: string): string {
  // The Data Plane API stores files under names of [A-Za-z0-9_-] plus the extension, turning
  // other characters into '_'; Kubernetes names have no '_', so this stays unique.
  const plain = `${namespace}_${name.replaceAll('.', '_')}.pem`;
  if (plain.length <= maxFileName) return plain;
  const digest = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 16);
  return `${plain.slice(0, maxFileName - digest.length - 6)}-${digest}.pem`;
}
