/**
 * Runs callbacks at given performance.now() times to within about a tenth
 * of a millisecond, on one event loop shared by many stand-in instances.
 *
 * A timer alone fires up to a millisecond or two late (libuv keeps whole
 * milliseconds), which on requests that take one or two milliseconds would
 * double their latency. Blocking the thread until the due time would hold
 * up the requests of the other instances meanwhile. So a timer wakes the
 * loop shortly before the earliest due time, and from there it alternates
 * between very short blocking sleeps and turns of the event loop, which
 * read whatever requests arrived meanwhile.
 */

/** How long before a due time the timer hands over to the short sleeps. */
const TIMER_MARGIN_MS = 2;
/** The longest the thread is blocked at once. */
const SLEEP_SLICE_MS = 0.1;

export class AnswerClock {
  readonly #pending: { readonly due: number; readonly run: () => void }[] = [];
  readonly #sleeper = new Int32Array(new SharedArrayBuffer(4));
  #timer: NodeJS.Timeout | undefined;
  #turnPending = false;

  /** Runs `run` at `due` (performance.now() time), at once when that has passed. */
  at(due: number, run: () => void): void {
    this.#pending.push({ due, run });
    this.#pending.sort((a, b) => a.due - b.due);
    // A timer set for a later due time would make this one late.
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#turnPending) this.#schedule();
  }

  #schedule(): void {
    const next = this.#pending[0];
    if (next === undefined) return;
    const remaining = next.due - performance.now();
    if (remaining > TIMER_MARGIN_MS) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#tick();
      }, remaining - TIMER_MARGIN_MS);
      return;
    }
    if (remaining > 0) Atomics.wait(this.#sleeper, 0, 0, Math.min(SLEEP_SLICE_MS, remaining));
    this.#turnPending = true;
    setImmediate(() => {
      this.#turnPending = false;
      this.#tick();
    });
  }

  #tick(): void {
    const now = performance.now();
    while (this.#pending.length > 0 && this.#pending[0]!.due <= now) this.#pending.shift()!.run();
    this.#schedule();
  }
}
