import type { Observer } from 'rxjs';

/** What a callback's exception is sent to: the subscriber of the Observable it runs for. */
interface ErrorSink {
  error(error: unknown): void;
}

/**
 * `callback` with whatever it throws sent to `sink.error`. rxjs catches what
 * its own operators' callbacks throw, but not what a plain observer passed
 * to `subscribe`, a scheduled action or a handler some library calls
 * throws: rxjs 7 reports that as unhandled, on a timer, where no catchError
 * sees it and the process's uncaughtException handler gets it, while the
 * stream goes on as if nothing happened. Every callback of a hand-written
 * Observable (`new Observable`) goes through here.
 */
export function contained<A extends unknown[]>(sink: ErrorSink, callback: (...args: A) => void): (...args: A) => void {
  return (...args) => {
    try {
      callback(...args);
    } catch (error) {
      sink.error(error);
    }
  };
}

/**
 * An observer of a source for a hand-written operator: `next` and
 * `complete` contained (see above), errors passed on to `sink`, and
 * completion passed on too unless `complete` says otherwise.
 */
export function forwardingTo<T>(sink: ErrorSink & { complete(): void }, next: (value: T) => void, complete: () => void = () => sink.complete()): Observer<T> {
  return {
    next: contained(sink, next),
    error: (error: unknown) => sink.error(error),
    complete: contained(sink, complete),
  };
}
