import { defaultMaxChangeRefs } from '../pipeline/changes.ts';
import type { Changes, DeployReason, DeployResult, Problem } from '../pipeline/model.ts';
import type { Outcome } from '../pipeline/outcome.ts';

/**
 * How a reconciliation ended: its configuration reached every endpoint
 * ('deployed'), changed nothing ('unchanged'), failed at one stage, or a
 * newer one took over before it got everywhere ('superseded'). 'abandoned'
 * means the pipeline it ran in was replaced or stopped, or it outlived any
 * plausible run.
 */
export type ReconciliationResult =
  | 'deployed'
  | 'unchanged'
  | 'render_failed'
  | 'invalid'
  | 'deploy_failed'
  | 'superseded'
  | 'no_endpoints'
  | 'abandoned';

export interface Interval {
  readonly start: number;
  readonly end: number;
}

export interface DeployFailure {
  readonly attempt: number;
  readonly error: string;
  readonly at: number;
}

/**
 * Superseded reconciliations whose changes another one delivers: the
 * pipeline folds a configuration dropped on the way into the one that
 * replaced it. `reconciliations` is capped, oldest first (a span carries
 * only so many links); the counts stay exact.
 */
export interface Folded {
  readonly count: number;
  readonly changes: number;
  readonly reconciliations: readonly Reconciliation[];
}

const noneFolded: Folded = { count: 0, changes: 0, reconciliations: [] };

function foldedTogether(...parts: readonly Folded[]): Folded {
  return {
    count: parts.reduce((sum, part) => sum + part.count, 0),
    changes: parts.reduce((sum, part) => sum + part.changes, 0),
    reconciliations: parts.flatMap((part) => part.reconciliations).slice(0, defaultMaxChangeRefs),
  };
}

/** What folding `reconciliation` in delivers: its own changes and whatever had been folded into it. */
function foldedFrom(reconciliation: Reconciliation, ...before: readonly Folded[]): Folded {
  return foldedTogether(...before, { count: 1, changes: reconciliation.changes.count, reconciliations: [reconciliation] });
}

export type EndpointEnd = 'deployed' | 'failed' | 'superseded' | 'removed' | 'abandoned';

/** One endpoint's deployment of one configuration, over all its attempts. Times in ms since the epoch. */
export interface EndpointDeploy {
  readonly endpoint: string;
  readonly revision: number;
  readonly hash: string;
  readonly reason: DeployReason;
  /** When the configuration was handed to the endpoint (or, without that, when its first attempt began). */
  readonly start: number;
  readonly failures: DeployFailure[];
  end: number | undefined;
  ended: EndpointEnd | undefined;
  result: DeployResult | undefined;
  attempts: number;
  /** How long the successful attempts took, as the deploy stage measured it. */
  durationMs: number | undefined;
  /** Time from the first change to the deployment here, for reason 'change'. */
  latencyMs: number | undefined;
  /** When a newer configuration was handed to this endpoint while this one was still pending. */
  supersededAt: number | undefined;
  /** Older configurations still pending here when this one replaced them: it delivers their changes here. */
  folded: Folded;
}

export type Verdict = 'valid' | 'invalid' | 'unchanged-valid' | 'unchanged-invalid';

/** One reconciliation: the changes folded into one render and everything that followed from it. */
export interface Reconciliation {
  readonly generation: number;
  readonly revision: number;
  readonly changes: Changes;
  /** The first change it folds in, or its render's start when it folds in none (the initial sync). */
  readonly start: number;
  /** The configuration's hash: the render's, or the one rendered again without quarantined objects. */
  hash: string;
  readonly render: Interval & { readonly error: string | undefined };
  /** Objects left out of, and served otherwise than asked in, the rendered configuration. */
  excluded: number;
  readonly warnings: number;
  /** Reconciliations dropped while waiting for validation or the deployment slot, whose changes this one delivers. */
  folded: Folded;
  /** Objects HAProxy refused, quarantined during its validation, with when. */
  readonly quarantined: { readonly problem: Problem; readonly at: number }[];
  /** Validations that could not run, with when and why. */
  readonly unavailable: { readonly attempt: number; readonly error: string; readonly at: number }[];
  /** Validations it took, re-validations after quarantine and bisection trials included. */
  validations: number;
  validation: (Interval & { readonly verdict: Verdict; readonly error: string | undefined }) | undefined;
  /** From the verdict to the hand-over to the endpoints: the minimum interval between deployments. */
  schedule: Interval | undefined;
  readonly deploys: Map<string, EndpointDeploy>;
  awaiting: 'validation' | 'schedule' | 'deploys' | undefined;
  /** The last time anything happened to it: what a stall is measured from. */
  progressAt: number;
  result: ReconciliationResult | undefined;
  end: number | undefined;
}

/** What an outcome did to the reconciliations, in order, for the tracing, metrics and log sinks. */
export type TrackerEvent =
  | { readonly type: 'rendered'; readonly reconciliation: Reconciliation }
  | { readonly type: 'validated'; readonly reconciliation: Reconciliation }
  | { readonly type: 'scheduled'; readonly reconciliation: Reconciliation }
  | { readonly type: 'endpointDone'; readonly reconciliation: Reconciliation; readonly deploy: EndpointDeploy }
  | { readonly type: 'closed'; readonly reconciliation: Reconciliation }
  /** A deployment that belongs to no reconciliation: a drift repair or a newly found endpoint. */
  | { readonly type: 'standaloneDone'; readonly deploy: EndpointDeploy };

export interface Stall {
  readonly revision: number;
  readonly waitingFor: string;
  readonly sinceMs: number;
}

export interface ReconciliationTrackerOptions {
  /** A reconciliation still open after this long is closed as abandoned. Default 15 minutes. */
  readonly maxOpenMs?: number;
}

type DeployOutcome = Extract<Outcome, { readonly type: 'deployed' | 'deployFailed' }>;

function endpointDeploy(
  endpoint: string,
  revision: number,
  hash: string,
  reason: DeployReason,
  start: number,
): EndpointDeploy {
  return {
    endpoint,
    revision,
    hash,
    reason,
    start,
    failures: [],
    end: undefined,
    ended: undefined,
    result: undefined,
    attempts: 0,
    durationMs: undefined,
    latencyMs: undefined,
    supersededAt: undefined,
    folded: noneFolded,
  };
}

/** Marks a deployment done from an outcome; true when that outcome ends it. */
function applyDeployOutcome(deploy: EndpointDeploy, outcome: DeployOutcome, now: number): boolean {
  if (outcome.type === 'deployed') {
    deploy.result = outcome.result;
    deploy.attempts = outcome.attempts;
    deploy.durationMs = outcome.durationMs;
    deploy.latencyMs = outcome.latencyMs;
    deploy.end = now;
    deploy.ended = 'deployed';
    return true;
  }
  deploy.failures.push({ attempt: outcome.attempt, error: outcome.error, at: now });
  deploy.attempts = outcome.attempt;
  if (!outcome.final) return false;
  deploy.end = now;
  deploy.ended = 'failed';
  return true;
}

/**
 * Follows each reconciliation through the outcome stream, from its render
 * to the last endpoint it reached, and says when it ended and how. The
 * pipeline drops stale work at several stages without a word (a render
 * cancelled by a newer trigger, a configuration waiting for validation or
 * for the deployment interval replaced by a newer one, a deployment waiting
 * for an endpoint replaced by a newer one); each such drop shows here as a
 * newer revision reaching the same stage first, which is how a superseded
 * reconciliation is recognised. Pure: times come with each outcome.
 */
export class ReconciliationTracker {
  readonly #open = new Map<number, Reconciliation>();
  readonly #standalone = new Map<string, EndpointDeploy>();
  readonly #maxOpenMs: number;
  #generation = 0;

  constructor(options: ReconciliationTrackerOptions = {}) {
    this.#maxOpenMs = options.maxOpenMs ?? 15 * 60_000;
  }

  get open(): readonly Reconciliation[] {
    return [...this.#open.values()];
  }

  apply(outcome: Outcome, now: number): TrackerEvent[] {
    const events: TrackerEvent[] = [];
    this.#sweep(now, events);
    switch (outcome.type) {
      case 'configApplied':
        this.closeAll(now, events);
        this.#generation = outcome.generation;
        break;
      case 'rendered':
      case 'renderFailed': {
        const failed = outcome.type === 'renderFailed';
        const renderStart = now - outcome.durationMs;
        // The same revision rendered again (a reload refused its configuration): this one takes over.
        const earlier = this.#open.get(outcome.revision);
        if (earlier) this.#endAs(earlier, 'superseded', 'superseded', now, events);
        const reconciliation: Reconciliation = {
          generation: this.#generation,
          revision: outcome.revision,
          changes: outcome.changes,
          start: outcome.changes.count > 0 ? Math.min(outcome.changes.firstAt, renderStart) : renderStart,
          hash: failed ? '' : outcome.hash,
          render: { start: renderStart, end: now, error: failed ? outcome.error : undefined },
          excluded: failed ? 0 : outcome.excluded.length,
          warnings: failed ? 0 : outcome.warnings.length,
          folded: noneFolded,
          quarantined: [],
          unavailable: [],
          validations: 0,
          validation: undefined,
          schedule: undefined,
          deploys: new Map(),
          awaiting: 'validation',
          progressAt: now,
          result: undefined,
          end: undefined,
        };
        this.#open.set(outcome.revision, reconciliation);
        events.push({ type: 'rendered', reconciliation });
        if (failed) this.#close(reconciliation, 'render_failed', now, events);
        break;
      }
      case 'validated':
      case 'validationFailed':
      case 'validationSkipped':
        this.#supersedeBefore(outcome.revision, 'validation', now, events);
        this.#validated(outcome, now, events);
        break;
      case 'quarantined':
      case 'validationUnavailable': {
        // Work on its validation, which counts as progress: neither is a stall.
        const reconciliation = this.#open.get(outcome.revision);
        if (!reconciliation || reconciliation.awaiting !== 'validation') break;
        reconciliation.progressAt = now;
        if (outcome.type === 'quarantined') {
          reconciliation.hash = outcome.hash;
          reconciliation.excluded = outcome.excluded.length;
          reconciliation.validations = outcome.validations;
          for (const problem of outcome.objects) reconciliation.quarantined.push({ problem, at: now });
        } else {
          reconciliation.unavailable.push({ attempt: outcome.attempt, error: outcome.error, at: now });
        }
        break;
      }
      case 'deploying':
        if (outcome.reason === 'discovered') {
          for (const endpoint of outcome.endpoints) {
            this.#standalone.set(endpoint, endpointDeploy(endpoint, outcome.revision, outcome.hash, 'discovered', now));
          }
        } else {
          this.#supersedeBefore(outcome.revision, 'schedule', now, events);
          this.#handOver(outcome.revision, outcome.endpoints, now, events);
          this.#scheduled(outcome.revision, outcome.endpoints, now, events);
        }
        break;
      case 'deployed':
      case 'deployFailed':
        if (outcome.reason === 'change') this.#deployOutcome(outcome, now, events);
        else this.#standaloneOutcome(outcome, now, events);
        break;
      default:
        break;
    }
    return events;
  }

  /** Closes every open reconciliation as abandoned: the pipeline was replaced or is stopping. */
  closeAll(now: number, events: TrackerEvent[] = []): TrackerEvent[] {
    for (const reconciliation of [...this.#open.values()]) this.#abandon(reconciliation, now, events);
    this.#standalone.clear();
    return events;
  }

  /** The open piece of work that has made no progress for longest, when that is longer than `afterMs`. */
  stalled(now: number, afterMs: number): Stall | undefined {
    let worst: Stall | undefined;
    const consider = (revision: number, waitingFor: string, since: number) => {
      const sinceMs = now - since;
      if (sinceMs > afterMs && (!worst || sinceMs > worst.sinceMs)) worst = { revision, waitingFor, sinceMs };
    };
    for (const reconciliation of this.#open.values()) {
      if (reconciliation.awaiting !== 'deploys') {
        consider(reconciliation.revision, reconciliation.awaiting === 'validation' ? 'its validation' : 'its deployment slot', reconciliation.progressAt);
        continue;
      }
      for (const deploy of reconciliation.deploys.values()) {
        if (deploy.ended === undefined) consider(reconciliation.revision, `its deployment to ${deploy.endpoint}`, deploy.failures.at(-1)?.at ?? deploy.start);
      }
    }
    return worst;
  }

  #validated(
    outcome: Extract<Outcome, { readonly type: 'validated' | 'validationFailed' | 'validationSkipped' }>,
    now: number,
    events: TrackerEvent[],
  ): void {
    const reconciliation = this.#open.get(outcome.revision);
    if (!reconciliation || reconciliation.awaiting !== 'validation') return;
    const start = outcome.type === 'validationSkipped' ? now : now - outcome.durationMs;
    const verdict: Verdict =
      outcome.type === 'validated'
        ? 'valid'
        : outcome.type === 'validationFailed'
          ? 'invalid'
          : outcome.valid
            ? 'unchanged-valid'
            : 'unchanged-invalid';
    reconciliation.validation = { start, end: now, verdict, error: outcome.type === 'validationFailed' ? outcome.error : undefined };
    if (outcome.type !== 'validationSkipped' && reconciliation.validations === 0) reconciliation.validations = 1;
    reconciliation.progressAt = now;
    events.push({ type: 'validated', reconciliation });
    if (verdict === 'valid') reconciliation.awaiting = 'schedule';
    else this.#close(reconciliation, verdict === 'unchanged-valid' ? 'unchanged' : 'invalid', now, events);
  }

  #scheduled(revision: number, endpoints: readonly string[], now: number, events: TrackerEvent[]): void {
    const reconciliation = this.#open.get(revision);
    if (!reconciliation || reconciliation.awaiting !== 'schedule') return;
    reconciliation.schedule = { start: reconciliation.validation?.end ?? now, end: now };
    reconciliation.awaiting = 'deploys';
    reconciliation.progressAt = now;
    for (const endpoint of endpoints) {
      reconciliation.deploys.set(endpoint, endpointDeploy(endpoint, revision, reconciliation.hash, 'change', now));
    }
    events.push({ type: 'scheduled', reconciliation });
    if (endpoints.length === 0) this.#close(reconciliation, 'no_endpoints', now, events);
  }

  /**
   * A newer configuration handed to the endpoints: an older one still
   * pending on an endpoint no longer in the set will never arrive there; on
   * the others it is now superseded, though a running attempt may still end.
   */
  #handOver(revision: number, endpoints: readonly string[], now: number, events: TrackerEvent[]): void {
    const current = new Set(endpoints);
    for (const reconciliation of [...this.#open.values()]) {
      if (reconciliation.revision >= revision || reconciliation.awaiting !== 'deploys') continue;
      for (const deploy of reconciliation.deploys.values()) {
        if (deploy.ended !== undefined) continue;
        if (current.has(deploy.endpoint)) {
          deploy.supersededAt ??= now;
          continue;
        }
        deploy.end = now;
        deploy.ended = 'removed';
        events.push({ type: 'endpointDone', reconciliation, deploy });
      }
      this.#closeIfDone(reconciliation, events);
    }
  }

  #deployOutcome(outcome: DeployOutcome, now: number, events: TrackerEvent[]): void {
    const reconciliation = this.#open.get(outcome.revision);
    const deploy = reconciliation?.deploys.get(outcome.endpoint);
    // The endpoint works through its requests in order: an outcome for a newer
    // revision means every older one still pending there was dropped, and
    // the newer one delivers its changes there.
    for (const older of [...this.#open.values()]) {
      if (older.revision >= outcome.revision || older.awaiting !== 'deploys') continue;
      const dropped = older.deploys.get(outcome.endpoint);
      if (!dropped || dropped.ended !== undefined) continue;
      dropped.end = dropped.supersededAt ?? now;
      dropped.ended = 'superseded';
      if (deploy && deploy.ended === undefined) deploy.folded = foldedFrom(older, deploy.folded, older.folded, dropped.folded);
      events.push({ type: 'endpointDone', reconciliation: older, deploy: dropped });
      this.#closeIfDone(older, events);
    }
    if (!reconciliation || !deploy || deploy.ended !== undefined) return;
    reconciliation.progressAt = now;
    if (!applyDeployOutcome(deploy, outcome, now)) return;
    events.push({ type: 'endpointDone', reconciliation, deploy });
    this.#closeIfDone(reconciliation, events);
  }

  #standaloneOutcome(outcome: DeployOutcome, now: number, events: TrackerEvent[]): void {
    let deploy = this.#standalone.get(outcome.endpoint);
    if (deploy && (deploy.revision !== outcome.revision || deploy.reason !== outcome.reason)) {
      // A retry cut short by a newer request: what it found is still worth reporting.
      deploy.end = now;
      deploy.ended = 'superseded';
      events.push({ type: 'standaloneDone', deploy });
      deploy = undefined;
    }
    if (!deploy) {
      const start = outcome.type === 'deployed' ? now - outcome.durationMs : now;
      deploy = endpointDeploy(outcome.endpoint, outcome.revision, outcome.hash, outcome.reason, start);
      this.#standalone.set(outcome.endpoint, deploy);
    }
    if (!applyDeployOutcome(deploy, outcome, now)) return;
    this.#standalone.delete(outcome.endpoint);
    events.push({ type: 'standaloneDone', deploy });
  }

  /**
   * Older reconciliations still waiting at `stage` were dropped there in
   * favour of `revision`, which took over their changes.
   */
  #supersedeBefore(revision: number, stage: 'validation' | 'schedule', now: number, events: TrackerEvent[]): void {
    const successor = this.#open.get(revision);
    for (const reconciliation of [...this.#open.values()]) {
      if (reconciliation.revision >= revision || reconciliation.awaiting !== stage) continue;
      if (successor?.awaiting === stage) successor.folded = foldedFrom(reconciliation, successor.folded, reconciliation.folded);
      this.#close(reconciliation, 'superseded', now, events);
    }
  }

  #closeIfDone(reconciliation: Reconciliation, events: TrackerEvent[]): void {
    const deploys = [...reconciliation.deploys.values()];
    if (deploys.some((deploy) => deploy.ended === undefined)) return;
    const end = Math.max(...deploys.map((deploy) => deploy.end ?? 0));
    const result: ReconciliationResult = deploys.some((deploy) => deploy.ended === 'failed')
      ? 'deploy_failed'
      : deploys.every((deploy) => deploy.ended === 'deployed')
        ? 'deployed'
        : 'superseded';
    this.#close(reconciliation, result, end, events);
  }

  #close(reconciliation: Reconciliation, result: ReconciliationResult, end: number, events: TrackerEvent[]): void {
    reconciliation.result = result;
    reconciliation.end = end;
    reconciliation.awaiting = undefined;
    this.#open.delete(reconciliation.revision);
    events.push({ type: 'closed', reconciliation });
  }

  #sweep(now: number, events: TrackerEvent[]): void {
    for (const reconciliation of [...this.#open.values()]) {
      if (now - reconciliation.start > this.#maxOpenMs) this.#abandon(reconciliation, now, events);
    }
  }

  #abandon(reconciliation: Reconciliation, now: number, events: TrackerEvent[]): void {
    this.#endAs(reconciliation, 'abandoned', 'abandoned', now, events);
  }

  /** Closes a reconciliation now, with the deployments still pending ended as `ended`. */
  #endAs(reconciliation: Reconciliation, result: ReconciliationResult, ended: EndpointEnd, now: number, events: TrackerEvent[]): void {
    for (const deploy of reconciliation.deploys.values()) {
      if (deploy.ended !== undefined) continue;
      deploy.end = now;
      deploy.ended = ended;
      events.push({ type: 'endpointDone', reconciliation, deploy });
    }
    this.#close(reconciliation, result, now, events);
  }
}
