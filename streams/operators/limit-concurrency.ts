import { Observable } from 'rxjs';

/**
 * A shared cap on how many wrapped Observables run at once, across
 * independent streams (mergeMap's concurrency only caps one stream's inners,
 * and long-lived per-endpoint streams would hold its slots forever). Wrapped
 * work waits, unsubscribed, until a slot frees; leaving the queue or
 * finishing in any way frees the slot.
 */
export function concurrencyLimiter(max: number): <T>(work: Observable<T>) => Observable<T> {
  let running = 0;
  const queue: Array<() => void> = [];

  const release = () => {
    running--;
    const next = queue.shift();
    if (next) next();
  };

  return <T>(work: Observable<T>) =>
    new Observable<T>((subscriber) => {
      let holding = false;
      const free = () => {
        if (!holding) return;
        holding = false;
        release();
      };
      const start = () => {
        running++;
        holding = true;
        subscriber.add(
          work.subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => {
              free();
              subscriber.error(error);
            },
            complete: () => {
              free();
              subscriber.complete();
            },
          }),
        );
      };
      if (running < max) start();
      else queue.push(start);
      return () => {
        const queued = queue.indexOf(start);
        if (queued >= 0) queue.splice(queued, 1);
        free();
      };
    });
}
