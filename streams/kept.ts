import { asyncScheduler, defer, finalize, merge, share, timer, type MonoTypeOperatorFunction, type Observable, type SchedulerLike, type SubjectLike } from 'rxjs';

/** The watches a mode keeps from one controller configuration's pipeline to the next, by key. */
export type KeptWatches = Map<string, Observable<unknown>>;

export interface KeptOptions<T> {
  /** What the watch is: the same key is the same watch, whichever configuration's pipeline asks for it. */
  readonly key: string;
  /** The mode's kept watches; the entry goes when its watch stops. */
  readonly kept: KeptWatches;
  /** What a subscriber that comes while the watch runs is told first (the objects listed so far, the last set). */
  readonly connector: () => SubjectLike<T>;
  /** How long a watch nobody reads stays open for the next pipeline to take over. */
  readonly graceMs: number;
  /** Emits when the mode stops: watches nobody reads stop then, without waiting out their grace. */
  readonly released: Observable<unknown>;
  readonly scheduler?: SchedulerLike;
}

/**
 * One watch shared by key across controller configurations: a new
 * configuration's pipeline starts as the old one's stops (switchMap), and
 * one that asks for a watch the old one had takes over the running watch,
 * told what it has seen by the connector, instead of starting it anew (a
 * LIST per resource at 10k objects, and every object a new instance, so
 * nothing cached by object would hold). A watch nobody takes over within
 * the grace stops; one that fails or ends is not kept, so the next
 * subscriber starts it again.
 */
export function kept<T>(options: KeptOptions<T>): MonoTypeOperatorFunction<T> {
  const { key, kept: watches, connector, graceMs, released, scheduler = asyncScheduler } = options;
  return (source) =>
    defer(() => {
      const running = watches.get(key) as Observable<T> | undefined;
      if (running) return running;
      const shared = source.pipe(
        finalize(() => {
          if (watches.get(key) === shared) watches.delete(key);
        }),
        share({ connector, resetOnRefCountZero: () => merge(timer(graceMs, scheduler), released), resetOnError: true, resetOnComplete: true }),
      );
      watches.set(key, shared);
      return shared;
    });
}
