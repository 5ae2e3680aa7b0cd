import type { RetrySettings } from './config/pipeline-settings.ts';

/**
 * How long to wait before retry number `attempt` (1 is the first retry):
 * `baseDelayMs * 2^(attempt - 1)` capped at `maxDelayMs`, with equal jitter.
 * Half of that delay is fixed, so a retry never fires at once against an
 * endpoint that just failed; the other half is random, so endpoints that
 * failed together do not retry in lockstep. `random` returns [0, 1) like
 * Math.random, which keeps the result within [delay / 2, delay).
 */
export function backoffDelay(attempt: number, settings: Pick<RetrySettings, 'baseDelayMs' | 'maxDelayMs'>, random: () => number): number {
  const delay = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return delay / 2 + (random() * delay) / 2;
}

/**
 * The retries of a write a side stream makes to the API server (a status,
 * a CA bundle): five, after 2, 4, 8, 16 and 30 s, without jitter (one
 * writer, not a fleet retrying together).
 */
export const WRITE_RETRIES = Object.freeze({ count: 5, delayMs: (attempt: number): number => Math.min(30_000, 1000 * 2 ** attempt) });
