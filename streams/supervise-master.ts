import { asyncScheduler, catchError, defer, EMPTY, exhaustMap, fromEventPattern, ignoreElements, interval, merge, type Observable, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { MasterSupervisor, type SupervisedMaster } from '../lib/haproxy/master-supervisor.ts';
import type { Observer } from '../lib/telemetry/observer.ts';

export interface SuperviseMasterOptions {
  /** One look at the master (MasterSupervisor.check): restarts HAProxy when it died. */
  readonly check: () => Observable<void>;
  readonly intervalMs: number;
  /** A look at once on each value (the master exited), beside the looks every interval. */
  readonly wake?: Observable<unknown>;
  /** Told of a look that failed, which never stops the supervision. */
  readonly onError: (error: unknown) => void;
  readonly scheduler?: SchedulerLike;
}

/**
 * Looks at the HAProxy master every `intervalMs` and whenever `wake` says,
 * one look at a time: a look that restarts HAProxy can take longer than the
 * interval, and the looks due meanwhile are skipped rather than queued, so a
 * slow start is never followed by a burst of looks.
 */
export function superviseMaster(options: SuperviseMasterOptions): Observable<never> {
  return merge(interval(options.intervalMs, options.scheduler ?? asyncScheduler), options.wake ?? EMPTY).pipe(
    exhaustMap(() =>
      defer(options.check).pipe(
        catchError((error: unknown) => {
          options.onError(error);
          return EMPTY;
        }),
      ),
    ),
    ignoreElements(),
  );
}

/** The readiness condition that holds while the HAProxy on this machine runs. */
export const HAPROXY_RUNNING = 'HAProxy running';

/**
 * Watches the HAProxy on this machine: when its master dies, it is started
 * again within a second, logged and counted, and readiness fails until it
 * runs again. A master the controller started is its child, whose exit is
 * looked at at once; one it attached to is seen dead by the look every
 * 250 ms. Runs while subscribed.
 */
export function superviseLocalHaproxy(
  master: SupervisedMaster,
  observer: Observer,
  running: boolean,
  timing: { readonly intervalMs: number; readonly retryMs?: { readonly first: number; readonly last: number } } = { intervalMs: 250 },
): Observable<never> {
  return defer(() => {
    const log = observer.logger.child({ stage: 'haproxy' });
    observer.setReadiness(HAPROXY_RUNNING, running);
    const supervisor = new MasterSupervisor(master, {
      ...(timing.retryMs ? { retryMs: timing.retryMs } : {}),
      report: (event) => {
        switch (event.type) {
          case 'exited':
            observer.setReadiness(HAPROXY_RUNNING, false);
            log.warn(`HAProxy master ${event.pid} exited; starting it again`);
            return;
          case 'restarted':
          case 'running':
            observer.setReadiness(HAPROXY_RUNNING, true);
            observer.metrics.haproxyRestarted();
            log.info(event.type === 'restarted' ? `started HAProxy again: master ${event.pid} in ${event.durationMs} ms` : `HAProxy runs again: master ${event.pid}`);
            return;
          case 'restartFailed':
            log.error(`starting HAProxy again failed: ${event.error}; trying again in ${event.retryInMs / 1000} s`);
            return;
        }
      },
    });
    return superviseMaster({
      check: () => defer(() => supervisor.check()),
      intervalMs: timing.intervalMs,
      ...(master.onExit
        ? {
            wake: fromEventPattern<void>(
              (listener) => master.onExit!(listener),
              (_listener, unsubscribe: () => void) => unsubscribe(),
            ),
          }
        : {}),
      onError: (error) => log.error(`watching HAProxy failed: ${errorMessage(error)}`),
    });
  });
}
