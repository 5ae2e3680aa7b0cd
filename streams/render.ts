import {
  asyncScheduler,
  catchError,
  defer,
  EMPTY,
  map,
  switchMap,
  take,
  tap,
  throwIfEmpty,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import { contentHash } from '../lib/pipeline/content-hash.ts';
import type { Rendered, Trigger } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { RenderEffect } from './effects.ts';

export interface RenderOptions {
  readonly render: RenderEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
}

/**
 * Renders each trigger. A newer trigger supersedes a render not yet
 * delivered (switchMap): its result would be stale before it is used. A
 * failed render is reported and dropped, so the last good configuration keeps
 * serving.
 */
export function render(options: RenderOptions): OperatorFunction<Trigger, Rendered> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return switchMap(({ snapshot, changes }) =>
    defer(() => {
      const startedAt = scheduler.now();
      return options.render(snapshot).pipe(
        take(1),
        throwIfEmpty(() => new Error(`render of revision ${snapshot.revision} produced no configuration`)),
        map((output): Rendered => ({ ...output, revision: snapshot.revision, hash: contentHash(output.files), changes })),
        tap((result) =>
          options.report({
            type: 'rendered',
            revision: result.revision,
            hash: result.hash,
            durationMs: scheduler.now() - startedAt,
            changes,
            files: result.files,
            excluded: result.excluded,
            warnings: result.warnings,
          }),
        ),
        catchError((error: unknown) => {
          options.report({
            type: 'renderFailed',
            revision: snapshot.revision,
            error: errorMessage(error),
            durationMs: scheduler.now() - startedAt,
            changes,
          });
          return EMPTY;
        }),
      );
    }),
  );
}
