import { asyncScheduler, catchError, combineLatest, concatMap, defer, distinctUntilChanged, EMPTY, map, of, timer, type Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { certificateFromSecret, type CertificateWrite } from '../lib/webhook/webhook-certificate.ts';
import type { ServingCertificate } from '../lib/webhook/serving-certificate.ts';
import { sameCertificate } from './webhook-file-certificates.ts';

export interface SecretCertificatesOptions {
  /** namespace/name of the Secret, as the watched map holds it. */
  readonly key: string;
  /**
   * Generates the certificate into the Secret when there is none, or renews
   * one this controller generated when due (provideGeneratedCertificate);
   * absent when the Secret is someone else's to write.
   */
  readonly generate?: (secret: KubeObject | undefined) => Observable<CertificateWrite>;
  /** How often a generated certificate is looked at for renewal, whatever the watch says. */
  readonly renewalCheckMs: number;
  readonly log: { readonly info: (message: string) => void; readonly warn: (message: string) => void };
  readonly scheduler?: SchedulerLike;
}

/**
 * The webhook's certificate from a watched Secret: each state of the
 * Secret, and every `renewalCheckMs`, gives the certificate it holds (once
 * per change). When it may generate, a missing Secret is created and a
 * generated certificate renewed when due; what it wrote comes back through
 * the watch. A write that fails (the API server away; a conflict lost to
 * another replica is no failure) is said and tried again at the next
 * renewal check or change of the Secret, while the certificate in force
 * keeps serving. A Secret that is missing or cannot serve is said once
 * until that changes.
 */
export function secretCertificates(options: SecretCertificatesOptions): OperatorFunction<ReadonlyMap<string, KubeObject>, ServingCertificate> {
  return (secrets) =>
    defer(() => {
      let said: string | undefined;
      const say = (message: string) => {
        if (message !== said) options.log.warn(message);
        said = message;
      };
      const { key, generate } = options;
      return combineLatest([secrets, timer(0, options.renewalCheckMs, options.scheduler ?? asyncScheduler)]).pipe(
        concatMap(([objects]) => {
          const secret = objects.get(key);
          const provide = generate
            ? defer(() => generate(secret)).pipe(
                map((written) => {
                  if (written !== 'none') options.log.info(`webhook certificate ${written === 'created' ? 'generated into' : 'renewed in'} Secret ${key}`);
                  return written;
                }),
                catchError((error: unknown) => {
                  say(`webhook certificate not written to Secret ${key}: ${errorMessage(error)}`);
                  return of('none' as const);
                }),
              )
            : of('none' as const);
          return provide.pipe(
            concatMap((written) => {
              // What was just written comes back through the watch.
              if (written !== 'none') return EMPTY;
              if (secret === undefined) {
                say(`webhook waits for Secret ${key} with its certificate`);
                return EMPTY;
              }
              const held = certificateFromSecret(secret);
              if ('problem' in held) {
                say(`webhook certificate: Secret ${key} ${held.problem}`);
                return EMPTY;
              }
              said = undefined;
              return of(held);
            }),
          );
        }),
        distinctUntilChanged(sameCertificate),
      );
    });
}
