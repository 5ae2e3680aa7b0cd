import type { KubeObject } from '../pipeline/model.ts';
import type { L4Listener, L4Mode, L4Route, L4Routing } from '../routing/l4-route.ts';
import type { WeightedBackend } from '../routing/route.ts';
import type { BackendSettings } from '../routing/settings.ts';
import { aheadBy } from '../routing/precedence.ts';
import { compareCodeUnits } from '../compare.ts';
import { describeObject } from '../object-fields/names.ts';
import { portText, type BackendRef } from './claim-types.ts';
import { certificateFile } from './certificate-file.ts';
import { cachedTlsCheck, type CheckedCertificate } from './certificates.ts';
import { NO_PROBLEMS, ProblemList } from './problems.ts';
import { resolveBackend, type ResolvedServers, type ServerCache } from './servers.ts';
import { sameVersions } from './store-versions.ts';
import { suffixLookups } from './suffix-lookups.ts';
import type { Backend, CaCertificate, MapModelSources, L4Frontend, L4Line, L4Model, StoreVersions } from './types.ts';
import type { CaRef } from '../routing/settings.ts';
import { portTlsChanges, tlsOfBackend, withPortTls, type PortTls } from './service-port-tls.ts';
import { caOf } from './backend-resolution.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';

/**
 * The HAProxy side of layer-4 routing (lib/routing/l4-route.ts): a
 * frontend in tcp mode per listener port, one map (l4.map) from
 * `<port>` (TCP) or `<port>/<SNI name>` (TLS) to a backend, and backends
 * in tcp mode whose servers are resolved as the HTTP backends' are
 * (servers.ts). A new listener port is a new frontend (a reload); a new
 * route on a port served already is a map line, a weight change and
 * endpoints coming and going are server changes: Runtime API changes.
 */

/**
 * The value of a line whose route has no backend to send connections to:
 * the frontend refuses them. Not a backend's name (those start with `l4_`),
 * and a word a map value may be (one starting with '-' is refused there).
 */
export const L4_REFUSED = 'refused';

export const NO_L4_MODEL: L4Model = Object.freeze({
  frontends: Object.freeze([]),
  lines: Object.freeze([]),
  sniLookups: Object.freeze([]),
  backends: Object.freeze([]),
  certificates: Object.freeze([]),
  caCertificates: Object.freeze([]),
  excluded: NO_PROBLEMS,
  warnings: NO_PROBLEMS,
});

/** What one build leaves for the next: the model, kept while the routing and the Service, EndpointSlice and Secret stores are the same. */
export interface L4Last {
  readonly routing: L4Routing;
  /** How Service ports are spoken to (BackendTLSPolicies), as of this build. */
  readonly servicePortTls: MapModelSources['servicePortTls'];
  readonly versions: StoreVersions | undefined;
  /** When the first of its certificates expires: until then they hold as they are. */
  readonly expiresAt: number;
  readonly model: L4Model;
  /** Per backend, what resolving it gave: kept by the next build for the same backend while the stores are the same. */
  readonly resolutions: ReadonlyMap<string, Resolution>;
}

/** A backend resolved from its reference. */
interface Resolution {
  readonly ref: BackendRef;
  readonly backend: Backend;
  readonly resolved: ResolvedServers;
}

/** Whether two references name the same servers with the same shares. */
function sameRef(a: BackendRef, b: BackendRef): boolean {
  if (a.namespace !== b.namespace || a.service !== b.service || portText(a.port) !== portText(b.port)) return false;
  if (a.split === undefined || b.split === undefined) return a.split === b.split;
  return (
    a.split.length === b.split.length &&
    a.split.every((share, i) => {
      const other = b.split![i]!;
      return share.namespace === other.namespace && share.service === other.service && share.port === other.port && share.weight === other.weight;
    })
  );
}

/** What the layer-4 model reads from the HTTP model's cache: servers per Service port, checked Secrets. */
type L4Cache = ServerCache & { readonly secrets: WeakMap<KubeObject, CheckedCertificate> };

/** Settings L4 backends never have: one object, so a resolved Backend is kept while its servers are (servers.ts). */
const NO_SETTINGS: BackendSettings = Object.freeze({});

/**
 * The backend of a route's connections: the Service port's (`l4_<namespace>_<service>_<port>`, shared
 * by every route to it, so a new route is a map line), or for several backendRefs one backend of all
 * their servers weighted by share (`l4_<namespace>_<route>_split`), so a weight change is a server
 * weight change. Names never equal an HTTP backend's, which never starts with a namespace `l4` and
 * four parts of which the last is a number.
 */
function backendRefOf(route: L4Route, backends: readonly WeightedBackend[]): BackendRef {
  if (backends.length === 1) {
    const { namespace, service, port } = backends[0]!;
    return { name: `l4_${namespace}_${service}_${port}`, namespace, service, port: { number: Number(port) } };
  }
  const split = Object.freeze(backends.map(({ namespace, service, port, weight }) => Object.freeze({ namespace, service, port: Number(port), weight })));
  const { namespace, name } = route.origin;
  return { name: `l4_${namespace}_${name}_split`, namespace, service: name, port: { number: 0 }, split };
}

function lineKey(route: L4Route): string {
  return route.sni === undefined ? String(route.port) : `${route.port}/${route.sni}`;
}

function label(route: L4Route): string {
  return describeObject(route.origin.kind, route.origin.namespace, route.origin.name);
}

const MODE_TEXT: Readonly<Record<L4Mode, string>> = { tcp: 'TCP', 'tls-passthrough': 'TLS Passthrough', 'tls-terminate': 'TLS Terminate' };

/** One frontend per port: the first listener's mode (by Gateway, then listener) takes it; a listener of another mode on it is left out. */
function frontendsOf(listeners: readonly L4Listener[], sources: MapModelSources, cache: L4Cache, now: number, excluded: ProblemList) {
  const ordered = listeners.toSorted((a, b) => a.port - b.port || compareCodeUnits(a.object, b.object) || compareCodeUnits(a.field, b.field));
  const byPort = new Map<number, { first: L4Listener; files: string[] }>();
  const pems = new Map<string, string>();
  let expiresAt = Number.POSITIVE_INFINITY;
  for (const listener of ordered) {
    const known = byPort.get(listener.port);
    if (known && known.first.mode !== listener.mode) {
      excluded.add({
        object: listener.object,
        field: listener.field,
        message: `port ${listener.port} is served as ${MODE_TEXT[known.first.mode]} by ${known.first.object} ${known.first.field}: this ${MODE_TEXT[listener.mode]} listener is not served`,
      });
      continue;
    }
    const entry = known ?? { first: listener, files: [] };
    byPort.set(listener.port, entry);
    for (const certificate of listener.certificates) {
      const secret = sources.secret(certificate.namespace, certificate.name);
      const secretLabel = describeObject('Secret', certificate.namespace, certificate.name);
      if (secret === undefined) {
        excluded.add({ object: certificate.object, field: certificate.field, message: `${secretLabel} not found` });
        continue;
      }
      const checked = cachedTlsCheck(secret, cache.secrets, now);
      if (!checked.ok) {
        excluded.add({ object: secretLabel, field: checked.field, message: `${checked.reason}; the TLS listener's certificate is not served` });
        continue;
      }
      expiresAt = Math.min(expiresAt, checked.notAfter);
      const file = certificateFile(certificate.namespace, certificate.name);
      pems.set(file, checked.pem);
      if (!entry.files.includes(file)) entry.files.push(file);
    }
  }
  const frontends: L4Frontend[] = [];
  for (const [port, { first, files }] of byPort) {
    const { mode } = first;
    if (mode === 'tls-terminate' && files.length === 0) {
      excluded.add({ object: first.object, field: first.field, message: `port ${port} ends TLS without a usable certificate: not served` });
      continue;
    }
    frontends.push({ port, mode, tcp: mode === 'tcp', passthrough: mode === 'tls-passthrough', terminate: mode === 'tls-terminate', certificates: files });
  }
  const certificates = [...pems].map(([file, pem]) => ({ file, pem })).sort((a, b) => compareCodeUnits(a.file, b.file));
  return { frontends, certificates, expiresAt };
}

/**
 * The layer-4 model, or `last`'s while the routing and the stores it reads
 * are the same. `cache` is the HTTP model's: the servers of a Service port
 * both kinds of backends use are resolved once.
 */
export function buildL4Model(routing: L4Routing, sources: MapModelSources, cache: L4Cache, last: L4Last | undefined, now: number): L4Last {
  const versions = sources.versions;
  const tlsSame = last !== undefined && portTlsChanges(last.servicePortTls, sources.servicePortTls).size === 0;
  const servicePortTls = tlsSame ? last!.servicePortTls : sources.servicePortTls;
  if (last && tlsSame && last.routing === routing && versions !== undefined && last.versions !== undefined && sameVersions(last.versions, versions) && now <= last.expiresAt) return last;
  if (routing.listeners.length === 0) return { routing, servicePortTls, versions, expiresAt: Number.POSITIVE_INFINITY, model: NO_L4_MODEL, resolutions: new Map() };
  // A route's change leaves the other routes' backends as they were: the same objects, which the renderer replays.
  const storesSame = tlsSame && versions !== undefined && last?.versions !== undefined && sameVersions(last.versions, versions);
  const kept = storesSame ? last!.resolutions : undefined;
  const keptLines = storesSame ? new Map(last!.model.lines.map((line) => [line.key, line])) : undefined;
  const excluded = new ProblemList();
  const warnings = new ProblemList();
  const { frontends, certificates, expiresAt } = frontendsOf(routing.listeners, sources, cache, now, excluded);
  const modes = new Map(frontends.map((frontend) => [frontend.port, frontend.mode]));
  const lines = new Map<string, { line: L4Line; route: L4Route }>();
  /** Per backend, with the TLS its Service port is spoken to with after Terminate (BackendTLSPolicy). */
  const refs = new Map<string, { readonly ref: BackendRef; readonly tls: PortTls }>();
  for (const route of routing.routes) {
    if (modes.get(route.port) !== route.mode) continue;
    const key = lineKey(route);
    const holder = lines.get(key);
    if (holder) {
      const what = route.sni === undefined ? `port ${route.port}` : `SNI name ${route.sni} on port ${route.port}`;
      warnings.add({ object: label(route), field: route.origin.field, message: `not served for ${what}: ${aheadBy(holder.route.origin, route.origin, label(holder.route))} serves it` });
      continue;
    }
    const usable = route.backends.filter((backend) => backend.refused === undefined);
    let backend = L4_REFUSED;
    if (usable.length > 0) {
      const plain = backendRefOf(route, usable);
      // Passthrough carries the client's own TLS, and TCPRoutes are not the policy's (its Extended support names TLSRoutes with termination).
      const tls = route.mode === 'tls-terminate' ? tlsOfBackend(plain, sources.servicePortTls) : undefined;
      const ref = tls === undefined ? plain : { ...plain, name: `${plain.name}_tls` };
      refs.set(ref.name, { ref, tls });
      backend = ref.name;
    }
    const before = keptLines?.get(key);
    lines.set(key, { line: before?.backend === backend ? before : Object.freeze({ key, backend }), route });
  }
  const backends: Backend[] = [];
  const cas = new Map<string, CaCertificate>();
  const resolutions = new Map<string, Resolution>();
  for (const { ref, tls } of refs.values()) {
    const before = tls === undefined ? kept?.get(ref.name) : undefined;
    const resolution = before !== undefined && sameRef(before.ref, ref) ? before : resolveL4Backend(ref, tls, sources, cache, cas);
    resolutions.set(ref.name, resolution);
    const { backend, resolved } = resolution;
    backends.push(backend);
    warnings.addAll(resolved.problems);
    if (resolved.issue !== undefined) {
      for (const { route, line } of lines.values()) {
        if (line.backend === ref.name) warnings.add({ object: label(route), field: route.origin.field, message: `backend ${ref.name} has no servers: ${resolved.issue}` });
      }
    }
  }
  backends.sort((a, b) => compareCodeUnits(a.name, b.name));
  const sorted = [...lines.values()].map(({ line }) => line).sort((a, b) => compareCodeUnits(a.key, b.key));
  const wildcards = [...lines.values()].flatMap(({ route }) => (route.sni?.startsWith('*.') ? [{ host: route.sni, wildcard: true }] : []));
  const model: L4Model = {
    frontends,
    lines: sorted,
    sniLookups: suffixLookups(wildcards, last?.model.sniLookups),
    backends,
    certificates,
    caCertificates: cas.size === 0 ? NO_L4_MODEL.caCertificates : [...cas.values()].sort((a, b) => compareCodeUnits(a.file, b.file)),
    excluded: excluded.sorted(),
    warnings: warnings.sorted(),
  };
  return { routing, servicePortTls, versions, expiresAt, model, resolutions };
}

/** A backend of layer-4 routes resolved, with the CA its servers are verified with (BackendTLSPolicy) noted in `cas`. */
function resolveL4Backend(ref: BackendRef, tls: PortTls, sources: MapModelSources, cache: L4Cache, cas: Map<string, CaCertificate>): Resolution {
  let { backend, resolved } = resolveBackend(ref, withPortTls(NO_SETTINGS, tls), sources, cache);
  const verifyCa = backend.transport?.caFile === undefined ? undefined : (backend.settings.protocol!.verifyCa as CaRef);
  const ca = tls !== undefined && 'refused' in tls ? { issue: tls.refused } : verifyCa && caOf(verifyCa, backend.transport!.caFile!, sources, cache);
  if (ca !== undefined && 'file' in ca) cas.set(ca.file, ca);
  else if (ca !== undefined) {
    // Unverifiable servers are not served, as for HTTP backends (backend-resolution.ts).
    const source = sourceOf(backend);
    const emptied = { ...backend, servers: Object.freeze([]) };
    backend = Object.freeze(source ? withSource(emptied, source) : emptied);
    resolved = { servers: backend.servers, issue: ca.issue, problems: resolved.problems };
  }
  return { ref, backend, resolved };
}
