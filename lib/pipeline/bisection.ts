import type { ValueSource } from './model.ts';

/** What to do next in a search for the object at fault. */
export type BisectionStep =
  /** Render and validate without these objects, and tell the result. */
  | { readonly type: 'try'; readonly without: readonly ValueSource[] }
  /** Leaving this object out is enough, with the others as they are. */
  | { readonly type: 'found'; readonly culprit: ValueSource }
  /** Leaving every suspect out does not help: none of them is at fault. */
  | { readonly type: 'unexplained' };

/**
 * Finds one object at fault among suspects by halving, with a validation
 * per step: first without all of them (if that is still refused, they are
 * not the cause); then, keeping the invariant "refused with the suspects in,
 * accepted without them", without the first half: accepted means the fault
 * is in that half, refused means (the first half staying out) in the
 * other. About log2(n) + 1 validations find one culprit; a configuration
 * with several is searched again once the first is out.
 */
export class Bisection {
  /** Left out in every trial from now on. */
  #without: ValueSource[] = [];
  #suspects: readonly ValueSource[];
  #half: readonly ValueSource[] | undefined;
  #checkedAll = false;

  constructor(suspects: readonly ValueSource[]) {
    this.#suspects = suspects;
  }

  next(): BisectionStep {
    if (!this.#checkedAll) return { type: 'try', without: this.#suspects };
    if (this.#suspects.length === 0) return { type: 'unexplained' };
    if (this.#suspects.length === 1) return { type: 'found', culprit: this.#suspects[0]! };
    this.#half = this.#suspects.slice(0, Math.floor(this.#suspects.length / 2));
    return { type: 'try', without: [...this.#without, ...this.#half] };
  }

  /** The verdict of the trial `next` asked for: true when the configuration was accepted. */
  record(accepted: boolean): void {
    if (!this.#checkedAll) {
      this.#checkedAll = true;
      if (!accepted) this.#suspects = [];
      return;
    }
    const half = this.#half!;
    if (accepted) {
      this.#suspects = half;
    } else {
      this.#without.push(...half);
      this.#suspects = this.#suspects.slice(half.length);
    }
  }
}
