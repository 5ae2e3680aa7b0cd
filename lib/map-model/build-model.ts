import type { KubeObject, Problem } from '../pipeline/model.ts';
import { suffixLookups } from './suffix-lookups.ts';
import { withSource } from '../pipeline/value-source.ts';
import { ModelSource } from './model-source.ts';
import { RouteAggregate, type ReadClaims } from './aggregate.ts';
import { NOTHING_UNSERVED } from './unserved.ts';
import { BackendResolution, touchedServices } from './backend-resolution.ts';
import { cachedTlsCheck, type CheckedCa, type CheckedCertificate } from './certificates.ts';
import { hostsByClientCa, resolveClientCas, type ClientCas } from './client-cas.ts';
import { certificateFile } from './certificate-file.ts';
import { crtListLines, FALLBACK_FILTER, withFallback } from './crt-list-lines.ts';
import { claimsOf } from './claims.ts';
import { describeObject } from '../object-fields/names.ts';
import { compareCodeUnits } from '../compare.ts';
import { NO_PROBLEMS, ProblemList } from './problems.ts';
import type { ListenerUses } from './listener-secret-uses.ts';
import type { BackendEntry, ServerCache, SliceEntry } from './servers.ts';
import { sameItems } from '../collections/sorted-list.ts';
import type { CaCertificate, Certificate, HostEntry, L4Model, MapModel, MapModelSources, SecretUse, StoreVersions } from './types.ts';
import { resolveUserlists, type UserlistCache, type Userlists } from './userlists.ts';
import { readRoutes, replacedRoutes, RouteReadCache } from './route-reads.ts';
import { CHOICE_FIELDS } from './backend-choice.ts';
import { buildL4Model, type L4Last } from './l4-model.ts';
import { NO_L4_ROUTING } from '../routing/l4-route.ts';
import { sameVersions } from './store-versions.ts';
import { portTlsChanges } from './service-port-tls.ts';

/**
 * What one build leaves for the next: results computed from one object are
 * kept while the store keeps that same object (stores replace an object
 * when it changes, never mutate it), keyed weakly so that objects gone from
 * the stores take their entries with them; and the aggregate and backends,
 * which a build updates with what changed since the last one.
 */
export class MapModelCache implements ServerCache {
  readonly slices = new WeakMap<KubeObject, SliceEntry>();
  readonly secrets = new WeakMap<KubeObject, CheckedCertificate>();
  readonly backends = new WeakMap<KubeObject, BackendEntry>();
  readonly caSecrets = new WeakMap<KubeObject, CheckedCa>();
  readonly userlists: UserlistCache = new WeakMap();
  readonly httpRoutes = new RouteReadCache();
  /** The state of the last build, for the next to start from. */
  last: LastBuild | undefined;
  /** The last layer-4 part, and the last model with it (kept while both parts are the same). */
  l4: L4Last | undefined;
  combined: { readonly http: HttpModel; readonly l4: L4Model; readonly model: MapModel } | undefined;

  /**
   * The translated objects the last build serves nothing of (aggregate.ts
   * unserved), by the keys it was given them under: not in the model, whose
   * strings a template may write, since they are the objects themselves.
   */
  get unserved(): ReadonlySet<KubeObject> {
    return this.last?.aggregate.unserved ?? NOTHING_UNSERVED;
  }
}

/** The model but its layer-4 part (l4-model.ts). */
type HttpModel = Omit<MapModel, 'l4'>;

interface LastBuild {
  readonly className: string;
  /** Updated in place by every build. */
  readonly aggregate: RouteAggregate;
  readonly resolution: BackendResolution;
  readonly stores: readonly unknown[] | undefined;
  /** The Ingress list and store version the aggregate is in line with. */
  readonly ingresses: readonly KubeObject[];
  readonly ingressVersion: number | undefined;
  readonly versions: StoreVersions | undefined;
  /** The keys of the HTTPRoutes the aggregate holds, and the Gateway API's problems, as of this build. */
  readonly routeKeys: readonly KubeObject[];
  readonly gatewayProblems: readonly Problem[];
  /** How Service ports were spoken to (BackendTLSPolicies), as of this build. */
  readonly servicePortTls: MapModelSources['servicePortTls'];
  /** The Secrets HTTPS listeners name, and the names they were refused. */
  readonly listenerSecrets: ListenerUses;
  /** The Secrets the Ingresses named, and what became of them. */
  readonly secrets: readonly SecretUse[];
  readonly certificates: Certificates;
  readonly userlists: Userlists;
  readonly clientCas: ClientCas;
  readonly excluded: MergedProblems;
  readonly warnings: MergedProblems;
  readonly model: HttpModel;
}

interface Certificates {
  readonly certificates: readonly Certificate[];
  readonly excluded: readonly Problem[];
  readonly warnings: readonly Problem[];
  /** When the first of them expires: until then they hold as they are. */
  readonly expiresAt: number;
}

/** The Secrets the Ingresses' TLS entries name, then the listeners', then the fallback certificate's own line (crt-list-lines.ts). */
function certificateUses(ingresses: readonly SecretUse[], listeners: ListenerUses): readonly SecretUse[] {
  if (listeners.uses.length === 0 && listeners.fallback === undefined) return ingresses;
  const fallback: SecretUse[] = listeners.fallback ? [{ ...listeners.fallback, hosts: [], excludedHosts: [FALLBACK_FILTER], fallback: true }] : [];
  return [...ingresses, ...listeners.uses, ...fallback];
}

function resolveCertificates(secrets: readonly SecretUse[], sources: MapModelSources, cache: MapModelCache, now: number): Certificates {
  const excluded: Problem[] = [];
  const warnings: Problem[] = [];
  const certificates: Certificate[] = [];
  let expiresAt = Number.POSITIVE_INFINITY;
  for (const use of secrets) {
    const { namespace, name, excludedHosts, referrers, fallback } = use;
    const secretLabel = describeObject('Secret', namespace, name);
    const secret = sources.secret(namespace, name);
    if (!secret) {
      for (const [label, field] of referrers.entries()) warnings.push({ object: label, field, message: `${secretLabel} not found; TLS entry not served` });
      continue;
    }
    const checked = cachedTlsCheck(secret, cache.secrets, now);
    if (!checked.ok) {
      excluded.push({ object: secretLabel, field: checked.field, message: `${checked.reason}; TLS entries using it left out` });
      continue;
    }
    const groups = hostsByClientCa(use);
    const lines = groups.map(({ hosts }) => crtListLines(hosts, excludedHosts));
    if (lines.some((group) => group === undefined)) {
      excluded.push({
        object: secretLabel,
        field: 'data[tls.crt]',
        message: `its wildcards cover ${excludedHosts.length} hosts of other namespaces, too many to exclude on a crt-list line; TLS entries using it left out`,
      });
      continue;
    }
    expiresAt = Math.min(expiresAt, checked.notAfter);
    const source = new ModelSource('Secret', secret, 'data');
    const file = certificateFile(namespace, name);
    const id = `${namespace}/${name}`;
    for (const [index, { clientCaFile, clientVerify }] of groups.entries()) {
      const client = clientCaFile === undefined ? {} : { clientCaFile, clientVerify };
      for (const hosts of lines[index]!) {
        certificates.push(withSource({ file, pem: checked.pem, hosts, excludedHosts, secret: id, ...client, ...(fallback ? { fallback } : {}) }, source));
      }
    }
  }
  // Stable: the lines of one Secret keep their order.
  certificates.sort((a, b) => compareCodeUnits(a.file, b.file));
  return { certificates, excluded: excluded.length > 0 ? excluded : NO_PROBLEMS, warnings: warnings.length > 0 ? warnings : NO_PROBLEMS, expiresAt };
}

/** The problems of every part of a build, sorted, each once; with the parts, so the next build can tell whether they moved. */
interface MergedProblems {
  readonly parts: readonly (readonly Problem[])[];
  readonly merged: readonly Problem[];
}

function mergedProblems(parts: readonly (readonly Problem[])[], last: MergedProblems | undefined): MergedProblems {
  if (last && sameItems(last.parts, parts)) return last;
  const list = new ProblemList();
  for (const part of parts) list.addAll(part);
  return { parts, merged: list.sorted() };
}

/**
 * Builds the view model from the Ingresses of one class and the Services,
 * EndpointSlices and Secrets they refer to. Pure and deterministic: the same
 * objects in any order give a deep-equal model. With a cache kept between
 * builds, a build reads only the Ingresses that changed since the last one
 * and settles only the hosts, routes and backends they touch, and resolves
 * only the backends whose Service or EndpointSlices changed.
 */
export function buildMapModel(sources: MapModelSources, cache: MapModelCache = new MapModelCache()): MapModel {
  const http = buildHttpModel(sources, cache);
  cache.l4 = buildL4Model(sources.l4 ?? NO_L4_ROUTING, sources, cache, cache.l4, sources.now ?? Date.now());
  const l4 = cache.l4.model;
  if (cache.combined?.http === http && cache.combined.l4 === l4) return cache.combined.model;
  const model: MapModel = {
    ...http,
    l4,
    // The CA files of backends after TLS Terminate (BackendTLSPolicy) beside the HTTP backends'; one file per CA, whoever names it.
    caCertificates: l4.caCertificates.length === 0 ? http.caCertificates : mergedFiles(http.caCertificates, l4.caCertificates),
    excluded: l4.excluded.length === 0 ? http.excluded : new ProblemList().sortedWith(http.excluded, l4.excluded),
    warnings: l4.warnings.length === 0 ? http.warnings : new ProblemList().sortedWith(http.warnings, l4.warnings),
  };
  cache.combined = { http, l4, model };
  return model;
}

function buildHttpModel(sources: MapModelSources, cache: MapModelCache): HttpModel {
  const sharing = sources.sharedHostNamespaces ?? [];
  const last = cache.last?.className === sources.className && cache.last.aggregate.sharesHostsAs(sharing) ? cache.last : undefined;
  // The aggregate and backends are updated in place: should that fail half
  // way, the next build must start afresh rather than from a half-made state.
  cache.last = undefined;
  const aggregate = last?.aggregate ?? new RouteAggregate(sharing);
  const resolution = last?.resolution ?? new BackendResolution();
  const sameStores = last?.stores !== undefined && sources.stores !== undefined && sameItems(last.stores, sources.stores);

  const versions = sources.versions;
  const lastVersions = sameStores ? last!.versions : undefined;
  const othersUnchanged = lastVersions !== undefined && versions !== undefined && sameVersions(lastVersions, versions);
  let touched: ReadonlySet<string> | undefined;
  if (othersUnchanged) touched = new Set();
  else if (lastVersions !== undefined && sources.changedSince) {
    const changed = sources.changedSince(lastVersions);
    touched = changed && touchedServices(changed);
  }

  const lookup = sources.service;
  // Ports named by Ingresses resolve against their Services: a changed Service may rename a backend.
  if (!othersUnchanged) aggregate.renamePorts(touched, lookup);
  const { reads: routes, wildcards } = readRoutes(sources.httpRoutes ?? [], cache.httpRoutes);
  const routeKeys = routes.map((route) => route.key);
  const routesMoved = !sameItems(last?.routeKeys ?? [], routeKeys);
  const read: ReadClaims = (ingress) => {
    const route = cache.httpRoutes.byKey.get(ingress);
    if (route !== undefined) return route;
    const translated = sources.translate(ingress);
    // An Ingress's translation has no warnings, nor routes no map line can serve (one backend each, without filters of its own).
    return translated && claimsOf(translated).read;
  };
  // HTTPRoutes are held by their keys beside the Ingresses: a sync lists both, or it would drop the ones it does not list.
  const listed = routeKeys.length === 0 ? sources.ingresses : [...sources.ingresses, ...routeKeys];
  const gatewayProblems = last && sameProblems(last.gatewayProblems, sources.gatewayProblems ?? NO_PROBLEMS) ? last.gatewayProblems : (sources.gatewayProblems ?? NO_PROBLEMS);
  const tracking = sources.ingressChanges;
  const replaced = routesMoved && last ? replacedRoutes(last.routeKeys, routeKeys) : undefined;
  if (routesMoved && replaced === undefined) {
    aggregate.sync(listed, read, lookup);
  } else {
    if (replaced) aggregate.update(replaced.before, (key) => replaced.now.get(key), read, lookup);
    if (sameStores && tracking && last!.ingressVersion !== undefined) {
      if (tracking.version !== last!.ingressVersion) {
        const changed = tracking.since(last!.ingressVersion);
        if (changed) aggregate.update(changed, tracking.current, read, lookup);
        else aggregate.sync(listed, read, lookup);
      }
    } else if (last?.ingresses !== sources.ingresses) {
      aggregate.sync(listed, read, lookup);
    }
  }
  const changes = aggregate.settle();

  const listenerSecrets = aggregate.secretUses.listeners.uses(sources.gatewayCertificates ?? []);
  // Service ports' TLS (BackendTLSPolicies) resolves again the backends of the Services whose ports changed.
  const tlsServices = portTlsChanges(last?.servicePortTls, sources.servicePortTls);
  const servicePortTls = tlsServices.size === 0 && last ? last.servicePortTls : sources.servicePortTls;
  const kept = { servicePortTls, stores: sources.stores, ingresses: sources.ingresses, ingressVersion: tracking?.version, versions, routeKeys, gatewayProblems, listenerSecrets };
  const now = sources.now ?? Date.now();
  const certificatesHold = last !== undefined && now <= last.certificates.expiresAt;
  if (last && !changes.any && othersUnchanged && certificatesHold && gatewayProblems === last.gatewayProblems && listenerSecrets === last.listenerSecrets && tlsServices.size === 0) {
    cache.last = { ...last, ...kept };
    return last.model;
  }

  // CA files come from Secrets and ConfigMaps (a BackendTLSPolicy's caCertificateRefs).
  const secretsChanged =
    !othersUnchanged && (lastVersions === undefined || versions === undefined || !sameItems(lastVersions.secrets, versions.secrets) || lastVersions.configMaps !== versions.configMaps);
  const touchedOrTls = touched === undefined || tlsServices.size === 0 ? touched : new Set([...touched, ...tlsServices]);
  resolution.update(aggregate, changes.backends, touchedOrTls, secretsChanged, sources, cache);
  // Certificates depend on the Secrets the Ingresses name, and on the Secrets.
  const certificates =
    last && othersUnchanged && certificatesHold && last.secrets === aggregate.secrets && last.listenerSecrets === listenerSecrets
      ? last.certificates
      : resolveCertificates(certificateUses(aggregate.secrets, listenerSecrets), sources, cache, now);
  const userlists = resolveUserlists(aggregate.policies.list, sources.secret, cache.userlists, last?.userlists);
  const clientCas = keptClientCas(
    resolveClientCas(aggregate.policies.list, [...aggregate.secrets, ...certificateUses([], listenerSecrets)], sources, cache.caSecrets, last?.clientCas),
    last?.clientCas,
  );
  const excluded = mergedProblems([aggregate.excluded, resolution.excluded, certificates.excluded, gatewayProblems], last?.excluded);
  const warnings = mergedProblems(
    [aggregate.warnings, resolution.warnings, certificates.warnings, listenerSecrets.warnings, userlists.warnings, clientCas.warnings, ...routes.map((route) => route.warnings)],
    last?.warnings,
  );
  const served = suffixHosts(aggregate.hosts, wildcards, last?.model);
  const next: HttpModel = {
    hosts: aggregate.hosts,
    suffixHosts: served,
    suffixLookups: suffixLookups(served, last?.model.suffixLookups),
    exactRoutes: aggregate.routeLines.exactRoutes,
    prefixRoutes: aggregate.routeLines.prefixRoutes,
    regexRoutes: aggregate.routeLines.regexRoutes(aggregate.regexRoutes),
    regexConditions: aggregate.routeLines.regex.conditions,
    candidates: aggregate.routeLines.candidates,
    conditions: aggregate.routeLines.conditions,
    conditionShapes: aggregate.routeLines.conditionShapes,
    policies: aggregate.policies.list,
    headerSlots: aggregate.policies.slots,
    policyLines: aggregate.policies.lines,
    policySettings: aggregate.policies.settings,
    serverTimeouts: aggregate.policies.list.some((policy) => policy.serverTimeout !== undefined),
    mirrors: aggregate.policies.list.some((policy) => policy.mirrors.length > 0),
    bodyLimits: aggregate.policies.list.some((policy) => policy.settings.bodySizeLimit !== undefined),
    externalAuth: aggregate.policies.list.some((policy) => policy.externalAuth !== undefined || policy.gatewayExternalAuth !== undefined),
    authServices: aggregate.policies.list.some((policy) => policy.gatewayExternalAuth !== undefined),
    choiceFields: routes.some((route) => route.choices) ? CHOICE_FIELDS : NO_CHOICE_FIELDS,
    userlists: userlists.userlists,
    backends: resolution.backends,
    // Made each time: which hosts other groups hold moves without a certificate changing.
    certificates: listenerSecrets.fallback ? withFallback(certificates.certificates, aggregate.secretUses.listeners.heldElsewhere()) : certificates.certificates,
    fallbackCertificate: certificates.certificates.some((certificate) => certificate.fallback === true),
    clientCertificates: certificates.certificates.some((certificate) => certificate.clientVerify === 'optional'),
    separateClientCas: new Set(certificates.certificates.map((certificate) => certificate.clientCaFile).filter((file) => file !== undefined)).size > 1,
    caCertificates: clientCas.files.length === 0 ? resolution.caCertificates : withClientCas(resolution.caCertificates, clientCas, last?.model),
    defaultBackend: aggregate.defaultBackend,
    excluded: excluded.merged,
    warnings: warnings.merged,
  };
  // A change that moved nothing (a new resourceVersion alone) leaves the model as it was.
  const model = last && sameModel(last.model, next) ? last.model : next;
  cache.last = { className: sources.className, aggregate, resolution, ...kept, secrets: aggregate.secrets, certificates, userlists, clientCas, excluded, warnings, model };
  return model;
}

/** The served wildcard hosts an HTTPRoute claims; the last list while it holds the same hosts. */
function suffixHosts(hosts: readonly HostEntry[], wildcards: ReadonlySet<string>, last: HttpModel | undefined): readonly HostEntry[] {
  const list = wildcards.size === 0 ? NO_HOSTS : hosts.filter((host) => host.wildcard && wildcards.has(host.host));
  return last &&
    sameItems(
      last.suffixHosts.map((host) => host.host),
      list.map((host) => host.host),
    )
    ? last.suffixHosts
    : list.length === 0
      ? NO_HOSTS
      : Object.freeze(list);
}

const NO_HOSTS: readonly HostEntry[] = Object.freeze([]);
const NO_CHOICE_FIELDS: readonly number[] = Object.freeze([]);

function sameProblems(a: readonly Problem[], b: readonly Problem[]): boolean {
  return a === b || (a.length === b.length && a.every((problem, i) => problem.object === b[i]!.object && problem.field === b[i]!.field && problem.message === b[i]!.message));
}

/** The same warnings as the last build's kept as they were, so the merged problems are too. */
function keptClientCas(cas: ClientCas, last: ClientCas | undefined): ClientCas {
  return last && cas.warnings !== last.warnings && sameProblems(cas.warnings, last.warnings) ? { ...cas, warnings: last.warnings } : cas;
}

/** The servers' CA files and the client CA files, sorted by file; the last model's list while it holds the same. */
function withClientCas(servers: readonly CaCertificate[], cas: ClientCas, last: HttpModel | undefined): readonly CaCertificate[] {
  const merged = [...servers, ...cas.files].sort((a, b) => compareCodeUnits(a.file, b.file));
  return last && sameItems(last.caCertificates, merged) ? last.caCertificates : Object.freeze(merged);
}

function sameModel(a: HttpModel, b: HttpModel): boolean {
  return (Object.keys(a) as (keyof HttpModel)[]).every((key) => a[key] === b[key]);
}

/** Two sorted lists of CA files as one, each file once. */
function mergedFiles(a: readonly CaCertificate[], b: readonly CaCertificate[]): readonly CaCertificate[] {
  const byFile = new Map<string, CaCertificate>([...a, ...b].map((ca) => [ca.file, ca]));
  return Object.freeze([...byFile.values()].sort((x, y) => compareCodeUnits(x.file, y.file)));
}
