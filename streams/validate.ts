import {
  asyncScheduler,
  catchError,
  defer,
  EMPTY,
  filter,
  map,
  take,
  tap,
  throwIfEmpty,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { withChangesOf } from '../lib/pipeline/changes.ts';
import type { Rendered, Validated } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import type { ValidateEffect } from './effects.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface ValidateOptions {
  readonly validate: ValidateEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
}

/**
 * Validates one configuration at a time (`haproxy -c` is heavy and must not
 * run in parallel) and, when one finishes, only the newest rendered config
 * waiting: stale ones are never validated. Content identical to the last
 * verdict is not checked again; it would get the same verdict, and a valid
 * one is already downstream. The skip is reported with that verdict, so a
 * reconciliation that changed nothing still has an end. A config superseded
 * while it waited hands its changes to the one that replaced it.
 */
export function validate(options: ValidateOptions): OperatorFunction<Rendered, Validated> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() => {
      let lastVerdict: { readonly hash: string; readonly valid: boolean } | undefined;
      return source.pipe(
        serialLatest((rendered: Rendered) => {
          if (rendered.hash === lastVerdict?.hash) {
            options.report({ type: 'validationSkipped', revision: rendered.revision, hash: rendered.hash, valid: lastVerdict.valid });
            return EMPTY;
          }
          const startedAt = scheduler.now();
          const failed = (error: string) =>
            options.report({
              type: 'validationFailed',
              revision: rendered.revision,
              hash: rendered.hash,
              error,
              durationMs: scheduler.now() - startedAt,
            });
          return options.validate(rendered).pipe(
            take(1),
            throwIfEmpty(() => new Error(`validation of revision ${rendered.revision} gave no verdict`)),
            tap((verdict) => (lastVerdict = { hash: rendered.hash, valid: verdict.valid })),
            tap((verdict) => {
              if (verdict.valid)
                options.report({
                  type: 'validated',
                  revision: rendered.revision,
                  hash: rendered.hash,
                  durationMs: scheduler.now() - startedAt,
                });
              else failed(verdict.message);
            }),
            filter((verdict) => verdict.valid),
            map((): Validated => rendered),
            catchError((error: unknown) => {
              failed(errorMessage(error));
              return EMPTY;
            }),
          );
        }, withChangesOf),
      );
    });
}
