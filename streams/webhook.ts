import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, combineLatest, concatMap, defer, distinctUntilChanged, EMPTY, map, merge, Observable, of, retry, shareReplay, timer, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { certificateFromSecret, provideGeneratedCertificate } from '../lib/webhook/webhook-certificate.ts';
import { syncCaBundle } from '../lib/kube/webhook-configuration.ts';
import type { Logger } from '../lib/telemetry/logger.ts';
import type { Observer } from '../lib/telemetry/observer.ts';
import { AdmissionHandler, type AdmissionState } from '../lib/webhook/admission-handler.ts';
import { generateCertificate, serviceDnsNames, unusableReason, type ServingCertificate } from '../lib/webhook/serving-certificate.ts';
import { WebhookServer } from '../lib/webhook/webhook-server.ts';
import type { WebhookSettings } from '../lib/webhook/settings.ts';
import type { StartInformer } from './informer-events.ts';
import { watchedObjects } from './watched-objects.ts';

/**
 * The validating admission webhook of a replica: an HTTPS server judging
 * AdmissionReviews over the configuration in force and the live stores
 * (lib/webhook/admission-handler.ts), served with a certificate that
 * follows its source (files re-read when they change, a Secret watched,
 * or one generated at start), and, when asked, the caBundle of the
 * ValidatingWebhookConfiguration kept equal to that certificate's CA.
 * Every replica runs one, leader or not, so admission goes on through a
 * change of leader.
 */

export interface WebhookOptions {
  readonly settings: WebhookSettings;
  /** The controller's namespace: where the certificate's Secret is. */
  readonly namespace: string;
  readonly bindAddress: string;
  readonly kubeConfig: KubeConfig;
  readonly start: StartInformer;
  readonly restarting: (resource: string) => (reason: string, delayMs: number) => void;
  /** The configuration in force and the live stores, once the pipeline has both. */
  readonly state: () => AdmissionState | undefined;
  readonly observer: Observer;
  /** How often certificate files are looked at. Default 10 s. */
  readonly filePollMs?: number;
  /** How often a generated certificate in a Secret is looked at for renewal. Default an hour. */
  readonly renewalCheckMs?: number;
  readonly scheduler?: SchedulerLike;
}

export interface Webhook {
  /** The port it serves on, once it has a certificate. */
  readonly listening: Promise<number>;
  stop(): Promise<void>;
}

const sameCertificate = (a: ServingCertificate, b: ServingCertificate) => a.cert === b.cert && a.key === b.key && a.ca === b.ca;

function fileCertificates(
  source: { readonly certFile: string; readonly keyFile: string },
  everyMs: number,
  log: Logger,
  scheduler: SchedulerLike | undefined,
): Observable<ServingCertificate> {
  let failed: string | undefined;
  return timer(0, everyMs, scheduler).pipe(
    concatMap(() =>
      defer(async () => {
        const [cert, key] = await Promise.all([readFile(source.certFile, 'utf8'), readFile(source.keyFile, 'utf8')]);
        const reason = unusableReason({ cert, key });
        if (reason !== undefined) throw new Error(`${source.certFile} and ${source.keyFile} cannot serve: ${reason}`);
        failed = undefined;
        return { cert, key, ca: undefined };
      }).pipe(
        catchError((error: unknown) => {
          // A rotation in progress may show a new certificate with the old key: said once, tried again at the next look.
          const message = errorMessage(error);
          if (message !== failed) log.warn(`webhook certificate files: ${message}`);
          failed = message;
          return EMPTY;
        }),
      ),
    ),
    distinctUntilChanged(sameCertificate),
  );
}

function secretCertificates(options: WebhookOptions, source: { readonly name: string; readonly generate: boolean }, log: Logger): Observable<ServingCertificate> {
  const { namespace, kubeConfig, settings } = options;
  const key = `${namespace}/${source.name}`;
  const secrets = watchedObjects(
    options.start,
    { apiVersion: 'v1', kind: 'Secret', resource: 'secrets', namespace, fieldSelector: `metadata.name=${source.name}` },
    options.restarting('webhook-secret'),
  );
  let said: string | undefined;
  const say = (message: string) => {
    if (message !== said) log.warn(message);
    said = message;
  };
  return combineLatest([secrets, timer(0, options.renewalCheckMs ?? 3_600_000, options.scheduler)]).pipe(
    concatMap(([objects]) => {
      const secret = objects.get(key);
      const provide = source.generate
        ? defer(() => provideGeneratedCertificate(kubeConfig, { namespace, name: source.name }, secret, serviceDnsNames(settings.service.namespace, settings.service.name))).pipe(
            map((written) => {
              if (written !== 'none') log.info(`webhook certificate ${written === 'created' ? 'generated into' : 'renewed in'} Secret ${key}`);
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
}

/** Starts the webhook; it listens once its certificate is there. */
export function startWebhook(options: WebhookOptions): Webhook {
  const { settings, observer } = options;
  const log = observer.logger.child({ stage: 'webhook' });
  const source = settings.certificate;
  const certificates = (
    source.kind === 'files'
      ? fileCertificates(source, options.filePollMs ?? 10_000, log, options.scheduler)
      : source.kind === 'secret'
        ? secretCertificates(options, source, log)
        : defer(() => of<ServingCertificate>(generateCertificate({ dnsNames: serviceDnsNames(settings.service.namespace, settings.service.name) })))
  ).pipe(shareReplay({ bufferSize: 1, refCount: true }));

  const handler = new AdmissionHandler({ state: options.state });
  let server: WebhookServer | undefined;
  let stopped = false;
  let listen: (port: number) => void = () => undefined;
  const listening = new Promise<number>((resolve) => (listen = resolve));

  const serving = certificates.pipe(
    concatMap((certificate) =>
      defer(async () => {
        if (stopped) return;
        if (server) {
          server.setCertificate(certificate);
          log.info('webhook certificate replaced: new connections get the new one');
          return;
        }
        server = await WebhookServer.start({
          host: options.bindAddress,
          port: settings.port,
          certificate,
          notReady: () => (options.state() === undefined ? 'the controller has not read its configuration and resources yet' : undefined),
          review: async (body, deadline, headers) => {
            const start = Date.now();
            const reply = await handler.review(body, deadline);
            observer.admissionReviewed(reply.record, { start, end: Date.now() }, headers);
            return reply;
          },
        });
        log.info(`webhook serving AdmissionReviews on https://${options.bindAddress}:${server.port}/validate`);
        listen(server.port);
      }).pipe(
        catchError((error: unknown) => {
          log.error(`webhook not serving: ${errorMessage(error)}`);
          return EMPTY;
        }),
      ),
    ),
  );

  const configuration = settings.configuration;
  const caBundles =
    configuration === undefined
      ? EMPTY
      : combineLatest([
          certificates.pipe(
            map((certificate) => certificate.ca),
            distinctUntilChanged(),
          ),
          watchedObjects(
            options.start,
            {
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'ValidatingWebhookConfiguration',
              resource: 'validatingwebhookconfigurations',
              fieldSelector: `metadata.name=${configuration}`,
            },
            options.restarting('validatingwebhookconfigurations'),
          ),
        ]).pipe(
          concatMap(([ca, found]) => {
            if (ca === undefined || found.size === 0) return EMPTY;
            return defer(() => syncCaBundle(options.kubeConfig, configuration, ca)).pipe(
              retry({ count: 5, delay: (_error, attempt) => timer(Math.min(30_000, 1000 * 2 ** attempt), options.scheduler) }),
              map((synced) => {
                if (synced === 'patched') log.info(`caBundle of ValidatingWebhookConfiguration ${configuration} set to the webhook certificate's CA`);
              }),
              catchError((error: unknown) => {
                log.warn(`caBundle of ValidatingWebhookConfiguration ${configuration} not set: ${errorMessage(error)}`);
                return EMPTY;
              }),
            );
          }),
        );

  const subscription = merge(serving, caBundles).subscribe();
  return {
    listening,
    async stop() {
      stopped = true;
      subscription.unsubscribe();
      await server?.close();
    },
  };
}
