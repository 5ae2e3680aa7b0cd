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
 *    still serving.
 * 4. Another writer in between (StateMoved) is a reason to read and plan
 *    again, a bounded number of times.
 */
import { errorMessage } from '../error-message.ts';
import { planDeployment } from '../haproxy/plan.ts';
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
   * the previous call left.
   */
  deploy(desired: RenderedFiles, hash: string, reason: DeployReason): Promise<DeployResult> {
    return this.#serialize(() => this.#tracked(desired, hash, reason));
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
      return files === undefined || hash === undefined ? undefined : this.#tracked(files, hash, reason);
    });
  }

  async #tracked(desired: RenderedFiles, hash: string, reason: DeployReason): Promise<DeployResult> {
    const started = performance.now();
    try {
      const result = await this.#deploy(desired, reason);
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

  async #deploy(desired: RenderedFiles, reason: DeployReason): Promise<DeployResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(desired, reason);
      } catch (error) {
        // After any failure what runs is unknown: read it again next time.
        this.#state = undefined;
        if (!(error instanceof StateMoved) || attempt >= this.#retries) throw error;
      }
    }
  }

  async #attempt(desired: RenderedFiles, reason: DeployReason): Promise<DeployResult> {
    // A drift check trusts nothing: it is there to find what changed behind the controller's back.
    if (this.#state !== undefined && (reason === 'drift' || !(await this.#target.isCurrent(this.#state)))) this.#state = undefined;
    if (this.#state === undefined) {
      this.#state = await this.#target.read([...(this.#lastDeployed ? [this.#lastDeployed] : []), desired]);
      // Something ran here before (killed, crashed): it is started again rather than failing every deploy.
      if (this.#state === undefined && this.#lastDeployed !== undefined) this.#log('HAProxy does not answer: starting it again');
    }
    const state = this.#state;
    const planned = state === undefined ? START : this.#forced !== undefined ? { kind: 'reload' as const, reason: this.#forced } : this.#plan(state.files, desired);
    const plan = this.#refine(planned, state);
    if (plan.kind === 'empty') return { mode: 'unchanged', operations: 0 };
    if (plan.kind === 'reload') return this.#reload(state, desired, plan.reason);
    let applied: Awaited<ReturnType<DeployTarget<S>['runtime']>>;
    try {
      applied = await this.#target.runtime(state!, desired, plan.operations);
    } catch (error) {
      if (error instanceof StateMoved) throw error;
      this.#forced = `runtime update failed: ${errorMessage(error)}`;
      this.#log(`${this.#forced}; reloading instead`);
      return this.#reload(state, desired, this.#forced);
    }
    this.#state = applied.state;
    this.#lastDeployed = desired;
    return { mode: 'runtime', operations: applied.operations };
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

  async #reload(state: S | undefined, desired: RenderedFiles, reason: string): Promise<DeployResult> {
    const reloaded = await this.#target.reload(state, desired, reason);
    this.#state = reloaded.state;
    this.#lastDeployed = desired;
    this.#forced = undefined;
    return { mode: 'reload', reloadReason: reason, ...(reloaded.reloadId === undefined ? {} : { reloadId: reloaded.reloadId }), operations: 0 };
  }
}
