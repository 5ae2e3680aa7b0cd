/**
 * Awaits a condition on something that says when it changed (a log of
 * outcomes, requests, lines, handler calls), with a timeout: the condition
 * is checked now and after every `changed()`, never on a timer.
 */
export class Notifier {
  readonly #listeners = new Set<() => void>();

  /** Something changed: every waiting condition is checked again. */
  changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  /** Resolves with what `evaluate` finds first (anything but undefined); rejects with `failure()` after `timeoutMs`. */
  until<T>(evaluate: () => T | undefined, failure: () => string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = evaluate();
        if (found === undefined) return;
        this.#listeners.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        reject(new Error(`${failure()} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#listeners.add(check);
      check();
    });
  }
}
