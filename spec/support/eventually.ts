import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `probe` until `accept` holds, for things no event announces (traffic
 * moving, a process gone); fails after `timeoutMs` with the last value seen.
 */
export async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let failure: unknown;
  for (;;) {
    try {
      last = await probe();
      failure = undefined;
      if (accept(last)) return last;
    } catch (error) {
      failure = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(last)} ${String(failure ?? '')}`);
    }
    await delay(20);
  }
}
