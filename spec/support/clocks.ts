import type { Clock } from '../../lib/clock.ts';

/** Lets promise callbacks and I/O callbacks already due run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A sleep made of a clock's `after`. */
function sleepOn(after: Clock['after'], ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const aborted = () => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = after(ms, () => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    });
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

interface Timer {
  readonly at: number;
  readonly order: number;
  readonly callback: () => void;
}

/**
 * Virtual time: nothing passes until the spec moves the clock. `advance`
 * runs the timers due on the way, each at its own time; `runUntil` lets the
 * code under test drive it, moving time to its next timer as soon as one is
 * set, so a 20 s timeout passes in as long as the work between the timers
 * takes, and what it took is exact. Meant for code whose waits between
 * steps are on this clock while each step's I/O (a request, with its own
 * timeout) runs in real time.
 */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  #timers: Timer[] = [];
  readonly #waiting = new Set<() => void>();

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, callback: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), order: this.#order++, callback };
    this.#timers.push(timer);
    this.#timers.sort((a, b) => a.at - b.at || a.order - b.order);
    for (const wake of [...this.#waiting]) wake();
    return () => {
      this.#timers = this.#timers.filter((entry) => entry !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn((delayMs, callback) => this.after(delayMs, callback), ms, signal);
  }

  realMs(ms: number): number {
    return ms;
  }

  /** Timers waiting. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time on by `ms`, running each timer due on the way at its time and letting what it set off settle. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (let next = this.#timers[0]; next !== undefined && next.at <= until; next = this.#timers[0]) {
      this.#timers.shift();
      this.#now = next.at;
      next.callback();
      await settle();
    }
    this.#now = until;
    await settle();
  }

  /** Settles `work`, moving time to each timer as soon as one is set; rejects if `limitMs` of virtual time would pass first. */
  async runUntil<T>(work: Promise<T>, limitMs = 3_600_000): Promise<T> {
    const deadline = this.#now + limitMs;
    const state = { done: false };
    const finished = work.finally(() => {
      state.done = true;
    });
    finished.catch(() => undefined);
    while (!state.done) {
      const next = this.#timers[0];
      if (next !== undefined) {
        if (next.at > deadline) throw new Error(`still not settled after ${limitMs} ms of virtual time`);
        await this.advance(next.at - this.#now);
        continue;
      }
      // Real work under way (I/O): wait for it to settle the work or to ask for a timer.
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiting.delete(wake);
          resolve();
        };
        this.#waiting.add(wake);
        void finished.then(wake, wake);
      });
    }
    return finished;
  }
}

/**
 * Real time running `scale` times faster, for a world that must keep real
 * I/O (an HTTP fake, client-node's own timers) and still meet minutes of
 * its time in milliseconds: 300 turns a five-minute watchdog into a second.
 */
export function scaledClock(scale: number): Clock {
  if (!(scale > 0)) throw new Error(`scale must be above 0, got ${scale}`);
  const origin = performance.now();
  const start = Date.now();
  const after: Clock['after'] = (ms, callback) => {
    const timer = setTimeout(callback, ms / scale);
    timer.unref();
    return () => clearTimeout(timer);
  };
  return {
    now: () => start + (performance.now() - origin) * scale,
    after,
    sleep: (ms, signal) => sleepOn(after, ms, signal),
    realMs: (ms) => ms / scale,
  };
}
