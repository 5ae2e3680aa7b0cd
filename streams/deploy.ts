import {
  asyncScheduler,
  catchError,
  concat,
  defer,
  EmptyError,
  filter,
  finalize,
  first,
  groupBy,
  map,
  mergeMap,
  type Observable,
  of,
  type OperatorFunction,
  ReplaySubject,
  Subject,
  type SchedulerLike,
  switchMap,
  tap,
  takeUntil,
  timeout,
  TimeoutError,
  timer,
} from 'rxjs';
import { backoffDelay } from '../lib/backoff.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { RetrySettings } from '../lib/config/pipeline-settings.ts';
import { supersededConfig } from '../lib/pipeline/changes.ts';
import type { DeployReason, DeployRequest, DeployResult, FleetCommand } from '../lib/pipeline/model.ts';
import type { DeployOutcome } from '../lib/pipeline/outcome.ts';
import type { DeployEffect } from './effects.ts';
import { concurrencyLimiter } from './operators/limit-concurrency.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface DeployOptions {
  readonly deploy: DeployEffect;
  /** How long one attempt may take before the endpoint is abandoned for this attempt. */
  readonly timeoutMs: number;
  /** Attempts running at once across all endpoints. */
  readonly maxParallel: number;
  readonly retry: RetrySettings;
  readonly scheduler?: SchedulerLike;
  /** The jitter source of the retry backoff. */
  readonly random?: () => number;
}

type RemoveCommand = Extract<FleetCommand, { readonly type: 'remove' }>;
type DeployCommand = Extract<FleetCommand, { readonly type: 'deploy' }>;

const isRemove = (command: FleetCommand): command is RemoveCommand => command.type === 'remove';
const isDeploy = (command: FleetCommand): command is DeployCommand => command.type === 'deploy';

/**
 * Deploys configurations to endpoints. Each endpoint has its own stream: one
 * deploy at a time, only the newest waiting request kept, failures retried
 * with backoff and reported, never propagated, so one endpoint failing or
 * hanging cannot delay or break another. A `remove` command ends the
 * endpoint's stream and cancels its running deploy.
 */
export function deploy(options: DeployOptions): OperatorFunction<FleetCommand, DeployOutcome> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  const { retry, timeoutMs } = options;

  return (commands) =>
    defer(() => {
      // Slots are taken per attempt, not per retry loop, so an endpoint
      // waiting out its backoff leaves its slot to the others.
      const limit = concurrencyLimiter(options.maxParallel);

      const deployWithRetries = (request: DeployRequest, superseded: Observable<void>): Observable<DeployOutcome> =>
        defer(() => {
          // `superseded` fires once per newer arrival and does not replay; a
          // request that arrived during a failing attempt must still stop the
          // retry that would follow it.
          const newer = new ReplaySubject<void>(1);
          const watching = superseded.subscribe(newer);
          let startedAt: number | undefined;

          const attempt = (n: number): Observable<DeployOutcome> =>
            limit(
              defer(() => {
                startedAt ??= scheduler.now();
                return options.deploy(request);
              }).pipe(
                timeout({ first: timeoutMs, scheduler }),
                // The effect promises one result; taking it frees the slot
                // and the endpoint's queue even if the effect never completes.
                first(),
              ),
            ).pipe(
              map((result) => deployedOutcome(request, result, n, startedAt ?? scheduler.now(), scheduler.now())),
              catchError((error: unknown) => {
                const final = n >= retry.maxAttempts;
                const failure = of(failedOutcome(request, n, final, describeFailure(error, request, timeoutMs)));
                if (final) return failure;
                const retryAfterBackoff = timer(backoffDelay(n, retry, random), scheduler).pipe(
                  takeUntil(newer),
                  switchMap(() => attempt(n + 1)),
                );
                return concat(failure, retryAfterBackoff);
              }),
            );

          return attempt(1).pipe(finalize(() => watching.unsubscribe()));
        });

      // Removals bypass the groups: a duration selector subscribed to its own
      // group counts as a subscriber of that group, and groupBy never lets go
      // of its source while any group has one, so unsubscribing would leak.
      const removed = new Subject<string>();
      const removalOf = (id: string) => removed.pipe(filter((removedId) => removedId === id));

      return commands.pipe(
        tap((command) => {
          if (isRemove(command)) removed.next(command.endpointId);
        }),
        filter(isDeploy),
        groupBy((command) => command.request.endpoint.id, { duration: (group) => removalOf(group.key) }),
        mergeMap((group) =>
          group.pipe(
            map((command) => command.request),
            serialLatest(deployWithRetries, supersededRequest),
            // Completing the group alone would let serialLatest finish the
            // running deploy; a removed endpoint's deploy is cancelled instead.
            takeUntil(removalOf(group.key)),
          ),
        ),
      );
    });
}

/**
 * A request superseded while it waited for its endpoint: the replacing one
 * also delivers its changes (and counts as a change deployment if either was
 * one), so latency is measured from the older change. A runtime-first
 * confirmation replacing its own configuration deploys it whole.
 */
function supersededRequest(dropped: DeployRequest, next: DeployRequest): DeployRequest {
  const reason: DeployReason = dropped.reason === 'change' ? 'change' : next.reason;
  return { ...next, reason, config: supersededConfig(dropped.config, next.config) };
}

function deployedOutcome(request: DeployRequest, result: DeployResult, attempts: number, startedAt: number, now: number): DeployOutcome {
  return {
    type: 'deployed',
    endpoint: request.endpoint.id,
    revision: request.config.revision,
    hash: request.config.hash,
    reason: request.reason,
    result,
    attempts,
    durationMs: now - startedAt,
    latencyMs: request.reason === 'change' ? now - request.config.changes.firstAt : undefined,
  };
}

function failedOutcome(request: DeployRequest, attempt: number, final: boolean, error: string): DeployOutcome {
  return {
    type: 'deployFailed',
    endpoint: request.endpoint.id,
    revision: request.config.revision,
    hash: request.config.hash,
    reason: request.reason,
    error,
    attempt,
    final,
  };
}

function describeFailure(error: unknown, request: DeployRequest, timeoutMs: number): string {
  const endpoint = request.endpoint.id;
  if (error instanceof TimeoutError) return `deploy to ${endpoint} timed out after ${timeoutMs} ms`;
  if (error instanceof EmptyError) return `deploy to ${endpoint} completed without a result`;
  return errorMessage(error);
}
