/** What to do with one occurrence of an event. */
export type EventDecision =
  | { readonly action: 'create' }
  /** The same event again: bump the series of the event already written. */
  | { readonly action: 'update'; readonly name: string; readonly count: number }
  /**
   * Counted, not written now: too soon after the last write of this series,
   * or the object's budget is spent. `flushInMs`, when set: a series now
   * holds occurrences no write carried, to be written then (see `flush`).
   */
  | { readonly action: 'skip'; readonly reason: 'throttled' | 'rate-limited'; readonly flushInMs?: number };

/** What to do, when a series' throttle window ends, with the occurrences counted in it. */
export type FlushDecision =
  /** Nothing unwritten (a later write carried it, or the series is gone). */
  | { readonly action: 'none' }
  | { readonly action: 'update'; readonly name: string; readonly count: number; readonly lastObservedAt: number }
  /** Not yet: the window moved on with a later write, or the budget is spent. */
  | { readonly action: 'later'; readonly inMs: number };

export interface EventSeriesOptions {
  /** Writes per object allowed at once, and how fast that budget comes back (one write per `refillMs`). */
  readonly burst: number;
  readonly refillMs: number;
  /** A repeat this soon after the series' last write only counts: the next write carries the count, at the latest one when this window ends. */
  readonly updateIntervalMs: number;
  /** A series quiet for this long is forgotten: the next occurrence starts a new event. */
  readonly seriesWindowMs: number;
}

export const defaultEventSeriesOptions: EventSeriesOptions = {
  burst: 10,
  refillMs: 60_000,
  updateIntervalMs: 30_000,
  seriesWindowMs: 30 * 60_000,
};

interface Series {
  name: string | undefined;
  count: number;
  /** The count the last write carried. */
  written: number;
  lastWrite: number;
  lastSeen: number;
}

/** One series: one event of one object. */
export const seriesKey = (objectKey: string, eventKey: string): string => `${objectKey}\u0000${eventKey}`;

interface Budget {
  tokens: number;
  at: number;
}

/**
 * Deduplicates events into series and rate-limits them per object, so an
 * object that flaps (excluded, fixed, excluded...) or a deploy that keeps
 * failing costs the API server a handful of writes, not one per render.
 * Repeats counted and not written are written when the throttle window
 * ends (`flush`), so the API's count is never behind for long, even when
 * no later occurrence comes to carry it.
 */
export class EventSeries {
  readonly #options: EventSeriesOptions;
  readonly #series = new Map<string, Series>();
  readonly #budgets = new Map<string, Budget>();
  #skipped = 0;
  #lastSweep = 0;

  constructor(options: EventSeriesOptions = defaultEventSeriesOptions) {
    this.#options = options;
  }

  /** Occurrences not written (throttled or rate-limited) so far. */
  get skipped(): number {
    return this.#skipped;
  }

  decide(objectKey: string, eventKey: string, now: number): EventDecision {
    this.#forget(now);
    const key = seriesKey(objectKey, eventKey);
    const series = this.#series.get(key);
    if (series !== undefined && series.name !== undefined) {
      series.count += 1;
      series.lastSeen = now;
      const windowLeft = series.lastWrite + this.#options.updateIntervalMs - now;
      if (windowLeft > 0) return this.#skip('throttled', windowLeft);
      if (!this.#spend(objectKey, now)) return this.#skip('rate-limited', this.#refillIn(objectKey));
      series.lastWrite = now;
      series.written = series.count;
      return { action: 'update', name: series.name, count: series.count };
    }
    if (!this.#spend(objectKey, now)) return this.#skip('rate-limited');
    this.#series.set(key, { name: undefined, count: 1, written: 1, lastWrite: now, lastSeen: now });
    return { action: 'create' };
  }

  /** The series' occurrences no write carried yet, to write once its throttle window ended and the budget allows. */
  flush(objectKey: string, eventKey: string, now: number): FlushDecision {
    const series = this.#series.get(seriesKey(objectKey, eventKey));
    if (series === undefined || series.name === undefined || series.count <= series.written) return { action: 'none' };
    const windowLeft = series.lastWrite + this.#options.updateIntervalMs - now;
    if (windowLeft > 0) return { action: 'later', inMs: windowLeft };
    if (!this.#spend(objectKey, now)) return { action: 'later', inMs: this.#refillIn(objectKey) };
    series.lastWrite = now;
    series.written = series.count;
    return { action: 'update', name: series.name, count: series.count, lastObservedAt: series.lastSeen };
  }

  /** Names the event a 'create' decision wrote, so repeats update it; a failed create is forgotten instead. */
  created(objectKey: string, eventKey: string, name: string | undefined): void {
    const key = seriesKey(objectKey, eventKey);
    const series = this.#series.get(key);
    if (series === undefined) return;
    if (name === undefined) this.#series.delete(key);
    else series.name = name;
  }

  #skip(reason: 'throttled' | 'rate-limited', flushInMs?: number): EventDecision {
    this.#skipped += 1;
    return flushInMs === undefined ? { action: 'skip', reason } : { action: 'skip', reason, flushInMs };
  }

  /** How long until the object's budget holds a write again. */
  #refillIn(objectKey: string): number {
    const tokens = this.#budgets.get(objectKey)?.tokens ?? 0;
    return Math.max(1, Math.ceil((1 - tokens) * this.#options.refillMs));
  }

  #spend(objectKey: string, now: number): boolean {
    const { burst, refillMs } = this.#options;
    const budget = this.#budgets.get(objectKey) ?? { tokens: burst, at: now };
    budget.tokens = Math.min(burst, budget.tokens + (now - budget.at) / refillMs);
    budget.at = now;
    this.#budgets.set(objectKey, budget);
    if (budget.tokens < 1) return false;
    budget.tokens -= 1;
    return true;
  }

  /** At most once a minute: sweeping on every occurrence would cost O(series) per event. */
  #forget(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [key, series] of this.#series) {
      if (now - series.lastSeen > this.#options.seriesWindowMs) this.#series.delete(key);
    }
    for (const [key, budget] of this.#budgets) {
      if (now - budget.at > this.#options.refillMs * this.#options.burst) this.#budgets.delete(key);
    }
  }
}
