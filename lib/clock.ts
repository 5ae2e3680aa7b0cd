import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time, for the parts of lib/ that wait, poll or time out: injected, so
 * their specs run them on a clock of their own (a virtual one that moves
 * only when the spec moves it, or one faster than real time) instead of
 * waiting on real time.
 */
export interface Clock {
  /** Milliseconds; only differences between two readings mean anything. */
  now(): number;
  /** Calls `callback` once `ms` have passed; the function returned cancels it. A timer alone never keeps the process running. */
  after(ms: number, callback: () => void): () => void;
  /** Resolves once `ms` have passed; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** How long `ms` of this clock last in real time, for timers that run on real time whatever the clock (a socket's idle timeout: the informer's watch idle abort). */
  realMs(ms: number): number;
}

/** Real time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  after: (ms, callback) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  sleep: (ms, signal) => delay(ms, undefined, signal === undefined ? undefined : { signal }),
  realMs: (ms) => ms,
};
