import { asyncScheduler, catchError, concatMap, defer, EMPTY, ignoreElements, retry, tap, timer, type Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import type { CaBundleSync } from '../lib/kube/webhook-configuration.ts';
import { WRITE_RETRIES } from '../lib/backoff.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';

export interface CaBundleOptions {
  /** The ValidatingWebhookConfiguration's name. */
  readonly configuration: string;
  /** Sets its caBundle to this CA (syncCaBundle). */
  readonly sync: (ca: string) => Observable<CaBundleSync>;
  readonly log: { readonly info: (message: string) => void; readonly warn: (message: string) => void };
  readonly scheduler?: SchedulerLike;
}

/**
 * Keeps the caBundle of the ValidatingWebhookConfiguration equal to the
 * webhook certificate's CA: set for each new CA, and again each time the
 * configuration changes (someone reset it), one write at a time, in order.
 * A write that fails is tried again with backoff; one that keeps failing is
 * said, and the next change of either tries again.
 */
export function caBundles(options: CaBundleOptions): OperatorFunction<readonly [string | undefined, ReadonlyMap<string, KubeObject>], never> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return concatMap(([ca, found]) => {
    if (ca === undefined || found.size === 0) return EMPTY;
    return defer(() => options.sync(ca)).pipe(
      retry({ count: WRITE_RETRIES.count, delay: (_error, attempt) => timer(WRITE_RETRIES.delayMs(attempt), scheduler) }),
      tap((synced) => {
        if (synced === 'patched') options.log.info(`caBundle of ValidatingWebhookConfiguration ${options.configuration} set to the webhook certificate's CA`);
      }),
      catchError((error: unknown) => {
        options.log.warn(`caBundle of ValidatingWebhookConfiguration ${options.configuration} not set: ${errorMessage(error)}`);
        return EMPTY;
      }),
      ignoreElements(),
    );
  });
}
