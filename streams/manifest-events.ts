import { catchError, defer, EMPTY, from, mergeMap, take, tap, type Observable, type OperatorFunction } from 'rxjs';
import type { CompiledPath, WatchedResource } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import { ManifestIndex } from '../lib/kube/manifest-index.ts';
import type { ReadResult } from '../lib/kube/manifest-watchdog.ts';
import type { FolderRead } from '../lib/kube/manifests.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface ManifestEventsOptions<T> {
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  /** Reads every manifest file, each parsed on its own, with the folder's fingerprint. */
  readonly read: () => Observable<FolderRead>;
  readonly report: Report;
  /** Told of every read with the tick that asked for it. */
  readonly onRead?: (tick: T, result: ReadResult) => void;
  /** Merges a tick dropped while a read ran into the newer one that replaces it. */
  readonly fold?: (dropped: T, next: T) => T;
}

/**
 * A folder of manifests as an informer-like source: each tick (a change
 * seen in the folder, or a periodic re-read) re-reads it, one read at a time
 * with only the newest tick waiting, and emits what changed; the first
 * successful read is the initial list, followed by `synced` for every watched
 * resource. A read that finds the folder as the last one applied (the same
 * fingerprint) emits nothing and reports nothing again; a failed read is
 * reported once until the folder reads again or fails otherwise.
 */
export function manifestEvents<T>(options: ManifestEventsOptions<T>): OperatorFunction<T, ResourceEvent> {
  return (ticks) =>
    defer(() => {
      const index = new ManifestIndex(options.resources, options.ignoreFields);
      let synced = false;
      let applied: string | undefined;
      let failure: string | undefined;
      return ticks.pipe(
        serialLatest(
          (tick) =>
            options.read().pipe(
              take(1),
              tap((read) => {
                failure = undefined;
                options.onRead?.(tick, { ok: true, changed: applied !== undefined && read.fingerprint !== applied });
              }),
              mergeMap((read) => {
                if (read.fingerprint === applied) return EMPTY;
                applied = read.fingerprint;
                const { events, errors } = index.update(read.files);
                for (const error of errors) options.report({ type: 'resourceError', error });
                if (synced) return from(events);
                synced = true;
                return from([...events, ...options.resources.map((r): ResourceEvent => ({ type: 'synced', kind: r.name }))]);
              }),
              catchError((error: unknown) => {
                const message = `manifests could not be read: ${errorMessage(error)}`;
                options.onRead?.(tick, { ok: false, error: message });
                if (message !== failure) options.report({ type: 'resourceError', error: message });
                failure = message;
                return EMPTY;
              }),
            ),
          options.fold,
        ),
      );
    });
}
