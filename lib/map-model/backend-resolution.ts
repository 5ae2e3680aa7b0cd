import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { RouteAggregate } from './aggregate.ts';
import { NO_BACKEND, serviceKey } from './backend-names.ts';
import { compareCodeUnits } from '../compare.ts';
import { NO_PROBLEMS, ProblemList } from './problems.ts';
import { resolveBackend, type ServerCache } from './servers.ts';
import { patchSorted } from '../collections/sorted-list.ts';
import type { Backend, CaCertificate, MapModelSources } from './types.ts';
import type { BackendSettings, CaRef } from '../routing/settings.ts';
import { sameTls, tlsOfBackend, tlsOverridden, withPortTls, type PortTls } from './service-port-tls.ts';
import { isDeepStrictEqual } from 'node:util';
import { checkCaConfigMap, checkCaSecret } from './certificates.ts';
import { BackendSettingsTable } from './backend-settings.ts';
import { describeObject } from '../object-fields/names.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';

/**
 * The backends the Ingresses use, with their servers, kept by name from one
 * build to the next: a build resolves again only the backends that are new
 * or whose Service or EndpointSlices changed, and reports again the issue of
 * a backend whose users changed, and makes again the Backend of one whose
 * settings changed (its servers stay). Everything else stays as it was.
 */

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** What a backend without servers, or with endpoints left out, adds to the model's problems. */
interface Trouble {
  /** Why it has no servers, when that is a configuration fault. */
  readonly issue: string | undefined;
  /** The issue, reported on every Ingress that uses the backend. */
  readonly warnings: readonly Problem[];
  /** Endpoints left out. */
  readonly excluded: readonly Problem[];
}

export class BackendResolution {
  /** Sorted by name; frozen, like the lists patched from it. */
  backends: readonly Backend[] = Object.freeze([]);
  /** What the backends' problems add to the model, sorted. */
  excluded: readonly Problem[] = NO_PROBLEMS;
  warnings: readonly Problem[] = NO_PROBLEMS;
  /** The CA files the backends verify their servers against, sorted by file, each once. */
  caCertificates: readonly CaCertificate[] = Object.freeze([]);

  /** Per backend verifying its servers against a CA Secret, its CA file; undefined while the Secret is unusable. */
  readonly #cas = new Map<string, CaCertificate | undefined>();
  readonly #byName = new Map<string, Backend>();
  /** What each backend's users ask of it, settled (see backend-settings.ts). */
  readonly #settings = new BackendSettingsTable();
  /** The settings of the backends whose Service port a BackendTLSPolicy names, with what they were made of. */
  readonly #tlsSettings = new Map<string, { readonly base: BackendSettings; readonly tls: PortTls; readonly settings: BackendSettings }>();
  /** The users told their own TLS settings are not served, per backend whose Service port's policy overrides them. */
  readonly #overrides = new Map<string, readonly Problem[]>();
  /** The troubles of the few backends that have some. */
  readonly #troubles = new Map<string, Trouble>();
  /**
   * Backend names by "namespace/service": what a changed Service or slice
   * touches. Made when first asked for (a cold start never needs it), then
   * kept up to date.
   */
  #byService: Map<string, string[]> | undefined;

  /**
   * Brings the backends in line with the aggregate. `changed`: backends that
   * came, went or changed users since the last update; `touched`: the
   * Services ("namespace/name") whose Service or slices changed, or
   * undefined when the stores cannot tell (then every backend is resolved
   * again, which the per-object caches keep cheap); `secretsChanged`: the
   * Secrets may have changed, so backends verifying against a CA Secret
   * are resolved again.
   */
  update(aggregate: RouteAggregate, changed: ReadonlySet<string>, touched: ReadonlySet<string> | undefined, secretsChanged: boolean, sources: MapModelSources, cache: ServerCache): void {
    const everything = touched === undefined;
    const again = new Set<string>(secretsChanged ? this.#cas.keys() : []);
    // A backend's users move only with the backends the aggregate names, a re-read Ingress's included.
    let problemsMoved = false;
    for (const name of changed) problemsMoved = this.#settings.settle(name, aggregate.referrers(name).asks()) || problemsMoved;
    if (touched !== undefined && touched.size > 0) {
      const byService = this.#servicesIndex();
      for (const service of touched) for (const name of byService.get(service) ?? []) again.add(name);
    }
    /** Backends whose Backend object changed; each name is settled once. */
    const moved: string[] = [];
    let casMoved = false;
    const settle = (name: string) => {
      const before = this.#byName.get(name);
      // A route its policy answers (a redirect) names no backend (see claims.ts).
      const ref = name === NO_BACKEND.name ? undefined : aggregate.backend(name);
      if (!ref) {
        if (!before) return;
        this.#byName.delete(name);
        this.#index(before, name, false);
        moved.push(name);
        problemsMoved = this.#troubles.delete(name) || problemsMoved;
        problemsMoved = this.#noteOverrides(name, []) || problemsMoved;
        casMoved = this.#cas.delete(name) || casMoved;
        return;
      }
      const tls = tlsOfBackend(ref, sources.servicePortTls);
      const settings = this.#withTls(name, this.#settings.get(name), tls);
      problemsMoved = this.#noteOverrides(name, tlsOverridden(name, tls, aggregate.referrers(name).asks())) || problemsMoved;
      if (before && !everything && !again.has(name) && before.settings === settings && before.split === ref.split) {
        // Only its users changed: its issue, if any, is theirs to hear now.
        const trouble = this.#troubles.get(name);
        if (trouble?.issue !== undefined) {
          this.#troubles.set(name, { ...trouble, warnings: issueWarnings(name, trouble.issue, aggregate) });
          problemsMoved = true;
        }
        return;
      }
      let { backend, resolved } = resolveBackend(ref, settings, sources, cache);
      const verifyCa = backend.transport?.caFile === undefined ? undefined : (settings.protocol!.verifyCa as CaRef);
      const refused = tls !== undefined && 'refused' in tls ? { issue: tls.refused } : undefined;
      if (verifyCa !== undefined || this.#cas.has(name) || refused) {
        const ca = refused ?? (verifyCa && caOf(verifyCa, backend.transport!.caFile!, sources, cache));
        const file = ca !== undefined && 'file' in ca ? ca : undefined;
        if (verifyCa === undefined) casMoved = this.#cas.delete(name) || casMoved;
        else {
          this.#cas.set(name, file);
          casMoved = true;
        }
        if (ca !== undefined && !('file' in ca)) {
          // Unverifiable servers are not served: HAProxy gets none rather than ones it cannot trust.
          backend = Object.freeze(withSource({ ...backend, servers: Object.freeze([]) }, sourceOf(backend)!));
          resolved = { servers: backend.servers, issue: ca.issue, problems: resolved.problems };
          if (before && before.servers.length === 0 && before.transport === backend.transport && before.settings === backend.settings) backend = before;
        }
      }
      if (backend !== before) {
        this.#byName.set(name, backend);
        if (before) this.#index(before, name, false);
        this.#index(backend, name, true);
        moved.push(name);
      }
      const { issue, problems } = resolved;
      if (issue !== undefined || problems.length > 0) {
        const excluded = new ProblemList();
        excluded.addAll(problems);
        this.#troubles.set(name, { issue, warnings: issueWarnings(name, issue, aggregate), excluded: excluded.sorted() });
        problemsMoved = true;
      } else {
        problemsMoved = this.#troubles.delete(name) || problemsMoved;
      }
    };
    for (const name of changed) settle(name);
    for (const name of everything ? aggregate.backendNames() : again) if (!changed.has(name)) settle(name);
    this.backends = patchSorted(
      this.backends,
      moved,
      (name) => this.#byName.get(name),
      () => this.#byName.values(),
      (backend) => backend.name,
      compareCodeUnits,
    );
    if (casMoved) {
      const byFile = new Map<string, CaCertificate>();
      for (const ca of this.#cas.values()) if (ca !== undefined) byFile.set(ca.file, ca);
      this.caCertificates = Object.freeze([...byFile.values()].sort((a, b) => compareCodeUnits(a.file, b.file)));
    }
    if (problemsMoved) {
      const excluded = new ProblemList();
      const warnings = new ProblemList();
      for (const trouble of this.#troubles.values()) {
        excluded.addAll(trouble.excluded);
        warnings.addAll(trouble.warnings);
      }
      for (const conflicts of this.#settings.warnings()) warnings.addAll(conflicts);
      for (const overridden of this.#overrides.values()) warnings.addAll(overridden);
      this.excluded = excluded.sorted();
      this.warnings = warnings.sorted();
    }
  }

  /** Keeps a backend's override warnings (tlsOverridden); true when they changed. */
  #noteOverrides(name: string, told: readonly Problem[]): boolean {
    const last = this.#overrides.get(name);
    if (told.length === 0) return this.#overrides.delete(name);
    if (last && isDeepStrictEqual(last, told)) return false;
    this.#overrides.set(name, told);
    return true;
  }

  /** A backend's settings under its Service port's TLS; the same object while neither changed, so its Backend is kept. */
  #withTls(name: string, base: BackendSettings, tls: PortTls): BackendSettings {
    const last = this.#tlsSettings.get(name);
    if (tls === undefined || !('protocol' in tls)) {
      this.#tlsSettings.delete(name);
      return base;
    }
    if (last && last.base === base && sameTls(last.tls, tls)) return last.settings;
    const settings = withPortTls(base, tls);
    this.#tlsSettings.set(name, { base, tls, settings });
    return settings;
  }

  #servicesIndex(): Map<string, string[]> {
    if (!this.#byService) {
      this.#byService = new Map();
      for (const [name, backend] of this.#byName) this.#index(backend, name, true);
    }
    return this.#byService;
  }

  #index(backend: Backend, name: string, used: boolean): void {
    const byService = this.#byService;
    if (!byService) return;
    // A split backend is touched by each of its Services.
    const keys = backend.split ? backend.split.map((share) => serviceKey(share.namespace, share.service)) : [serviceKey(backend.namespace, backend.service)];
    for (const key of keys) {
      const names = byService.get(key);
      if (used) {
        if (names) names.push(name);
        else byService.set(key, [name]);
      } else if (names) {
        if (names.length === 1) byService.delete(key);
        else names.splice(names.indexOf(name), 1);
      }
    }
  }
}

/** The CA file of a Secret (or a ConfigMap), or why its servers cannot be verified. */
export function caOf(ref: CaRef, file: string, sources: MapModelSources, cache: ServerCache): CaCertificate | { readonly issue: string } {
  const label = describeObject(ref.configMap ? 'ConfigMap' : 'Secret', ref.namespace, ref.name);
  const secret = ref.configMap ? sources.configMap?.(ref.namespace, ref.name) : sources.secret(ref.namespace, ref.name);
  if (!secret) return { issue: `the CA ${label} to verify its servers with is not found` };
  let checked = cache.caSecrets.get(secret);
  if (!checked) cache.caSecrets.set(secret, (checked = ref.configMap ? checkCaConfigMap(secret) : checkCaSecret(secret)));
  if (!checked.ok) return { issue: `the CA ${label} to verify its servers with is unusable: ${checked.field} ${checked.reason}` };
  return Object.freeze({ file, pem: checked.pem });
}

/** A backend without servers is reported on every Ingress that uses it. */
function issueWarnings(backend: string, issue: string | undefined, aggregate: RouteAggregate): readonly Problem[] {
  if (issue === undefined) return NO_PROBLEMS;
  return aggregate
    .referrers(backend)
    .entries()
    .map(([label, field]) => ({ object: label, field, message: `backend ${backend} has no servers: ${issue}` }));
}

/** The Services ("namespace/name") a changed Service or EndpointSlice belongs to. */
export function touchedServices(changed: readonly KubeObject[]): Set<string> {
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
