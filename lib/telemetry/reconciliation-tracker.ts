import type { DeployOutcome, Outcome } from '../pipeline/outcome.ts';
import {
  applyDeployOutcome,
  endpointDeploy,
  foldedFrom,
  noneFolded,
  type EndpointDeploy,
  type EndpointEnd,
  type Reconciliation,
  type ReconciliationResult,
  type Stall,
  type TrackerEvent,
  type Verdict,
} from './reconciliations.ts';

export interface ReconciliationTrackerOptions {
  /** A reconciliation still open after this long is closed as abandoned. Default 15 minutes. */
  readonly maxOpenMs?: number;
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
      case 'runtimeFirst':
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
        // A new endpoint's deployment and a confirmation's (no change of its own) belong to no reconciliation.
        if (outcome.reason !== 'change') {
          for (const endpoint of outcome.endpoints) {
            this.#standalone.set(endpoint, endpointDeploy(endpoint, outcome.revision, outcome.hash, outcome.reason, now));
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

  #validated(outcome: Extract<Outcome, { readonly type: 'validated' | 'validationFailed' | 'validationSkipped' | 'runtimeFirst' }>, now: number, events: TrackerEvent[]): void {
    const reconciliation = this.#open.get(outcome.revision);
    if (!reconciliation || reconciliation.awaiting !== 'validation') return;
    const start = 'durationMs' in outcome ? now - outcome.durationMs : now;
    const verdict: Verdict =
      outcome.type === 'runtimeFirst'
        ? 'runtime-first'
        : outcome.type === 'validated'
          ? 'valid'
          : outcome.type === 'validationFailed'
            ? 'invalid'
            : outcome.valid
              ? 'unchanged-valid'
              : 'unchanged-invalid';
    reconciliation.validation = { start, end: now, verdict, error: outcome.type === 'validationFailed' ? outcome.error : undefined };
    if ((outcome.type === 'validated' || outcome.type === 'validationFailed') && reconciliation.validations === 0) reconciliation.validations = 1;
    reconciliation.progressAt = now;
    events.push({ type: 'validated', reconciliation });
    if (verdict === 'valid' || verdict === 'runtime-first') reconciliation.awaiting = 'schedule';
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
