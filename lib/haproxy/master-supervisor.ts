import { errorMessage } from '../error-message.ts';

/**
 * Watches an HAProxy master and starts HAProxy again when it dies. Deliberately
 * narrow: any way of running a master (a local target, a process manager of
 * its own) can be supervised through this interface.
 */
export interface SupervisedMaster {
  /** The master's pid (its pid file), undefined while there is nothing to supervise (nothing deployed yet). */
  pid(): Promise<number | undefined>;
  /** True while the process exists and is not a zombie. */
  isAlive(pid: number): boolean;
  /** Starts HAProxy again on the configuration it last served; resolves with the new master's pid. */
  start(): Promise<number>;
  /**
   * Calls `listener` when a master this process started exits, sooner than
   * the next look would see it; returns the unsubscribe. Absent: looks alone.
   */
  readonly onExit?: (listener: () => void) => () => void;
}

export type SupervisionEvent =
  /** The master is gone; a start follows at once. */
  | { readonly type: 'exited'; readonly pid: number }
  | { readonly type: 'restarted'; readonly pid: number; readonly durationMs: number }
  /** The start failed; the next is tried after `retryInMs`. */
  | { readonly type: 'restartFailed'; readonly error: string; readonly retryInMs: number }
  /** A master runs again that this supervisor did not start (a deployment started it). */
  | { readonly type: 'running'; readonly pid: number };

export interface MasterSupervisorOptions {
  readonly report: (event: SupervisionEvent) => void;
  /** Milliseconds; Date.now by default. */
  readonly now?: () => number;
  /** Waits between failed starts: doubling from the first to the last. Default 1 s to 30 s. */
  readonly retryMs?: { readonly first: number; readonly last: number };
}

/**
 * One `check` is one look at the master: dead (its process gone) means
 * HAProxy is started again. Only the process decides, never how fast the
 * master answers: a master that is slow to answer, re-executing for a reload
 * or stopped, is alive, and starting another beside it would put two masters
 * on one work directory.
 */
export class MasterSupervisor {
  readonly #master: SupervisedMaster;
  readonly #options: MasterSupervisorOptions;
  readonly #now: () => number;
  /** The last pid seen: a master whose pid file went away is still watched. */
  #known: number | undefined;
  #down = false;
  #failures = 0;
  #nextAttemptAt = 0;

  constructor(master: SupervisedMaster, options: MasterSupervisorOptions) {
    this.#master = master;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async check(): Promise<void> {
    const pid = (await this.#master.pid()) ?? this.#known;
    if (pid === undefined) return;
    this.#known = pid;
    if (this.#master.isAlive(pid)) {
      if (this.#down) this.#up({ type: 'running', pid });
      return;
    }
    if (!this.#down) {
      this.#down = true;
      this.#options.report({ type: 'exited', pid });
    }
    if (this.#now() < this.#nextAttemptAt) return;
    const started = this.#now();
    try {
      const next = await this.#master.start();
      this.#known = next;
      this.#up({ type: 'restarted', pid: next, durationMs: this.#now() - started });
    } catch (error) {
      const { first, last } = this.#options.retryMs ?? { first: 1_000, last: 30_000 };
      const retryInMs = Math.min(last, first * 2 ** this.#failures++);
      this.#nextAttemptAt = this.#now() + retryInMs;
      this.#options.report({ type: 'restartFailed', error: errorMessage(error), retryInMs });
    }
  }

  #up(event: SupervisionEvent): void {
    this.#down = false;
    this.#failures = 0;
    this.#nextAttemptAt = 0;
    this.#options.report(event);
  }
}
