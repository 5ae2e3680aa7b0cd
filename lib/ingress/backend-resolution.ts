import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { IngressAggregate } from './aggregate.ts';
import { compare } from './order.ts';
import { NO_PROBLEMS, ProblemList } from './problems.ts';
import { resolveBackend } from './servers.ts';
import { patchSorted } from './sorted-list.ts';
import type { Backend, IngressModelCache, IngressSources } from './view-model.ts';

/**
 * The backends the Ingresses use, with their servers, kept by name from one
 * build to the next: a build resolves again only the backends that are new
 * or whose Service or EndpointSlices changed, and reports again the issue of
 * a backend whose users changed. Everything else stays as it was.
 */

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface ResolvedBackend {
  readonly backend: Backend;
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

  readonly #byName = new Map<string, ResolvedBackend>();
  /**
   * Backend names by "namespace/service": what a changed Service or slice
   * touches. Made when first asked for (a cold start never needs it), then
   * kept up to date.
   */
  #byService: Map<string, string[]> | undefined;
  readonly #withProblems = new Set<ResolvedBackend>();

  /**
   * Brings the backends in line with the aggregate. `changed`: backends that
   * came, went or changed users since the last update; `touched`: the
   * Services ("namespace/name") whose Service or slices changed, or
   * undefined when the stores cannot tell (then every backend is resolved
   * again, which the per-object caches keep cheap).
   */
  update(
    aggregate: IngressAggregate,
    changed: ReadonlySet<string>,
    touched: ReadonlySet<string> | undefined,
    sources: IngressSources,
    cache: IngressModelCache,
  ): void {
    const everything = touched === undefined;
    const again = new Set<string>();
    if (touched !== undefined && touched.size > 0) {
      const byService = this.#servicesIndex();
      for (const service of touched) for (const name of byService.get(service) ?? []) again.add(name);
    }
    /** Backends whose Backend object changed; each name is settled once. */
    const moved: string[] = [];
    let problemsMoved = false;
    const settle = (name: string) => {
      const before = this.#byName.get(name);
      const now = this.#resolved(name, before, everything || again.has(name), aggregate, sources, cache);
      if (now === before) return;
      const hadProblems = before !== undefined && this.#withProblems.delete(before);
      const hasProblems = now !== undefined && now.warnings.length + now.excluded.length > 0;
      if (hasProblems) this.#withProblems.add(now);
      problemsMoved ||= hadProblems || hasProblems;
      if (now) this.#byName.set(name, now);
      else this.#byName.delete(name);
      if (before?.backend !== now?.backend) moved.push(name);
      if (!before) this.#index(now!.backend, name, true);
      else if (!now) this.#index(before.backend, name, false);
    };
    for (const name of changed) settle(name);
    for (const name of everything ? aggregate.backendNames() : again) if (!changed.has(name)) settle(name);
    this.backends = patchSorted(
      this.backends,
      moved,
      (name) => this.#byName.get(name)?.backend,
      () => Array.from(this.#byName.values(), (resolved) => resolved.backend),
      (backend) => backend.name,
      compare,
    );
    if (problemsMoved) {
      const excluded = new ProblemList();
      const warnings = new ProblemList();
      for (const resolved of this.#withProblems) {
        excluded.addAll(resolved.excluded);
        warnings.addAll(resolved.warnings);
      }
      this.excluded = excluded.sorted();
      this.warnings = warnings.sorted();
    }
  }

  /** A backend as it is now: undefined once unused, `before` when nothing it shows changed. */
  #resolved(
    name: string,
    before: ResolvedBackend | undefined,
    again: boolean,
    aggregate: IngressAggregate,
    sources: IngressSources,
    cache: IngressModelCache,
  ): ResolvedBackend | undefined {
    const ref = aggregate.backend(name);
    if (!ref) return undefined;
    if (before && !again) {
      // Only its users changed: its issue, if any, is theirs to hear now.
      return before.issue === undefined ? before : { ...before, warnings: issueWarnings(name, before.issue, aggregate) };
    }
    const { backend, resolved } = resolveBackend(ref, sources, cache);
    const { issue, problems } = resolved;
    let excluded = NO_PROBLEMS;
    if (problems.length > 0) {
      const list = new ProblemList();
      list.addAll(problems);
      excluded = list.sorted();
    }
    return { backend, issue, warnings: issueWarnings(name, issue, aggregate), excluded };
  }

  #servicesIndex(): Map<string, string[]> {
    if (!this.#byService) {
      this.#byService = new Map();
      for (const [name, { backend }] of this.#byName) this.#index(backend, name, true);
    }
    return this.#byService;
  }

  #index(backend: Backend, name: string, used: boolean): void {
    const byService = this.#byService;
    if (!byService) return;
    const key = serviceKey(backend.namespace, backend.service);
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

/** A backend without servers is reported on every Ingress that uses it. */
function issueWarnings(backend: string, issue: string | undefined, aggregate: IngressAggregate): readonly Problem[] {
  if (issue === undefined) return NO_PROBLEMS;
  return aggregate.referrers(backend).entries().map(([label, field]) => ({ object: label, field, message: `backend ${backend} has no servers: ${issue}` }));
}

function serviceKey(namespace: string, service: string): string {
  return `${namespace}/${service}`;
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
