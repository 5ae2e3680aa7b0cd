import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { IngressAggregate } from './aggregate.ts';
import { serviceKey } from './backend-names.ts';
import { compareCodeUnits } from '../compare.ts';
import { NO_PROBLEMS, ProblemList } from './problems.ts';
import { resolveBackend, type ServerCache } from './servers.ts';
import { patchSorted } from './sorted-list.ts';
import type { Backend, IngressSources } from './types.ts';

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

  readonly #byName = new Map<string, Backend>();
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
   * again, which the per-object caches keep cheap).
   */
  update(aggregate: IngressAggregate, changed: ReadonlySet<string>, touched: ReadonlySet<string> | undefined, sources: IngressSources, cache: ServerCache): void {
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
      const ref = aggregate.backend(name);
      if (!ref) {
        if (!before) return;
        this.#byName.delete(name);
        this.#index(before, name, false);
        moved.push(name);
        problemsMoved = this.#troubles.delete(name) || problemsMoved;
        return;
      }
      const settings = aggregate.backendSettings(name);
      if (before && !everything && !again.has(name) && before.settings === settings) {
        // Only its users changed: its issue, if any, is theirs to hear now.
        const trouble = this.#troubles.get(name);
        if (trouble?.issue !== undefined) {
          this.#troubles.set(name, { ...trouble, warnings: issueWarnings(name, trouble.issue, aggregate) });
          problemsMoved = true;
        }
        return;
      }
      const { backend, resolved } = resolveBackend(ref, settings, sources, cache);
      if (backend !== before) {
        this.#byName.set(name, backend);
        if (!before) this.#index(backend, name, true);
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
    if (problemsMoved) {
      const excluded = new ProblemList();
      const warnings = new ProblemList();
      for (const trouble of this.#troubles.values()) {
        excluded.addAll(trouble.excluded);
        warnings.addAll(trouble.warnings);
      }
      this.excluded = excluded.sorted();
      this.warnings = warnings.sorted();
    }
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
