import { asyncScheduler, catchError, defer, distinctUntilChanged, exhaustMap, map, of, timeout, type Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';

export interface LeadershipOptions {
  /** One try to take or renew the lease: true when this replica holds it afterwards. */
  readonly attempt: () => Observable<boolean>;
  /** A leader that has not renewed for this long steps down (client-go's default: 10 s). */
  readonly renewDeadlineMs: number;
  readonly onError: (error: string) => void;
  readonly scheduler?: SchedulerLike;
}

/**
 * Leadership from lease attempts, one per tick (the retry period): emits
 * true on taking the lease and false on losing it. A failed renewal alone
 * does not end leadership: the API server may blip while the lease is still
 * ours. Only when no renewal has succeeded for the renew deadline does the
 * leader step down, well before the lease itself (15 s) lets another
 * replica in, so two replicas never deploy at once. An attempt still
 * pending at a tick is not doubled (exhaustMap); one that hangs is
 * abandoned at the deadline.
 */
export function leadership(options: LeadershipOptions): OperatorFunction<unknown, boolean> {
  const { renewDeadlineMs, scheduler = asyncScheduler } = options;
  return (ticks) =>
    defer(() => {
      // Per subscription: a second subscriber is a second candidate, with its own state.
      let leading = false;
      let lastRenewal = 0;
      return ticks.pipe(
        exhaustMap(() =>
          options.attempt().pipe(
            timeout({ first: renewDeadlineMs, scheduler }),
            catchError((error: unknown) => {
              options.onError(errorMessage(error));
              return of(undefined);
            }),
          ),
        ),
        map((held) => {
          if (held === undefined) {
            if (leading && scheduler.now() - lastRenewal >= renewDeadlineMs) leading = false;
          } else {
            leading = held;
            if (held) lastRenewal = scheduler.now();
          }
          return leading;
        }),
        distinctUntilChanged(),
      );
    });
}
