import {
  asyncScheduler,
  catchError,
  concat,
  defer,
  EMPTY,
  filter,
  map,
  type Observable,
  of,
  ReplaySubject,
  switchMap,
  take,
  takeUntil,
  tap,
  throwIfEmpty,
  timer,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import { backoffDelay } from '../lib/backoff.ts';
import type { RetrySettings } from '../lib/config/pipeline-settings.ts';
import { errorMessage } from '../lib/error-message.ts';
import { mergeChanges, withChangesOf } from '../lib/pipeline/changes.ts';
import type { Changes, Rendered, RenderedFiles, Validated, ValidationVerdict } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import type { Quarantine } from '../lib/pipeline/quarantine.ts';
import type { RenderEffect, ValidateEffect } from './effects.ts';
import { serialLatest } from './operators/serial-latest.ts';
import { quarantine, type Judged } from './quarantine.ts';

export interface ValidateOptions {
  readonly validate: ValidateEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
  /** How a validation that could not run is tried again: exponential from the base delay, capped. */
  readonly retry?: Pick<RetrySettings, 'baseDelayMs' | 'maxDelayMs'>;
  /** The jitter source of that backoff. */
  readonly random?: () => number;
  /**
   * Where a refused configuration's objects at fault go, and how it is
   * rendered again without them (see quarantine.ts). Without it, a refused
   * configuration is simply invalid.
   */
  readonly quarantine?: { readonly book: Quarantine; readonly render: RenderEffect; readonly maxValidations?: number };
  /**
   * Whether a configuration differs from the last valid one only in what the
   * runtime applies (lib/deploy/runtime-only.ts). Such a configuration is
   * passed on at once (`pending`: its files wait) and validated meanwhile;
   * valid, it is passed on again (`confirmed`: its files are written);
   * refused, or never judged, the last valid configuration is passed on
   * again, which undoes it (see docs/adr/0022-runtime-first.md). Without it,
   * every configuration waits for its verdict.
   */
  readonly runtimeFirst?: (validated: RenderedFiles, rendered: RenderedFiles) => boolean;
}

const defaultRetry = { baseDelayMs: 1_000, maxDelayMs: 30_000 };

/**
 * Validates one configuration at a time (`haproxy -c` is heavy and must not
 * run in parallel) and, when one finishes, only the newest rendered config
 * waiting: stale ones are never validated. Content identical to the last
 * verdict is not checked again; it would get the same verdict, and a valid
 * one is already downstream. The skip is reported with that verdict, so a
 * reconciliation that changed nothing still has an end. A config superseded
 * while it waited hands its changes to the one that replaced it.
 *
 * A refused configuration goes through the quarantine (when given): what
 * leaves is the configuration without the objects at fault. A validation
 * that could not run gives no verdict: it is reported and tried again with
 * backoff until it runs, or until a newer configuration is waiting (which
 * then carries this one's changes); it is never counted as invalid.
 */
export function validate(options: ValidateOptions): OperatorFunction<Rendered, Validated> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const retry = options.retry ?? defaultRetry;
  const random = options.random ?? Math.random;
  return (source) =>
    defer(() => {
      let lastVerdict: { readonly hash: string; readonly valid: boolean } | undefined;
      /** The newest configuration passed on as valid: what a runtime-first configuration is compared with and reverted to. */
      let lastValid: Validated | undefined;
      /** Changes of a configuration given up while it waited to be validated again. */
      let carried: Changes | undefined;

      const job = (next: Rendered, superseded: Observable<void>): Observable<Validated> => {
        const rendered = carried ? { ...next, changes: mergeChanges(carried, next.changes) } : next;
        carried = undefined;
        if (rendered.hash === lastVerdict?.hash) {
          options.report({ type: 'validationSkipped', revision: rendered.revision, hash: rendered.hash, valid: lastVerdict.valid });
          return EMPTY;
        }
        const startedAt = scheduler.now();
        const previous = lastValid;
        const early = previous !== undefined && options.runtimeFirst !== undefined && options.runtimeFirst(previous.files, rendered.files);
        // `superseded` does not replay: one that fired during a validation must still cut the backoff after it.
        const newer = new ReplaySubject<void>(1);
        const watching = superseded.subscribe(newer);

        const check = (config: Rendered): Observable<ValidationVerdict> => {
          const attempt = (n: number): Observable<ValidationVerdict> =>
            defer(() => options.validate(config)).pipe(
              take(1),
              throwIfEmpty(() => new Error(`validation of revision ${config.revision} gave no verdict`)),
              catchError((error: unknown) => of<ValidationVerdict>({ status: 'unavailable', message: errorMessage(error) })),
              switchMap((verdict) => {
                if (verdict.status !== 'unavailable') return of(verdict);
                const delay = backoffDelay(n, retry, random);
                options.report({ type: 'validationUnavailable', revision: config.revision, hash: config.hash, error: verdict.message, attempt: n, retryInMs: Math.round(delay) });
                return timer(delay, scheduler).pipe(
                  takeUntil(newer),
                  switchMap(() => attempt(n + 1)),
                );
              }),
            );
          return attempt(1);
        };

        const judged: Observable<Judged> = check(rendered).pipe(map((verdict) => ({ config: rendered, verdict, validations: 1 })));
        const repaired = options.quarantine ? judged.pipe(quarantine({ ...options.quarantine, check, report: options.report })) : judged;
        let judgedAtAll = false;
        /** Whether a valid configuration left this job: a runtime-first one confirmed, or replaced by one without the objects at fault. */
        let settled = false;
        const judging = repaired.pipe(
          tap(({ config, verdict }) => {
            judgedAtAll = true;
            const durationMs = scheduler.now() - startedAt;
            lastVerdict = { hash: config.hash, valid: verdict.status === 'valid' };
            if (verdict.status === 'valid') options.report({ type: 'validated', revision: config.revision, hash: config.hash, durationMs });
            else if (verdict.status === 'invalid') options.report({ type: 'validationFailed', revision: config.revision, hash: config.hash, error: verdict.message, durationMs });
          }),
          filter(({ verdict }) => verdict.status === 'valid'),
          map(({ config }): Validated => config),
          tap((config) => {
            lastValid = config;
            settled = true;
          }),
          // Already passed on before its verdict: passed on again, with no changes of its own, so its files are written.
          map((config): Validated => (early && config.hash === rendered.hash ? { ...config, runtimeFirst: 'confirmed', changes: { count: 0, firstAt: scheduler.now(), refs: [] } } : config)),
          // Only rendering again without the objects at fault can fail here; the running configuration keeps serving.
          catchError((error: unknown) => {
            judgedAtAll = true;
            const message = `rendering again without the objects HAProxy refused failed: ${errorMessage(error)}`;
            options.report({ type: 'validationFailed', revision: rendered.revision, hash: rendered.hash, error: message, durationMs: scheduler.now() - startedAt });
            return EMPTY;
          }),
          tap({
            // Before the next job starts: given up for a newer configuration before any verdict, this
            // one's changes are delivered by that one.
            complete: () => {
              // A runtime-first configuration's changes are delivered by its revert instead.
              if (!judgedAtAll && !early) carried = carried ? mergeChanges(rendered.changes, carried) : rendered.changes;
            },
            finalize: () => watching.unsubscribe(),
          }),
        );
        if (!early) return judging;
        // The runtime may apply an unvalidated configuration because the last valid one is a plan of
        // runtime operations away: passing that one on again plans those operations back.
        const revert = defer(() => {
          if (settled) return EMPTY;
          options.report({ type: 'runtimeReverted', revision: rendered.revision, hash: rendered.hash, to: previous.hash });
          return of<Validated>({ ...previous, changes: rendered.changes });
        });
        return concat(
          defer(() => {
            options.report({ type: 'runtimeFirst', revision: rendered.revision, hash: rendered.hash });
            return of<Validated>({ ...rendered, runtimeFirst: 'pending' });
          }),
          judging,
          revert,
        );
      };

      return source.pipe(serialLatest(job, withChangesOf));
    });
}
