import { readFile } from 'node:fs/promises';
import type { KubeConnection } from '../lib/kube/kube-connection.ts';
import { catchError, combineLatest, concatMap, defer, distinctUntilChanged, EMPTY, map, merge, Observable, of, shareReplay, type SchedulerLike } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { provideGeneratedCertificate } from '../lib/webhook/webhook-certificate.ts';
import { syncCaBundle } from '../lib/kube/webhook-configuration.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import type { Logger } from '../lib/telemetry/logger.ts';
import type { Observer } from '../lib/telemetry/observer.ts';
import { AdmissionHandler, type AdmissionState } from '../lib/webhook/admission-handler.ts';
import { generateCertificate, serviceDnsNames, type ServingCertificate } from '../lib/webhook/serving-certificate.ts';
import { WebhookServer } from '../lib/webhook/webhook-server.ts';
import type { WebhookSettings } from '../lib/webhook/settings.ts';
import type { StartInformer } from './informer-events.ts';
import { watchedObjects } from './watched-objects.ts';
import { caBundles } from './webhook-ca-bundle.ts';
import { fileCertificates } from './webhook-file-certificates.ts';
import { secretCertificates } from './webhook-secret-certificates.ts';

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
  readonly kubeConnection: KubeConnection;
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

function secretSource(options: WebhookOptions, source: { readonly name: string; readonly generate: boolean }, log: Logger): Observable<ServingCertificate> {
  const { namespace, kubeConnection, settings } = options;
  const dnsNames = serviceDnsNames(settings.service.namespace, settings.service.name);
  return watchedObjects(
    options.start,
    { apiVersion: 'v1', kind: 'Secret', resource: 'secrets', namespace, fieldSelector: `metadata.name=${source.name}` },
    options.restarting('webhook-secret'),
  ).pipe(
    secretCertificates({
      key: `${namespace}/${source.name}`,
      ...(source.generate
        ? { generate: (secret: KubeObject | undefined) => defer(() => provideGeneratedCertificate(kubeConnection, { namespace, name: source.name }, secret, dnsNames)) }
        : {}),
      renewalCheckMs: options.renewalCheckMs ?? 3_600_000,
      log,
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    }),
  );
}

/** Starts the webhook; it listens once its certificate is there. */
export function startWebhook(options: WebhookOptions): Webhook {
  const { settings, observer } = options;
  const log = observer.logger.child({ stage: 'webhook' });
  const source = settings.certificate;
  const certificates = (
    source.kind === 'files'
      ? fileCertificates({
          ...source,
          read: () => defer(async () => ({ cert: await readFile(source.certFile, 'utf8'), key: await readFile(source.keyFile, 'utf8') })),
          everyMs: options.filePollMs ?? 10_000,
          warn: (message) => log.warn(message),
          ...(options.scheduler ? { scheduler: options.scheduler } : {}),
        })
      : source.kind === 'secret'
        ? secretSource(options, source, log)
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
  const bundles =
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
          caBundles({
            configuration,
            sync: (ca) => defer(() => syncCaBundle(options.kubeConnection, configuration, ca)),
            log,
            ...(options.scheduler ? { scheduler: options.scheduler } : {}),
          }),
        );

  const subscription = merge(serving, bundles).subscribe();
  return {
    listening,
    async stop() {
      stopped = true;
      subscription.unsubscribe();
      await server?.close();
    },
  };
}
