import type { Problem } from '../pipeline/model.ts';
import type { ObjectClaims } from './claim-types.ts';
import { aheadBy, compareStanding } from '../routing/precedence.ts';
import { NO_PROBLEMS } from './problems.ts';

/**
 * The served Ingresses that set spec.defaultBackend: the oldest one's is
 * served, and the others that set another one are told so.
 */
export class DefaultBackends {
  /** Oldest first. */
  readonly #reads: ObjectClaims[] = [];
  #served: ObjectClaims | undefined;
  #touched = false;
  /** Default backends not served, with the one that is. */
  warnings: readonly Problem[] = NO_PROBLEMS;

  /** The Ingress whose default backend is served, as of the last settle(). */
  get served(): ObjectClaims | undefined {
    return this.#served;
  }

  add(read: ObjectClaims): void {
    let low = 0;
    let high = this.#reads.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareStanding(this.#reads[middle]!.place, read.place) < 0) low = middle + 1;
      else high = middle;
    }
    this.#reads.splice(low, 0, read);
    this.#touched = true;
  }

  remove(read: ObjectClaims): void {
    this.#reads.splice(this.#reads.indexOf(read), 1);
    this.#touched = true;
  }

  /** A default backend was resolved to another backend: the warnings are made again. */
  touch(): void {
    this.#touched = true;
  }

  /**
   * The served default backend and its warnings after what moved since the
   * last call; true when the warnings changed. `backends` gets the backends
   * whose referrers moved.
   */
  settle(backends: Set<string>): boolean {
    if (!this.#touched) return false;
    this.#touched = false;
    const first = this.#reads[0];
    if (first !== this.#served) {
      // The default backend counts its Ingress among its referrers.
      if (this.#served) backends.add(this.#served.served!.defaultBackend!.backend.name);
      if (first) backends.add(first.served!.defaultBackend!.backend.name);
      this.#served = first;
    }
    const before = this.warnings;
    const problems: Problem[] = [];
    if (first) {
      const served = first.served!;
      const backend = served.defaultBackend!.backend.name;
      for (let i = 1; i < this.#reads.length; i++) {
        const other = this.#reads[i]!.served!;
        const { backend: ref, field } = other.defaultBackend!;
        if (ref.name === backend) continue;
        problems.push({ object: other.label, field, message: `not served: ${aheadBy(first.place, this.#reads[i]!.place, served.label)} sets the default backend ${backend}` });
      }
    }
    this.warnings = problems.length > 0 ? problems : NO_PROBLEMS;
    return before.length > 0 || problems.length > 0;
  }
}
