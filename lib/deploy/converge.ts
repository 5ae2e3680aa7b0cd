/**
 * The one convergence algorithm, for every kind of target: keep one HAProxy
 * in step with the desired files with as few reloads as its runtime allows.
 *
 * 1. Read what runs, or trust what was read or deployed last while the
 *    target says it is still current (a drift check always reads).
 * 2. Plan: nothing, runtime operations, or a reload with its reason. An
 *    operation the target cannot apply at runtime turns the plan into a
 *    reload with the target's reason.
 * 3. Apply at runtime and make the files say the same, or write the files
 *    and reload. A runtime operation that fails is followed by a reload (the
 *    runtime state is unknown then, so a reload is forced until one
 *    succeeds); a reload that fails is an error, the previous configuration
 *    still serving. A configuration not yet confirmed valid (runtime-first)
 *    is applied at runtime only, where the target can: its files are
 *    written when it comes again confirmed and nothing is left to apply
 *    (mode `persisted`), or by the next reload, which always loads what it
 *    wrote. A drift check that finds the files as they were left, on the
 *    same HAProxy, takes them for lagging, not for drift.
 * 4. Another writer in between (StateMoved) is a reason to read and plan
 *    again, a bounded number of times.
 */
import { errorMessage } from '../error-message.ts';
import { planDeployment, sameFiles } from '../haproxy/plan.ts';
import type { Plan } from '../haproxy/plan-types.ts';
import type { DeployReason, DeployResult, RenderedFiles } from '../pipeline/model.ts';
import type { Planner } from './shared-planner.ts';
import { StateMoved, type DeployedState, type DeployTarget } from './target.ts';

export interface ConvergerOptions<S extends DeployedState> {
  readonly target: DeployTarget<S>;
  /** Default planDeployment; a fleet shares one sharedPlanner, so that endpoints in step plan once. */
  readonly plan?: Planner;
  /** Another writer in between: read and plan again this many times. Default 3. */
  readonly maxConflictRetries?: number;
  /** Progress lines (a runtime update that failed and the reload that replaces it). */
  readonly log?: (message: string) => void;
}

/** Per-endpoint facts kept for metrics and the debug endpoint. */
export interface EndpointStatus {
  readonly deployedHash: string | undefined;
  /** The target's configuration version (the Data Plane API's), when it has one. */
  readonly version: number | undefined;
  readonly lastMode: DeployResult['mode'] | undefined;
  readonly lastDurationMs: number | undefined;
  readonly lastError: string | undefined;
  readonly consecutiveFailures: number;
}

/** The plan when nothing runs yet. */
const START: Plan = { kind: 'reload', reason: 'HAProxy started' };

export class Converger<S extends DeployedState> {
  readonly #target: DeployTarget<S>;
  readonly #plan: Planner;
  readonly #retries: number;
  readonly #log: (message: string) => void;
  /** What runs, as last read or deployed; undefined when it must be read. */
  #state: S | undefined;
  /** The last render deployed: a target that cannot read a file back as written recognises it. */
  #lastDeployed: RenderedFiles | undefined;
  /** Whether that render was confirmed valid: a redeploy persists it only then. */
  #lastConfirmed = true;
  /** The state while the target's files lag what runs (`persisted`): kept across a read, which sees only the files. */
  #lagging: S | undefined;
  /** Set when a runtime update failed: the running state matches no file set, so the next deploy reloads. */
  #forced: string | undefined;
  /** Tail of the call queue: deploys (and exclusive work) run one at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  #status: EndpointStatus = {
    deployedHash: undefined,
    version: undefined,
    lastMode: undefined,
    lastDurationMs: undefined,
    lastError: undefined,
    consecutiveFailures: 0,
  };

  constructor(options: ConvergerOptions<S>) {
    this.#target = options.target;
    this.#plan = options.plan ?? planDeployment;
    this.#retries = options.maxConflictRetries ?? 3;
    this.#log = options.log ?? (() => undefined);
  }

  get status(): EndpointStatus {
    return this.#status;
  }

  /**
   * Moves the target to `desired`. Overlapping calls are queued: each starts
   * once the previous one settled, so every plan is made against the state
   * the previous call left. `confirmed` false: `desired` was passed on
   * before its verdict, and what is applied at runtime is not written to
   * the target's files yet.
   */
  deploy(desired: RenderedFiles, hash: string, reason: DeployReason, confirmed = true): Promise<DeployResult> {
    return this.#serialize(() => this.#tracked(desired, hash, reason, confirmed));
  }

  /**
   * Moves the target to the render last deployed as it is when this call's
   * turn in the queue comes, not when the call is made: a HAProxy found dead
   * while a deploy was under way is started on what that deploy brought.
   * Undefined when nothing was deployed yet.
   */
  redeploy(reason: DeployReason): Promise<DeployResult | undefined> {
    return this.#serialize(async () => {
      // Both are set by the same successful deploy.
      const files = this.#lastDeployed;
      const hash = this.#status.deployedHash;
      return files === undefined || hash === undefined ? undefined : this.#tracked(files, hash, reason, this.#lastConfirmed);
    });
  }

  async #tracked(desired: RenderedFiles, hash: string, reason: DeployReason, confirmed: boolean): Promise<DeployResult> {
    const started = performance.now();
    try {
      const result = await this.#deploy(desired, reason, confirmed);
      this.#status = {
        deployedHash: hash,
        version: this.#state?.version,
        lastMode: result.mode,
        lastDurationMs: performance.now() - started,
        lastError: undefined,
        consecutiveFailures: 0,
      };
      return result;
    } catch (error) {
      this.#status = {
        ...this.#status,
        lastDurationMs: performance.now() - started,
        lastError: errorMessage(error),
        consecutiveFailures: this.#status.consecutiveFailures + 1,
      };
      throw error;
    }
  }

  /** Runs `work` between deploys (stopping HAProxy, say); what runs is read again afterwards. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#serialize(async () => {
      try {
        return await work();
      } finally {
        this.#state = undefined;
      }
    });
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #deploy(desired: RenderedFiles, reason: DeployReason, confirmed: boolean): Promise<DeployResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(desired, reason, confirmed);
      } catch (error) {
        // After any failure what runs is unknown: read it again next time.
        this.#state = undefined;
        if (!(error instanceof StateMoved) || attempt >= this.#retries) throw error;
      }
    }
  }

  async #attempt(desired: RenderedFiles, reason: DeployReason, confirmed: boolean): Promise<DeployResult> {
    // A drift check trusts nothing: it is there to find what changed behind the controller's back.
    if (this.#state !== undefined && (reason === 'drift' || !(await this.#target.isCurrent(this.#state)))) this.#state = undefined;
    if (this.#state === undefined) {
      this.#state = await this.#stillLagging(await this.#target.read([...(this.#lastDeployed ? [this.#lastDeployed] : []), desired]));
      // Something ran here before (killed, crashed): it is started again rather than failing every deploy.
      if (this.#state === undefined && this.#lastDeployed !== undefined) this.#log('HAProxy does not answer: starting it again');
    }
    const state = this.#state;
    const planned = state === undefined ? START : this.#forced !== undefined ? { kind: 'reload' as const, reason: this.#forced } : this.#plan(state.files, desired);
    const plan = this.#refine(planned, state);
    if (plan.kind === 'empty') {
      if (!confirmed || state?.persisted === undefined) return { mode: 'unchanged', operations: 0 };
      this.#settle(await this.#target.persist(state), desired, confirmed);
      return { mode: 'persisted', operations: 0 };
    }
    if (plan.kind === 'reload') return this.#reload(state, desired, plan.reason, confirmed);
    let applied: Awaited<ReturnType<DeployTarget<S>['runtime']>>;
    try {
      applied = await this.#target.runtime(state!, desired, plan.operations, confirmed);
    } catch (error) {
      if (error instanceof StateMoved) throw error;
      this.#forced = `runtime update failed: ${errorMessage(error)}`;
      this.#log(`${this.#forced}; reloading instead`);
      return this.#reload(state, desired, this.#forced, confirmed);
    }
    this.#settle(applied.state, desired, confirmed);
    return { mode: 'runtime', operations: applied.operations };
  }

  /**
   * What was read, or the state it lags: a read sees the files, and files left as they were
   * on the same HAProxy mean its runtime still serves what was applied before its verdict.
   */
  async #stillLagging(read: S | undefined): Promise<S | undefined> {
    const lagging = this.#lagging;
    if (lagging?.persisted !== undefined && read !== undefined && sameFiles(read.files, lagging.persisted) && (await this.#target.isCurrent(lagging))) return lagging;
    this.#lagging = undefined;
    return read;
  }

  #settle(state: S, desired: RenderedFiles, confirmed: boolean): void {
    this.#state = state;
    this.#lagging = state.persisted === undefined ? undefined : state;
    this.#lastDeployed = desired;
    this.#lastConfirmed = confirmed;
  }

  /** The plan, or a reload when the target cannot apply one of its operations at runtime. */
  #refine(plan: Plan, state: S | undefined): Plan {
    if (plan.kind !== 'runtime' || state === undefined) return plan;
    for (const operation of plan.operations) {
      const refusal = this.#target.refusal(operation, state);
      if (refusal !== undefined) return { kind: 'reload', reason: refusal };
    }
    return plan;
  }

  async #reload(state: S | undefined, desired: RenderedFiles, reason: string, confirmed: boolean): Promise<DeployResult> {
    const reloaded = await this.#target.reload(state, desired, reason);
    this.#settle(reloaded.state, desired, confirmed);
    this.#forced = undefined;
    return { mode: 'reload', reloadReason: reason, ...(reloaded.reloadId === undefined ? {} : { reloadId: reloaded.reloadId }), operations: 0 };
  }
}
