import { asyncScheduler, catchError, concatMap, defer, distinctUntilChanged, EMPTY, map, timer, type Observable, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { unusableReason, type ServingCertificate } from '../lib/webhook/serving-certificate.ts';

export interface FileCertificatesOptions {
  /** For messages: the two files. */
  readonly certFile: string;
  readonly keyFile: string;
  /** Reads both files. */
  readonly read: () => Observable<{ readonly cert: string; readonly key: string }>;
  /** How often the files are looked at. */
  readonly everyMs: number;
  readonly warn: (message: string) => void;
  readonly scheduler?: SchedulerLike;
}

export const sameCertificate = (a: ServingCertificate, b: ServingCertificate): boolean => a.cert === b.cert && a.key === b.key && a.ca === b.ca;

/**
 * The webhook's certificate from files, looked at every `everyMs` (a
 * Secret mounted as files changes under the webhook without a watch event
 * it could rely on): a new certificate on each change, nothing while they
 * are as before. A look that fails, or finds a certificate and key that do
 * not go together, keeps the certificate in force and is said once until
 * it reads otherwise: a rotation in progress may show a new certificate
 * with the old key for a moment.
 */
export function fileCertificates(options: FileCertificatesOptions): Observable<ServingCertificate> {
  return defer(() => {
    let failed: string | undefined;
    return timer(0, options.everyMs, options.scheduler ?? asyncScheduler).pipe(
      concatMap(() =>
        defer(options.read).pipe(
          map(({ cert, key }): ServingCertificate => {
            const reason = unusableReason({ cert, key });
            if (reason !== undefined) throw new Error(`${options.certFile} and ${options.keyFile} cannot serve: ${reason}`);
            failed = undefined;
            return { cert, key, ca: undefined };
          }),
          catchError((error: unknown) => {
            const message = errorMessage(error);
            if (message !== failed) options.warn(`webhook certificate files: ${message}`);
            failed = message;
            return EMPTY;
          }),
        ),
      ),
      distinctUntilChanged(sameCertificate),
    );
  });
}
