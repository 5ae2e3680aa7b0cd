import {
  asyncScheduler,
  concat,
  debounceTime,
  defer,
  filter,
  finalize,
  ignoreElements,
  interval,
  map,
  merge,
  mergeMap,
  of,
  retry,
  startWith,
  Subject,
  switchMap,
  tap,
  timer,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
import type { CompiledPath, WatchedResource } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { WatchdogEvent } from '../lib/kube/manifest-watchdog.ts';
import type { FolderRead } from '../lib/kube/manifests.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { manifestEvents, type FirstSeenOptions } from './manifest-events.ts';
import type { WatchSignal } from './watch-path.ts';

export interface ManifestSourceOptions {
  /** The folder, for messages. */
  readonly folder: string;
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  /** A watch of the folder (see watchPath); each subscription is a new one. */
  readonly watch: () => Observable<WatchSignal>;
  readonly read: () => Observable<FolderRead>;
  /** How long changes settle before the folder is read. */
  readonly settleMs: number;
  /** The safety net: the folder is read this often whatever the watch says (cheap when nothing changed). */
  readonly rereadMs: number;
  /** A failed watch is set up again after this long. */
  readonly retryMs: number;
  /** How long after a re-read found a change the watch may still report it before it counts as deaf. */
  readonly graceMs: number;
  readonly report: Report;
  readonly watchdog: (event: WatchdogEvent) => void;
  /** Objects without a creationTimestamp get the time they were first seen (on the scheduler's clock). */
  readonly firstSeen?: Omit<FirstSeenOptions, 'now'>;
  readonly scheduler?: SchedulerLike;
}

interface Tick {
  readonly cause: 'watch' | 'reread';
  readonly at: number;
}

/**
 * A folder of manifests as a resource source that cannot go deaf without
 * saying so: a watch (set up again when it fails), a periodic re-read as a
 * safety net, and a watchdog told of the watch's state and of every read. Each (re)established watch reads the folder at
 * once, so what changed while nothing watched is read too. A re-read that
 * finds a change no watch event announced (none within `graceMs` of it,
 * allowing for the settle time) means the watch went deaf: that is reported
 * to the watchdog and the watch is set up anew.
 */
export function manifestSource(options: ManifestSourceOptions): Observable<ResourceEvent> {
  return defer(() => {
    options.watchdog({ type: 'started' });
    const scheduler = options.scheduler ?? asyncScheduler;
    const restarts = new Subject<void>();
    const unannounced = new Subject<number>();
    let lastChangeAt = -Infinity;
    const watchOnce = () =>
      concat(of('attempt' as const), defer(options.watch)).pipe(
        tap((signal) => {
          if (signal === 'ready') options.watchdog({ type: 'watching' });
          else if (signal === 'change') lastChangeAt = scheduler.now();
        }),
        retry({
          delay: (error: unknown) => {
            const message = `watching ${options.folder} failed: ${errorMessage(error)}; trying again in ${options.retryMs / 1000} s`;
            options.report({ type: 'resourceError', error: message });
            options.watchdog({ type: 'watchFailed', error: message });
            return timer(options.retryMs, scheduler);
          },
        }),
      );
    const watchTicks = restarts.pipe(
      startWith(undefined),
      switchMap(watchOnce),
      debounceTime(options.settleMs, scheduler),
      map((): Tick => ({ cause: 'watch', at: scheduler.now() })),
    );
    const rereads = interval(options.rereadMs, scheduler).pipe(map((): Tick => ({ cause: 'reread', at: scheduler.now() })));
    const deafness = unannounced.pipe(
      mergeMap((at) => timer(options.graceMs, scheduler).pipe(filter(() => lastChangeAt < at - options.settleMs - options.graceMs))),
      tap(() => {
        options.watchdog({ type: 'missed' });
        restarts.next();
      }),
      ignoreElements(),
    );
    const events = merge(watchTicks, rereads).pipe(
      manifestEvents<Tick>({
        resources: options.resources,
        ignoreFields: options.ignoreFields,
        read: options.read,
        report: options.report,
        ...(options.firstSeen ? { firstSeen: { ...options.firstSeen, now: () => scheduler.now() } } : {}),
        // A re-read waiting behind a watch tick reads for the watch: what it finds was announced.
        fold: (dropped, next) => (dropped.cause === 'watch' ? { ...next, cause: 'watch' } : next),
        onRead: (tick, result) => {
          options.watchdog({ type: 'read', result, cause: tick.cause });
          if (tick.cause === 'reread' && result.ok && result.changed) unannounced.next(tick.at);
        },
      }),
    );
    return merge(events, deafness).pipe(finalize(() => options.watchdog({ type: 'stopped' })));
  });
}
