import { setTimeout as delay } from 'node:timers/promises';

/**
 * Input at a user's pace: runs `action` `count` times, the i-th due i ×
 * `intervalMs` after the first and each after the one before finished
 * (one late for its slot runs at once). It makes a scenario, such as a
 * hundred edits in ten seconds; it never waits for the controller to do
 * anything, which specs await as events.
 */
export async function atRate(count: number, intervalMs: number, action: (index: number) => Promise<unknown>): Promise<void> {
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    await action(index);
    const next = started + (index + 1) * intervalMs - performance.now();
    if (index + 1 < count && next > 0) await delay(next);
  }
}

/**
 * What is left of `ms` from now, for several awaited events that must all
 * happen within it ("noticed, started again and serving, all within 2 s"):
 * each one's timeout is `left()` when it starts waiting.
 */
export function within(ms: number): () => number {
  const end = performance.now() + ms;
  return () => Math.max(0, end - performance.now());
}
