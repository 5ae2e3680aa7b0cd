import type { Stall } from './reconciliations.ts';

export interface Verdict {
  readonly ok: boolean;
  readonly message: string;
}

export interface HealthOptions {
  /** The oldest stalled piece of work, if any has made no progress for longer than `afterMs`. */
  readonly stalled: (now: number, afterMs: number) => Stall | undefined;
  /** How long work may go without progress before the pipeline counts as stalled. */
  readonly stallAfterMs: number;
  readonly now: () => number;
}

/** What readiness waits for until it is told otherwise: a configuration in force, and every watched type listed. */
export const configurationLoaded = 'configuration loaded';
export const initialSyncDone = 'initial sync done';

/**
 * Liveness and readiness. Live while the pipeline runs and no piece of
 * work in it (a validation, the deployment slot, an endpoint's deployment)
 * has gone without progress for too long: each of those has its own
 * timeouts or ends on its own, so one that stops moving means the process is
 * stuck and a restart is the cure. Ready once every readiness condition holds
 * and until shutdown begins.
 */
export class Health {
  readonly #options: HealthOptions;
  readonly #conditions = new Map<string, boolean>([
    [configurationLoaded, false],
    [initialSyncDone, false],
  ]);
  /** Why the controller cannot do its job now, by cause: readiness fails while any holds. */
  readonly #problems = new Map<string, string>();
  #stopped: string | undefined;
  #shuttingDown = false;
  /** Parts that can tell they cannot do their job (a deaf manifest watch): each says why, or undefined. */
  readonly #checks: (() => string | undefined)[] = [];

  constructor(options: HealthOptions) {
    this.#options = options;
  }

  /** Sets a readiness condition; a name not seen before adds one that readiness then waits for too. */
  setCondition(name: string, holds: boolean): void {
    this.#conditions.set(name, holds);
  }

  /** Adds a part whose problem, while it has one, fails liveness with its reason. */
  addCheck(check: () => string | undefined): void {
    this.#checks.push(check);
  }

  /**
   * Sets (or, with undefined, clears) a problem that keeps the controller
   * from doing its job although it runs: a restart would not cure it, so it
   * fails readiness, not liveness.
   */
  setProblem(name: string, message: string | undefined): void {
    if (message === undefined) this.#problems.delete(name);
    else this.#problems.set(name, message);
  }

  /** The pipeline ended (an error reached its top, or it completed): nothing will be reconciled any more. */
  pipelineStopped(reason: string): void {
    this.#stopped ??= reason;
  }

  beginShutdown(): void {
    this.#shuttingDown = true;
  }

  liveness(): Verdict {
    if (this.#stopped !== undefined) return { ok: false, message: `the pipeline stopped: ${this.#stopped}` };
    const stall = this.#options.stalled(this.#options.now(), this.#options.stallAfterMs);
    if (stall) {
      return {
        ok: false,
        message: `stalled: revision ${stall.revision} has waited ${Math.round(stall.sinceMs / 1000)} s for ${stall.waitingFor}`,
      };
    }
    const problems = this.#checks.map((check) => check()).filter((problem) => problem !== undefined);
    if (problems.length > 0) return { ok: false, message: problems.join('; ') };
    return { ok: true, message: 'ok' };
  }

  readiness(): Verdict {
    if (this.#shuttingDown) return { ok: false, message: 'shutting down' };
    const missing = [...this.#conditions].filter(([, holds]) => !holds).map(([name]) => name);
    if (missing.length > 0) return { ok: false, message: `not ready: waiting for ${missing.join(', ')}` };
    if (this.#problems.size > 0) return { ok: false, message: `not ready: ${[...this.#problems.values()].join('; ')}` };
    return { ok: true, message: 'ready' };
  }
}
