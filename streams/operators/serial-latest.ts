import { from, Observable, Subject, type ObservableInput, type OperatorFunction } from 'rxjs';
import { contained, forwardingTo } from './contained.ts';

/**
 * Runs `work` for one value at a time; values arriving meanwhile replace each
 * other in a single pending slot, so when the running work finishes only the
 * newest waiting value runs next. Unlike switchMap it never cancels running
 * work (an `haproxy -c` or a deployment half done), unlike concatMap it never
 * runs stale values. `superseded` emits while a newer value waits, so work
 * that only waits (a retry backoff) can give way early. `fold`, when given,
 * merges a value replaced in the pending slot into its replacement, so what
 * the dropped value stood for (the changes it carried) is not lost. What
 * `work` or `fold` throws is an error of the output.
 */
export function serialLatest<T, R>(work: (value: T, superseded: Observable<void>) => ObservableInput<R>, fold?: (dropped: T, next: T) => T): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let pending: { value: T } | undefined;
      let running = false;
      let sourceDone = false;
      let superseded = new Subject<void>();

      // A loop, not recursion: work that completes synchronously would
      // otherwise grow the stack with every queued value.
      const drain = contained(subscriber, () => {
        while (pending && !running && !subscriber.closed) {
          const { value } = pending;
          pending = undefined;
          running = true;
          superseded = new Subject<void>();
          let finishedSynchronously = false;
          let sync = true;
          const inner = from(work(value, superseded.asObservable())).subscribe(
            forwardingTo(
              subscriber,
              (result) => subscriber.next(result),
              () => {
                running = false;
                if (sync) finishedSynchronously = true;
                else drain();
                if (!running && !pending && sourceDone) subscriber.complete();
              },
            ),
          );
          sync = false;
          subscriber.add(inner);
          if (!finishedSynchronously) return;
        }
      });

      const upstream = source.subscribe(
        forwardingTo(
          subscriber,
          (value) => {
            pending = { value: pending && fold ? fold(pending.value, value) : value };
            if (running) superseded.next();
            else drain();
          },
          () => {
            sourceDone = true;
            if (!running && !pending) subscriber.complete();
          },
        ),
      );
      subscriber.add(upstream);
    });
}
