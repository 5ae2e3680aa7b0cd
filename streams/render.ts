import { asyncScheduler, catchError, defer, EMPTY, map, switchMap, take, tap, throwIfEmpty, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { Rendered, Trigger } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import type { Quarantine } from '../lib/pipeline/quarantine.ts';
import { renderedFrom } from '../lib/pipeline/rendered.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { RenderEffect } from './effects.ts';

export interface RenderOptions {
  readonly render: RenderEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
  /** Objects HAProxy refused (see quarantine.ts): left out of every render until they change. */
  readonly quarantine?: Quarantine;
}

/**
 * Renders each trigger. A newer trigger supersedes a render not yet
 * delivered (switchMap): its result would be stale before it is used. A
 * failed render is reported and dropped, so the last good configuration keeps
 * serving. Quarantined objects are left out of the render and listed among
 * its excluded objects; those that changed or went since are released
 * first, so their new version is rendered (and judged) again.
 */
export function render(options: RenderOptions): OperatorFunction<Trigger, Rendered> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const book = options.quarantine;
  return switchMap(({ snapshot, changes }) =>
    defer(() => {
      const startedAt = scheduler.now();
      const released = book?.release(snapshot.stores) ?? [];
      if (released.length > 0) options.report({ type: 'released', revision: snapshot.revision, objects: released, total: book!.size });
      const stores = book ? book.hide(snapshot.stores) : snapshot.stores;
      return options.render(stores === snapshot.stores ? snapshot : { ...snapshot, stores }).pipe(
        take(1),
        throwIfEmpty(() => new Error(`render of revision ${snapshot.revision} produced no configuration`)),
        map((output): Rendered => renderedFrom(output, { snapshot, changes }, book?.problems ?? [])),
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
            ...(result.deprecations === undefined ? {} : { deprecations: result.deprecations }),
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
