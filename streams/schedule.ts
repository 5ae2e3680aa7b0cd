import { asyncScheduler, throttleTime, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';

export interface ScheduleOptions {
  readonly minIntervalMs: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * Keeps deployments at least `minIntervalMs` apart: the first config goes out
 * at once, the last one of a window at its end, nothing in between. A
 * trailing deployment opens a new window, so the interval holds after it too.
 */
export function schedule<T>(options: ScheduleOptions): MonoTypeOperatorFunction<T> {
  return throttleTime(options.minIntervalMs, options.scheduler ?? asyncScheduler, { leading: true, trailing: true });
}
