import type { RenderOutput } from '../pipeline/model.ts';
import type { CheckVerdict } from './haproxy-check.ts';
import type { Contribution } from './judge.ts';
import { unionOf, type World } from './small-world.ts';

/**
 * `haproxy -c` on the configuration made for each admitted object, at a
 * cost that holds under a burst of admissions. A run takes tens of
 * milliseconds whatever the configuration's size (HAProxy's start-up), so:
 * verdicts are kept by content hash (a retried or repeated admission runs
 * nothing); the same hash asked for twice at once waits for one run; at
 * most `concurrency` runs at a time; whatever queues behind them is
 * checked together, as the union of the objects' worlds, in one run; and a
 * run that could start at once waits a few milliseconds for the reviews
 * arriving with the first (clients answered together come back together),
 * rather than leaving them to wait a whole run behind it. A
 * union HAProxy accepts accepts each of its members; one it refuses says
 * nothing of each, so they are then checked alone, and only the objects at
 * fault are refused.
 */

export interface CheckedContribution {
  readonly verdict: CheckVerdict;
  /** True when the verdict was kept from an earlier run. */
  readonly cached: boolean;
}

export interface ContributionCheckerOptions {
  /** Renders a world into a base directory: the configuration made for it. */
  readonly render: (world: World, baseDir: string) => RenderOutput;
  /** Judges one configuration with `haproxy -c` (see haproxy-check.ts); throws when it cannot. */
  readonly check: (render: (baseDir: string) => RenderOutput) => Promise<CheckVerdict>;
  /** Runs of `haproxy -c` at once. */
  readonly concurrency: number;
  /** Objects checked together in one run at most. Default 32. */
  readonly maxBatch?: number;
  /** Verdicts kept. Default 4096. */
  readonly cacheSize?: number;
  /** How long a run that could start at once waits for more to check with it. Default 5 ms. */
  readonly gatherMs?: number;
}

interface Entry {
  readonly contribution: Contribution;
  /** Checked alone: a union with it was refused. */
  solo: boolean;
  readonly resolve: (checked: CheckedContribution) => void;
  readonly reject: (error: unknown) => void;
  readonly promise: Promise<CheckedContribution>;
}

export class ContributionChecker {
  readonly #options: ContributionCheckerOptions;
  readonly #verdicts = new Map<string, CheckVerdict>();
  readonly #pending = new Map<string, Entry>();
  readonly #queue: Entry[] = [];
  #running = 0;
  #gathering: NodeJS.Timeout | undefined;

  constructor(options: ContributionCheckerOptions) {
    this.#options = options;
  }

  check(contribution: Contribution): Promise<CheckedContribution> {
    const known = this.#verdicts.get(contribution.hash);
    if (known !== undefined) {
      // The most recently used verdicts are the ones kept.
      this.#verdicts.delete(contribution.hash);
      this.#verdicts.set(contribution.hash, known);
      return Promise.resolve({ verdict: known, cached: true });
    }
    const pending = this.#pending.get(contribution.hash);
    if (pending !== undefined) return pending.promise;
    let resolve!: Entry['resolve'];
    let reject!: Entry['reject'];
    const promise = new Promise<CheckedContribution>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    const entry: Entry = { contribution, solo: false, resolve, reject, promise };
    this.#pending.set(contribution.hash, entry);
    this.#queue.push(entry);
    if (this.#running < this.#options.concurrency && this.#gathering === undefined) {
      this.#gathering = setTimeout(() => {
        this.#gathering = undefined;
        this.#pump();
      }, this.#options.gatherMs ?? 5);
    }
    return promise;
  }

  #pump(): void {
    while (this.#running < this.#options.concurrency && this.#queue.length > 0) {
      const { batch, world } = this.#takeBatch();
      this.#running++;
      void this.#run(batch, world).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  /** The first queued entry and the next ones whose worlds agree with it on every object. */
  #takeBatch(): { batch: Entry[]; world: World } {
    const first = this.#queue.shift()!;
    const batch = [first];
    let world = first.contribution.world;
    if (first.solo) return { batch, world };
    const max = this.#options.maxBatch ?? 32;
    for (let i = 0; i < this.#queue.length && batch.length < max;) {
      const entry = this.#queue[i]!;
      const union = entry.solo ? undefined : unionOf([world, entry.contribution.world]);
      if (union === undefined) {
        i++;
        continue;
      }
      world = union;
      batch.push(entry);
      this.#queue.splice(i, 1);
    }
    return { batch, world };
  }

  async #run(batch: readonly Entry[], world: World): Promise<void> {
    let verdict: CheckVerdict;
    try {
      verdict = await this.#options.check((baseDir) => this.#options.render(world, baseDir));
    } catch (error) {
      for (const entry of batch) {
        this.#pending.delete(entry.contribution.hash);
        entry.reject(error);
      }
      return;
    }
    if (verdict.valid || batch.length === 1) {
      for (const entry of batch) this.#settle(entry, verdict);
      return;
    }
    for (const entry of batch) entry.solo = true;
    this.#queue.unshift(...batch);
  }

  #settle(entry: Entry, verdict: CheckVerdict): void {
    const { hash } = entry.contribution;
    this.#verdicts.set(hash, verdict);
    const limit = this.#options.cacheSize ?? 4096;
    for (const key of this.#verdicts.keys()) {
      if (this.#verdicts.size <= limit) break;
      this.#verdicts.delete(key);
    }
    this.#pending.delete(hash);
    entry.resolve({ verdict, cached: false });
  }
}
