import { defaultMaxChangeRefs } from '../pipeline/changes.ts';
import type { Changes, DeployReason, DeployResult, Problem } from '../pipeline/model.ts';
import type { DeployOutcome } from '../pipeline/outcome.ts';

/**
 * The records the reconciliation tracker (reconciliation-tracker.ts) keeps
 * and hands to the tracing, metrics and log sinks: one reconciliation, one
 * endpoint's deployment of it, what was folded in and how each ended.
 */

/**
 * How a reconciliation ended: its configuration reached every endpoint
 * ('deployed'), changed nothing ('unchanged'), failed at one stage, or a
 * newer one took over before it got everywhere ('superseded'). 'abandoned'
 * means the pipeline it ran in was replaced or stopped, or it outlived any
 * plausible run.
 */
export type ReconciliationResult = 'deployed' | 'unchanged' | 'render_failed' | 'invalid' | 'deploy_failed' | 'superseded' | 'no_endpoints' | 'abandoned';

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

export const noneFolded: Folded = { count: 0, changes: 0, reconciliations: [] };

function foldedTogether(...parts: readonly Folded[]): Folded {
  return {
    count: parts.reduce((sum, part) => sum + part.count, 0),
    changes: parts.reduce((sum, part) => sum + part.changes, 0),
    reconciliations: parts.flatMap((part) => part.reconciliations).slice(0, defaultMaxChangeRefs),
  };
}

/** What folding `reconciliation` in delivers: its own changes and whatever had been folded into it. */
export function foldedFrom(reconciliation: Reconciliation, ...before: readonly Folded[]): Folded {
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

/** `runtime-first`: passed on to deployment before its verdict (runtimeFirst); the verdict follows in the log, not here. */
export type Verdict = 'valid' | 'invalid' | 'unchanged-valid' | 'unchanged-invalid' | 'runtime-first';

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

export function endpointDeploy(endpoint: string, revision: number, hash: string, reason: DeployReason, start: number): EndpointDeploy {
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
export function applyDeployOutcome(deploy: EndpointDeploy, outcome: DeployOutcome, now: number): boolean {
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
