import { asyncScheduler, defer, map, throttleTime, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';

export interface ScheduleOptions<T> {
  readonly minIntervalMs: number;
  /** Merges a config dropped inside a window into the next one that goes out (its changes ride on). */
  readonly fold?: (dropped: T, next: T) => T;
  readonly scheduler?: SchedulerLike;
}

/**
 * Keeps deployments at least `minIntervalMs` apart: the first config goes out
 * at once, the last one of a window at its end, nothing in between. A
 * trailing deployment opens a new window, so the interval holds after it too.
 * Every config that came in since the last one went out is folded into the
 * next one that goes out: throttleTime only ever sends the newest, so those
 * are exactly the ones it dropped.
 */
export function schedule<T>(options: ScheduleOptions<T>): MonoTypeOperatorFunction<T> {
  const throttle = throttleTime<T>(options.minIntervalMs, options.scheduler ?? asyncScheduler, { leading: true, trailing: true });
  const { fold } = options;
  if (!fold) return throttle;
  return (source) =>
    defer(() => {
      let sinceLast: T | undefined;
      return source.pipe(
        map((value) => (sinceLast = sinceLast === undefined ? value : fold(sinceLast, value))),
        throttle,
        map((folded) => {
          sinceLast = undefined;
          return folded;
        }),
      );
    });
}
