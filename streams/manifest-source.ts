import {
  asyncScheduler,
  concat,
  connect,
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
import type { FolderRead, NamedFiles } from '../lib/kube/manifests.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { manifestEvents, type FirstSeenOptions } from './manifest-events.ts';
import type { FileChange, WatchSignal } from './watch-path.ts';

export interface ManifestSourceOptions {
  /** The folder, for messages. */
  readonly folder: string;
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  /** A watch of the folder (see watchPath); each subscription is a new one. */
  readonly watch: () => Observable<WatchSignal>;
  /** Reads the whole folder, or the files named (see ManifestFolder.read). */
  readonly read: (named?: NamedFiles) => Observable<FolderRead>;
  /** How long changes settle before what they named (or the whole folder) is read. */
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
  /** The files to read; the whole folder when absent. */
  readonly named?: NamedFiles;
}

const isFileChange = (signal: WatchSignal | 'attempt'): signal is FileChange => typeof signal === 'object';

/** What two reads would read, as one: the whole folder if either does, settled if either is. */
function bothNamed(a: NamedFiles | undefined, b: NamedFiles | undefined): NamedFiles | undefined {
  return a && b ? { paths: [...a.paths, ...b.paths], quick: a.quick && b.quick } : undefined;
}

/**
 * A folder of manifests as a resource source that cannot go deaf without
 * saying so: a watch (set up again when it fails), a periodic re-read as a
 * safety net, and a watchdog told of the watch's state and of every read. Each (re)established watch reads the folder at
 * once, so what changed while nothing watched is read too. A file the watch
 * names is read at once (a quick read, which takes it only when it looks
 * whole) and again once changes settle, with every other file named since;
 * a change the watch cannot name a file for settles into a whole read. A re-read that
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
          else if (signal !== 'attempt') lastChangeAt = scheduler.now();
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
    // What the settled read reads: the files named since the last one, or everything once anything else came.
    let settling: { readonly named: NamedFiles | undefined } | undefined;
    const settledTicks = (signals: Observable<WatchSignal | 'attempt'>) =>
      signals.pipe(
        tap((signal) => {
          const named = isFileChange(signal) ? { paths: [signal.path], quick: false } : undefined;
          settling = { named: settling ? bothNamed(settling.named, named) : named };
        }),
        debounceTime(options.settleMs, scheduler),
        map((): Tick => {
          const named = settling?.named;
          settling = undefined;
          return { cause: 'watch', at: scheduler.now(), ...(named ? { named } : {}) };
        }),
      );
    const quickTicks = (signals: Observable<WatchSignal | 'attempt'>) =>
      signals.pipe(
        filter((signal): signal is FileChange => isFileChange(signal) && !signal.gone),
        map((signal): Tick => ({ cause: 'watch', at: scheduler.now(), named: { paths: [signal.path], quick: true } })),
      );
    const watchTicks = restarts.pipe(
      startWith(undefined),
      switchMap(watchOnce),
      connect((signals) => merge(quickTicks(signals), settledTicks(signals))),
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
        read: (tick) => options.read(tick.named),
        report: options.report,
        ...(options.firstSeen ? { firstSeen: { ...options.firstSeen, now: () => scheduler.now() } } : {}),
        // A re-read waiting behind a watch tick reads for the watch: what it finds was announced. The read that
        // replaces another reads what both would have.
        fold: (dropped, next) => {
          const named = bothNamed(dropped.named, next.named);
          return { cause: dropped.cause === 'watch' ? 'watch' : next.cause, at: next.at, ...(named ? { named } : {}) };
        },
        onRead: (tick, result) => {
          options.watchdog({ type: 'read', result, cause: tick.cause });
          if (tick.cause === 'reread' && result.ok && result.changed) unannounced.next(tick.at);
        },
      }),
    );
    return merge(events, deafness).pipe(finalize(() => options.watchdog({ type: 'stopped' })));
  });
}
