import { catchError, concat, defer, EMPTY, from, ignoreElements, mergeMap, take, tap, type Observable, type OperatorFunction } from 'rxjs';
import type { CompiledPath, WatchedResource } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { FirstSeen } from '../lib/kube/first-seen.ts';
import { ManifestIndex } from '../lib/kube/manifest-index.ts';
import type { ReadResult } from '../lib/kube/manifest-watchdog.ts';
import type { FolderRead } from '../lib/kube/manifests.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface ManifestEventsOptions<T> {
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  /** Reads the manifest files the tick asks for, each parsed on its own, with the folder's fingerprint. */
  readonly read: (tick: T) => Observable<FolderRead>;
  readonly report: Report;
  /** Told of every read with the tick that asked for it. */
  readonly onRead?: (tick: T, result: ReadResult) => void;
  /** Merges a tick dropped while a read ran into the newer one that replaces it. */
  readonly fold?: (dropped: T, next: T) => T;
  /** Objects without a creationTimestamp get the time they were first seen (local mode's host ownership). */
  readonly firstSeen?: FirstSeenOptions;
}

export interface FirstSeenOptions {
  /** Kept across configurations: the record outlives each index. */
  readonly state: FirstSeen;
  /** Stores the record (local mode: in the work dir), before what it stamped is emitted. */
  readonly remember: (state: FirstSeen) => Observable<unknown>;
  readonly now: () => number;
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
      const index = new ManifestIndex(options.resources, options.ignoreFields, options.firstSeen?.state);
      let synced = false;
      let applied: string | undefined;
      let failure: string | undefined;
      return ticks.pipe(
        serialLatest(
          (tick) =>
            options.read(tick).pipe(
              take(1),
              tap((read) => {
                failure = undefined;
                options.onRead?.(tick, { ok: true, changed: applied !== undefined && read.fingerprint !== applied });
              }),
              mergeMap((read) => {
                if (read.fingerprint === applied) return EMPTY;
                applied = read.fingerprint;
                const { events, errors, firstSeenChanged } = index.update(read.files, options.firstSeen?.now() ?? 0);
                for (const error of errors) options.report({ type: 'resourceError', error });
                const emitted = synced ? events : [...events, ...options.resources.map((r): ResourceEvent => ({ type: 'synced', kind: r.name }))];
                synced = true;
                return firstSeenChanged && options.firstSeen ? concat(remembered(options.firstSeen, options.report), from(emitted)) : from(emitted);
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

/** The first-seen record stored; a failure is reported and the objects served all the same (the order holds until a restart). */
function remembered(firstSeen: FirstSeenOptions, report: Report): Observable<never> {
  return defer(() => firstSeen.remember(firstSeen.state)).pipe(
    ignoreElements(),
    catchError((error: unknown) => {
      report({ type: 'resourceError', error: `the order in which objects were first seen could not be stored: ${errorMessage(error)}` });
      return EMPTY;
    }),
  );
}
