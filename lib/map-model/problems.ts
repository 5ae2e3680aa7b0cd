import type { Problem } from '../pipeline/model.ts';
import { compareCodeUnits } from '../compare.ts';
import type { BackendSettings } from '../routing/settings.ts';
import type { Standing } from '../routing/precedence.ts';

export const NO_PROBLEMS: readonly Problem[] = Object.freeze([]);

/** Problems keyed by their whole content, so one reached twice is reported once. */
export class ProblemList {
  readonly #problems = new Map<string, Problem>();

  add(problem: Problem): void {
    this.#problems.set(JSON.stringify([problem.object, problem.field, problem.message]), problem);
  }

  addAll(problems: readonly Problem[]): void {
    for (let i = 0; i < problems.length; i++) this.add(problems[i]!);
  }

  /** These lists' problems, each once, sorted. */
  sortedWith(...lists: readonly (readonly Problem[])[]): Problem[] {
    for (const list of lists) this.addAll(list);
    return this.sorted();
  }

  sorted(): Problem[] {
    return [...this.#problems.values()].sort((a, b) => compareCodeUnits(a.object, b.object) || compareCodeUnits(a.field, b.field) || compareCodeUnits(a.message, b.message));
  }
}

/** What an Ingress using a backend asks of it, and where it stands when Ingresses conflict. */
export interface BackendAsk {
  readonly place: Standing;
  readonly settings: BackendSettings;
}

/** Who asked for a backend or Secret: the first field of each Ingress that did, in the order they asked, for warnings; for a backend, with what each asks of it. */
export class Referrers {
  // Most backends have one Ingress asking: a Map is only made for a second.
  #label: string | undefined;
  #field = '';
  #ask: BackendAsk | undefined;
  #more: Map<string, readonly [string, BackendAsk | undefined]> | undefined;

  add(label: string, field: string, ask?: BackendAsk): void {
    if (this.#label === undefined) {
      this.#label = label;
      this.#field = field;
      this.#ask = ask;
    } else if (label !== this.#label) {
      this.#more ??= new Map();
      if (!this.#more.has(label)) this.#more.set(label, [field, ask]);
    }
  }

  entries(): (readonly [string, string])[] {
    if (this.#label === undefined) return [];
    return [[this.#label, this.#field], ...[...(this.#more ?? [])].map(([label, [field]]): [string, string] => [label, field])];
  }

  /** Each Ingress with what it asks of the backend. */
  *asks(): Generator<BackendAsk & { readonly label: string }> {
    if (this.#label === undefined) return;
    if (this.#ask) yield { label: this.#label, ...this.#ask };
    for (const [label, [, ask]] of this.#more ?? []) if (ask) yield { label, ...ask };
  }
}
