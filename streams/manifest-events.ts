import { catchError, defer, EMPTY, from, mergeMap, take, type Observable, type OperatorFunction } from 'rxjs';
import type { CompiledPath, WatchedResource } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import { ManifestIndex } from '../lib/kube/manifest-index.ts';
import type { ManifestSet } from '../lib/kube/manifests.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface ManifestEventsOptions {
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  /** Reads every manifest file, each parsed on its own. */
  readonly read: () => Observable<ReadonlyMap<string, ManifestSet>>;
  readonly report: Report;
}

/**
 * A folder of manifests as an informer-like source: each tick (a change
 * seen in the folder) re-reads it, one read at a time with only the newest
 * tick waiting, and emits what changed; the first successful read is the
 * initial list, followed by `synced` for every watched resource.
 */
export function manifestEvents(options: ManifestEventsOptions): OperatorFunction<unknown, ResourceEvent> {
  return (ticks) =>
    defer(() => {
      const index = new ManifestIndex(options.resources, options.ignoreFields);
      let synced = false;
      return ticks.pipe(
        serialLatest(() =>
          options.read().pipe(
            take(1),
            mergeMap((files) => {
              const { events, errors } = index.update(files);
              for (const error of errors) options.report({ type: 'resourceError', error });
              if (synced) return from(events);
              synced = true;
              return from([...events, ...options.resources.map((r): ResourceEvent => ({ type: 'synced', kind: r.name }))]);
            }),
            catchError((error: unknown) => {
              options.report({ type: 'resourceError', error: `manifests could not be read: ${errorMessage(error)}` });
              return EMPTY;
            }),
          ),
        ),
      );
    });
}
