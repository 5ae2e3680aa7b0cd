import { asyncScheduler, defer, EMPTY, map, throttle, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';

export interface ScheduleOptions<T> {
  readonly minIntervalMs: number;
  /** Merges a config dropped inside a window into the next one that goes out (its changes ride on). */
  readonly fold?: (dropped: T, next: T) => T;
  /**
   * Configs that open no window when they go out (a runtime-first
   * confirmation, which only writes files): they wait for a window that is
   * open, but never make the next config wait.
   */
  readonly exempt?: (value: T) => boolean;
  readonly scheduler?: SchedulerLike;
}

/**
 * Keeps deployments at least `minIntervalMs` apart: the first config goes out
 * at once, the last one of a window at its end, nothing in between. A
 * trailing deployment opens a new window, so the interval holds after it too.
 * Every config that came in since the last one went out is folded into the
 * next one that goes out: the throttle only ever sends the newest, so those
 * are exactly the ones it dropped.
 */
export function schedule<T>(options: ScheduleOptions<T>): MonoTypeOperatorFunction<T> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const { exempt } = options;
  // An empty window completes as it opens: the next config finds none open.
  const window = (value: T) => (exempt?.(value) ? EMPTY : timer(options.minIntervalMs, scheduler));
  const throttled = throttle<T>(window, { leading: true, trailing: true });
  const { fold } = options;
  if (!fold) return throttled;
  return (source) =>
    defer(() => {
      let sinceLast: T | undefined;
      return source.pipe(
        map((value) => (sinceLast = sinceLast === undefined ? value : fold(sinceLast, value))),
        throttled,
        map((folded) => {
          sinceLast = undefined;
          return folded;
        }),
      );
    });
}
