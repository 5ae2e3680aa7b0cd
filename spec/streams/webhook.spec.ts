import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { kubeConnectionFromFile } from '../../lib/kube/kube-connection.ts';
import { defaultInformerOptions, ResilientInformer } from '../../lib/kube/informer.ts';
import { generatedAnnotation } from '../../lib/webhook/webhook-certificate.ts';
import { startObserver, type Observer } from '../../lib/telemetry/observer.ts';
import { generateCertificate, type GeneratedCertificate } from '../../lib/webhook/serving-certificate.ts';
import type { WebhookSettings } from '../../lib/webhook/settings.ts';
import { startWebhook, type Webhook } from '../../streams/webhook.ts';
import { eventually } from '../support/eventually.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';

/**
 * The webhook's certificate follows its source while it serves: files
 * rewritten in place, a Secret replaced (by cert-manager, a user, another
 * replica's renewal), a generated certificate renewed when due under the
 * same CA; and the caBundle is set again when someone resets it.
 */

const NAMESPACE = 'edge';
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The fingerprint of the certificate a new connection to the webhook is served, verified with `ca`. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', ca, servername: 'hook.edge.svc', agent: false }, (response) => {
      resolve((response.socket as TLSSocket).getPeerX509Certificate()!.fingerprint256);
      response.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

const fingerprint = (certificate: GeneratedCertificate) => new X509Certificate(certificate.cert).fingerprint256;

describe('webhook certificates', function () {
  this.timeout(30_000);
  let fake: FakeApiServer;
  let observer: Observer;
  let webhook: Webhook | undefined;
  const logged: string[] = [];

  beforeEach(async () => {
    fake = await startFakeApiServer();
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    logged.length = 0;
    observer = await startObserver({
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      log: { level: 'info', format: 'json', write: (line) => void logged.push((JSON.parse(line) as { msg: string }).msg) },
      config: () => undefined,
      endpoints: () => [],
    });
  });

  afterEach(async () => {
    await webhook?.stop();
    webhook = undefined;
    await observer.stop();
    await fake.close();
  });

  function start(certificate: WebhookSettings['certificate'], configuration?: string, renewalCheckMs?: number): Webhook {
    const kubeConnection = kubeConnectionFromFile(fake.kubeconfigPath);
    webhook = startWebhook({
      settings: { port: 0, certificate, service: { namespace: NAMESPACE, name: 'hook' }, configuration },
      namespace: NAMESPACE,
      bindAddress: '127.0.0.1',
      kubeConnection,
      start: (spec, handlers) => {
        const informer = new ResilientInformer(kubeConnection, spec, handlers, defaultInformerOptions);
        informer.start();
        return informer;
      },
      restarting: () => () => undefined,
      state: () => undefined,
      observer,
      filePollMs: 50,
      ...(renewalCheckMs === undefined ? {} : { renewalCheckMs }),
    });
    return webhook;
  }

  it('re-reads certificate files when they change, and serves the new certificate to new connections', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'webhook-files-'));
    try {
      const first = generateCertificate({ dnsNames: ['hook.edge.svc'] });
      await writeFile(join(directory, 'tls.crt'), first.cert);
      await writeFile(join(directory, 'tls.key'), first.key);
      const port = await start({ kind: 'files', certFile: join(directory, 'tls.crt'), keyFile: join(directory, 'tls.key') }).listening;
      expect(await servedFingerprint(port, first.ca)).to.equal(fingerprint(first));
      const second = generateCertificate({ dnsNames: ['hook.edge.svc'], ca: { cert: first.ca, key: first.caKey } });
      await writeFile(join(directory, 'tls.crt'), second.cert);
      await writeFile(join(directory, 'tls.key'), second.key);
      await eventually(
        () => servedFingerprint(port, first.ca),
        (served) => served === fingerprint(second),
        'the new certificate',
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('serves the certificate of a Secret it does not own, follows it when it changes, and never writes it', async () => {
    const first = generateCertificate({ dnsNames: ['hook.edge.svc'] });
    const secret = (certificate: GeneratedCertificate) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { namespace: NAMESPACE, name: 'hook-tls' },
      data: { 'tls.crt': b64(certificate.cert), 'tls.key': b64(certificate.key), 'ca.crt': b64(certificate.ca) },
    });
    fake.create(secret(first));
    const port = await start({ kind: 'secret', name: 'hook-tls', generate: false }).listening;
    expect(await servedFingerprint(port, first.ca)).to.equal(fingerprint(first));
    const second = generateCertificate({ dnsNames: ['hook.edge.svc'], ca: { cert: first.ca, key: first.caKey } });
    fake.upsert(secret(second));
    await eventually(
      () => servedFingerprint(port, first.ca),
      (served) => served === fingerprint(second),
      'the new certificate',
    );
    expect(fake.requests.matching({ verb: 'update' })).to.deep.equal([]);
  });

  it('waits for a Secret that does not exist yet when it may not generate one', async () => {
    const listening = start({ kind: 'secret', name: 'later-tls', generate: false }).listening;
    await eventually(
      async () => logged,
      (lines) => lines.includes(`webhook waits for Secret ${NAMESPACE}/later-tls with its certificate`),
      'the wait to be said',
    );
    const certificate = generateCertificate({ dnsNames: ['hook.edge.svc'] });
    fake.create({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: NAMESPACE, name: 'later-tls' }, data: { 'tls.crt': b64(certificate.cert), 'tls.key': b64(certificate.key) } });
    expect(await servedFingerprint(await listening, certificate.ca)).to.equal(fingerprint(certificate));
  });

  it('renews a certificate it generated when a third of its life is left, under the same CA', async () => {
    const old = generateCertificate({ dnsNames: ['hook.edge.svc'], now: new Date(Date.now() - 300 * 86_400_000) });
    fake.create({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { namespace: NAMESPACE, name: 'hook-tls', annotations: { [generatedAnnotation]: 'true' } },
      data: { 'tls.crt': b64(old.cert), 'tls.key': b64(old.key), 'ca.crt': b64(old.ca), 'ca.key': b64(old.caKey) },
    });
    const port = await start({ kind: 'secret', name: 'hook-tls', generate: true }).listening;
    const renewed = await eventually(
      async () => fake.get({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: 'hook-tls' })!['data'] as Record<string, string>,
      (data) => data['tls.crt'] !== b64(old.cert),
      'the renewal',
    );
    expect(renewed['ca.crt']).to.equal(b64(old.ca));
    const served = await servedFingerprint(port, old.ca);
    expect(served).to.equal(new X509Certificate(Buffer.from(renewed['tls.crt']!, 'base64').toString()).fingerprint256);
  });

  it('keeps the caBundle of the ValidatingWebhookConfiguration equal to the CA, also after someone resets it', async () => {
    const certificate = generateCertificate({ dnsNames: ['hook.edge.svc'] });
    fake.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: NAMESPACE, name: 'hook-tls' },
      data: { 'tls.crt': b64(certificate.cert), 'tls.key': b64(certificate.key), 'ca.crt': b64(certificate.ca) },
    });
    const hook = (caBundle?: string) => ({
      name: 'ingresses.hook.example.com',
      clientConfig: { service: { namespace: NAMESPACE, name: 'hook', port: 9443 }, ...(caBundle === undefined ? {} : { caBundle }) },
      rules: [{ operations: ['CREATE'], apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], resources: ['ingresses'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    fake.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook' }, webhooks: [hook(), hook()] });
    const bundles = () =>
      (fake.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'hook' })!['webhooks'] as { clientConfig: { caBundle?: string } }[]).map(
        (w) => w.clientConfig.caBundle,
      );
    start({ kind: 'secret', name: 'hook-tls', generate: false }, 'hook');
    await eventually(
      async () => bundles(),
      (found) => found.every((bundle) => bundle === b64(certificate.ca)),
      'the caBundle',
    );
    fake.upsert({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook' }, webhooks: [hook(), hook()] });
    await eventually(
      async () => bundles(),
      (found) => found.every((bundle) => bundle === b64(certificate.ca)),
      'the caBundle set again',
    );
  });
});
