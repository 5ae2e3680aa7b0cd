import type { Problem } from '../pipeline/model.ts';
import { compareCodeUnits } from '../compare.ts';

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

  sorted(): Problem[] {
    return [...this.#problems.values()].sort((a, b) => compareCodeUnits(a.object, b.object) || compareCodeUnits(a.field, b.field) || compareCodeUnits(a.message, b.message));
  }
}

/** Who asked for a backend or Secret: the first field of each Ingress that did, in the order they asked, for warnings. */
export class Referrers {
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
