/**
 * Contract tests of the fake Kubernetes API server (spec/support/fake-apiserver)
 * with the REAL clients the controller depends on: @kubernetes/client-node
 * 2.0.1 (KubeConfig from the written kubeconfig, typed APIs, Watch, informers)
 * and kubectl 1.35, over real HTTP. What the fake promises is what a cluster
 * does, as seen through these clients; each fault is observed through them too.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  ListWatch,
  NetworkingV1Api,
  PatchStrategy,
  V1MicroTime,
  Watch,
  makeInformer,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { KubernetesObject, V1ConfigMap, V1Ingress } from '@kubernetes/client-node';
import { startFakeApiServer, StatusError } from '../support/fake-apiserver/index.ts';
import type { FakeApiServer, FakeApiServerOptions, KubeObject } from '../support/fake-apiserver/index.ts';
import { watchIdleMs } from '../../lib/kube/informer.ts';
import { eventually } from '../support/eventually.ts';
import { ManualClock } from '../support/clocks.ts';
import { kubeTool } from '../support/kube-tools.ts';
import { generateCertificate } from '../../lib/webhook/serving-certificate.ts';

// --- helpers ------------------------------------------------------------------

const closers: (() => Promise<unknown>)[] = [];

async function closeAll(): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close();
}

async function fakeFor(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const fake = await startFakeApiServer(options);
  closers.push(() => fake.close());
  return fake;
}

function kubeConfigFor(fake: FakeApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(fake.kubeconfigPath);
  return kc;
}

/** The Status body of a failed client-node call. */
async function failure(call: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown>; headers: Record<string, string> }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    return { code: error.code, status: JSON.parse(error.body as string) as Record<string, unknown>, headers: error.headers as Record<string, string> };
  }
  throw new Error('expected the call to fail');
}

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): V1ConfigMap {
  return { metadata: { name, namespace: 'default', labels }, data };
}

function ingress(name: string, host = 'a.example.com'): V1Ingress {
  return {
    metadata: { name, namespace: 'default' },
    spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

interface Recorded {
  readonly events: string[];
  readonly errors: unknown[];
}

/** Records an informer's callbacks as `add name`, `update name=value`, `delete name`. */
function record(informer: ListWatch<V1ConfigMap>): Recorded {
  const recorded: Recorded = { events: [], errors: [] };
  const show = (object: V1ConfigMap): string => `${object.metadata?.name}${object.data?.['v'] === undefined ? '' : `=${object.data['v']}`}`;
  informer.on('add', (object) => recorded.events.push(`add ${show(object)}`));
  informer.on('update', (object) => recorded.events.push(`update ${show(object)}`));
  informer.on('delete', (object) => recorded.events.push(`delete ${object.metadata?.name}`));
  informer.on('error', (error) => recorded.errors.push(error));
  return recorded;
}

/** An informer on default's ConfigMaps with an immediate reconnect delay, stopped after the test. */
function configMapInformer(fake: FakeApiServer, options: { labelSelector?: string; fieldSelector?: string } = {}): ListWatch<V1ConfigMap> {
  const kc = kubeConfigFor(fake);
  const core = kc.makeApiClient(CoreV1Api);
  const informer = new ListWatch<V1ConfigMap>(
    '/api/v1/namespaces/default/configmaps',
    new Watch(kc),
    () => core.listNamespacedConfigMap({ namespace: 'default', labelSelector: options.labelSelector, fieldSelector: options.fieldSelector }),
    false,
    options.labelSelector,
    options.fieldSelector,
    { delayFn: async () => undefined },
  );
  closers.push(() => informer.stop());
  return informer;
}

async function until(recorded: Recorded, wanted: readonly string[]): Promise<void> {
  await eventually(
    async () => recorded.events,
    (events) => wanted.every((event) => events.includes(event)),
    `informer events ${wanted.join(', ')}`,
  );
}

interface RawEvent {
  readonly type: string;
  readonly object: KubeObject & { code?: number; reason?: string };
}

/** client-node's Watch with its idle abort (30 s) run `timeScale` times faster, like a fake started with that scale. */
function scaledWatch(fake: FakeApiServer, timeScale: number): Watch {
  const watch = new Watch(kubeConfigFor(fake));
  idleField(watch).requestTimeoutMs = watchIdleMs / timeScale;
  return watch;
}

/** The field client-node's Watch reads its idle abort from (private in its typings). */
const idleField = (watch: Watch) => watch as unknown as { requestTimeoutMs: number };

/** A raw watch through client-node's Watch: its events with when each arrived (performance.now()), and whether (and how) it ended. */
async function watchRaw(fake: FakeApiServer, path: string, query: Record<string, string | number | boolean>, watch = new Watch(kubeConfigFor(fake))) {
  const events: (RawEvent & { readonly at: number })[] = [];
  let ended: { error: unknown; at: number } | undefined;
  const controller = await watch.watch(
    path,
    query,
    (type, object) => events.push({ type, object, at: performance.now() }),
    (error) => (ended = { error, at: performance.now() }),
  );
  closers.push(async () => controller.abort());
  return { events, ended: () => ended };
}

/** client-node's name for the `continue` list option and list metadata field. */
const CONTINUE = '_continue';

const names = (events: readonly RawEvent[]): string[] => events.map(({ type, object }) => `${type} ${String(object.metadata?.['name'] ?? '')}`);

let kubectlCache: string;

async function kubectl(fake: FakeApiServer, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(kubeTool('kubectl'), ['--kubeconfig', fake.kubeconfigPath, '--cache-dir', kubectlCache, ...args], {
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function rawGet(fake: FakeApiServer, path: string, authorization: string | null = fake.authorization): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${fake.url}${path}`, { headers: authorization === null ? {} : { authorization } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A raw request with a body (sent as is when a string), for patch documents and options no typed client sends. */
async function rawCall(fake: FakeApiServer, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; body: KubeObject }> {
  const response = await fetch(`${fake.url}${path}`, {
    method,
    headers: { authorization: fake.authorization, 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as KubeObject };
}

/** What a test webhook saw of one call. */
interface WebhookCall {
  readonly path: string;
  /** The name the API server asked for in the TLS handshake (SNI). */
  readonly servername: string | false;
  readonly review: { apiVersion: string; kind: string; request: Record<string, unknown> & { uid: string; object: KubeObject | null; oldObject: KubeObject | null } };
}

type WebhookAnswer = (call: WebhookCall) => Record<string, unknown> | 'hang' | { readonly status: number; readonly text: string };

/** An HTTPS admission webhook for hook.test.svc, answering as `answer` says; stopped after the test. */
async function testWebhook(answer: WebhookAnswer): Promise<{ port: number; caBundle: string; calls: WebhookCall[] }> {
  const generated = generateCertificate({ dnsNames: ['hook.test.svc'] });
  const calls: WebhookCall[] = [];
  const server = createHttpsServer({ cert: generated.cert, key: generated.key }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const call: WebhookCall = {
        path: request.url ?? '',
        servername: (request.socket as TLSSocket).servername ?? false,
        review: JSON.parse(Buffer.concat(chunks).toString('utf8')) as WebhookCall['review'],
      };
      calls.push(call);
      const reply = answer(call);
      if (reply === 'hang') return;
      response.setHeader('content-type', 'application/json');
      if ('status' in reply && typeof reply.status === 'number') {
        response.statusCode = reply.status;
        response.end(reply.text);
        return;
      }
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, caBundle: Buffer.from(generated.ca).toString('base64'), calls };
}

const allow = (call: WebhookCall, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: call.review.request.uid, allowed: true, ...extra },
});
const deny = (call: WebhookCall, message: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: call.review.request.uid, allowed: false, status: { message } },
});

/** A ValidatingWebhookConfiguration for Ingresses, reaching the test webhook as Service test/hook. */
function webhookConfiguration(caBundle: string, webhook: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'ingress-check' },
    webhooks: [
      {
        name: 'ingresses.check.example.com',
        clientConfig: { service: { namespace: 'test', name: 'hook', path: '/validate', port: 9443 }, caBundle },
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], resources: ['ingresses'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
        ...webhook,
      },
    ],
  };
}

// --- specs --------------------------------------------------------------------

describe('fake Kubernetes API server (contract with client-node and kubectl)', () => {
  before(async () => {
    kubectlCache = await mkdtemp(join(tmpdir(), 'kubectl-cache-'));
  });
  after(async () => {
    await rm(kubectlCache, { recursive: true, force: true });
  });
  afterEach(closeAll);

  describe('objects through client-node', () => {
    it('creates, reads, lists and deletes, with uid, creationTimestamp and one global resourceVersion set by the server', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const before = fake.resourceVersion;
      const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('one', {}, { v: '1' }) });
      expect(created.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);
      expect(created.metadata?.creationTimestamp).to.be.instanceOf(Date);
      expect(created.metadata?.resourceVersion).to.equal(String(before + 1));
      const service = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } } });
      expect(service.metadata?.resourceVersion).to.equal(String(before + 2));

      const read = await core.readNamespacedConfigMap({ name: 'one', namespace: 'default' });
      expect(read.data).to.deep.equal({ v: '1' });
      const list = await core.listNamespacedConfigMap({ namespace: 'default' });
      expect(list.metadata?.resourceVersion).to.equal(String(before + 2));
      expect(list.items.map((item) => item.metadata?.name)).to.deep.equal(['one']);

      // On the wire, as from a real server: the list names its kind, built-in items carry no type fields, a GET does.
      const raw = await rawGet(fake, '/api/v1/namespaces/default/configmaps');
      expect(raw.body).to.include({ kind: 'ConfigMapList', apiVersion: 'v1' });
      expect((raw.body['items'] as KubeObject[])[0]).to.not.have.any.keys('kind', 'apiVersion');
      expect((await rawGet(fake, '/api/v1/namespaces/default/configmaps/one')).body).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });

      const status = await core.deleteNamespacedConfigMap({ name: 'one', namespace: 'default' });
      expect(status).to.deep.include({ kind: 'Status', status: 'Success' });
      expect(status.details).to.deep.include({ name: 'one', kind: 'configmaps', uid: created.metadata?.uid });
      // Services, like Pods, answer a DELETE with the object.
      const deletedService = await core.deleteNamespacedService({ name: 'web', namespace: 'default' });
      expect(deletedService.kind).to.equal('Service');
      expect(deletedService.metadata?.resourceVersion).to.equal(String(before + 4));
      expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items).to.deep.equal([]);
    });

    it('answers 409 AlreadyExists, 409 Conflict for a stale replace, 404 NotFound and 422 Invalid as Status bodies', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const first = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('c', {}, { v: '1' }) });

      const exists = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('c') }));
      expect(exists.code).to.equal(409);
      expect(exists.status).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', code: 409 });
      expect(exists.status['message']).to.equal('configmaps "c" already exists');
      expect(exists.status['details']).to.deep.equal({ name: 'c', kind: 'configmaps' });

      const second = await core.replaceNamespacedConfigMap({ name: 'c', namespace: 'default', body: { ...first, data: { v: '2' } } });
      expect(Number(second.metadata?.resourceVersion)).to.be.greaterThan(Number(first.metadata?.resourceVersion));
      const stale = await failure(core.replaceNamespacedConfigMap({ name: 'c', namespace: 'default', body: { ...first, data: { v: '3' } } }));
      expect(stale.code).to.equal(409);
      expect(stale.status).to.deep.include({ reason: 'Conflict' });
      expect(stale.status['message']).to.contain('the object has been modified');
      // Without a resourceVersion the replace is unconditional.
      const { resourceVersion: _stale, ...unconditional } = first.metadata!;
      await core.replaceNamespacedConfigMap({ name: 'c', namespace: 'default', body: { ...first, metadata: unconditional, data: { v: '4' } } });
      expect(fake.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'c' })?.['data']).to.deep.equal({ v: '4' });

      const missing = await failure(core.readNamespacedConfigMap({ name: 'nope', namespace: 'default' }));
      expect(missing.code).to.equal(404);
      expect(missing.status).to.deep.include({ reason: 'NotFound', message: 'configmaps "nope" not found' });
      const ingressMissing = await failure(kubeConfigFor(fake).makeApiClient(NetworkingV1Api).readNamespacedIngress({ name: 'x', namespace: 'default' }));
      expect(ingressMissing.status).to.deep.include({ message: 'ingresses.networking.k8s.io "x" not found' });
      expect(ingressMissing.status['details']).to.deep.equal({ name: 'x', group: 'networking.k8s.io', kind: 'ingresses' });

      const nameless = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: {}, data: {} } }));
      expect(nameless.code).to.equal(422);
      expect(nameless.status).to.deep.include({ reason: 'Invalid', message: 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required' });
      expect((nameless.status['details'] as { causes: unknown[] }).causes).to.deep.equal([
        { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
      ]);
      const badName = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('Not_Valid') }));
      expect(badName.code).to.equal(422);
      expect(badName.status['message']).to.contain('metadata.name: Invalid value: "Not_Valid"');
      const badLabel = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('ok', { 'bad key!': 'x' }) }));
      expect(badLabel.status['message']).to.contain('metadata.labels: Invalid value: "bad key!"');

      const generated = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
      expect(generated.metadata?.name).to.match(/^gen-[a-z0-9]{5}$/);
    });

    it('patches with JSON patch (client-node default), merge patch and strategic merge patch', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('p', { a: '1' }, { keep: 'x', drop: 'y' }) });
      const target = { name: 'p', namespace: 'default' };

      await core.patchNamespacedConfigMap({
        ...target,
        body: [
          { op: 'add', path: '/data/json', value: 'yes' },
          { op: 'remove', path: '/data/drop' },
        ],
      });
      await core.patchNamespacedConfigMap(
        { ...target, body: { data: { merge: 'yes' }, metadata: { labels: { a: null, b: '2' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const patched = await core.patchNamespacedConfigMap({ ...target, body: { data: { strategic: 'yes' } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
      expect(patched.data).to.deep.equal({ keep: 'x', json: 'yes', merge: 'yes', strategic: 'yes' });
      expect(patched.metadata?.labels).to.deep.equal({ b: '2' });

      const failedTest = await failure(core.patchNamespacedConfigMap({ ...target, body: [{ op: 'test', path: '/data/keep', value: 'other' }] }));
      expect(failedTest.code).to.equal(422);
      const stale = await failure(
        core.patchNamespacedConfigMap({ ...target, body: { metadata: { resourceVersion: '1' }, data: { late: 'yes' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
      );
      expect(stale.status).to.deep.include({ code: 409, reason: 'Conflict' });
      const apply = await failure(core.patchNamespacedConfigMap({ ...target, body: {} }, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply)));
      expect(apply.code).to.equal(415);
      expect(apply.status['message']).to.contain('server-side apply is not implemented');
    });

    it('applies every JSON patch operation and the strategic merge directives kubectl sends; dry runs store nothing', async () => {
      const fake = await fakeFor();
      fake.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { namespace: 'default', name: 'svc', finalizers: ['a', 'b'], annotations: { keep: '1', drop: '2' } },
        spec: {
          selector: { app: 'web', tier: 'front' },
          ports: [
            { name: 'http', port: 80 },
            { name: 'https', port: 443 },
            { name: 'admin', port: 9000 },
          ],
        },
      });
      const path = '/api/v1/namespaces/default/services/svc';
      const json = await rawCall(
        fake,
        'PATCH',
        path,
        [
          { op: 'copy', from: '/spec/ports/0', path: '/spec/ports/-' },
          { op: 'move', from: '/metadata/annotations/drop', path: '/metadata/annotations/moved' },
          { op: 'replace', path: '/spec/ports/3/port', value: 8080 },
          { op: 'test', path: '/spec/ports/3/name', value: 'http' },
          { op: 'remove', path: '/spec/ports/3' },
        ],
        'application/json-patch+json',
      );
      expect(json.status).to.equal(200);
      expect(json.body.metadata?.['annotations']).to.deep.equal({ keep: '1', moved: '2' });

      const strategic = await rawCall(
        fake,
        'PATCH',
        path,
        {
          metadata: { annotations: { moved: null }, '$deleteFromPrimitiveList/finalizers': ['a'] },
          spec: {
            selector: { $patch: 'replace', app: 'api' },
            ports: [
              { name: 'https', port: 8443 },
              { $patch: 'delete', port: 9000 },
              { name: 'metrics', port: 9100 },
            ],
            '$setElementOrder/ports': [{ port: 9100 }, { port: 80 }, { port: 443 }],
          },
        },
        'application/strategic-merge-patch+json',
      );
      expect(strategic.status).to.equal(200);
      const spec = strategic.body['spec'] as { selector: unknown; ports: { port: number }[] };
      expect(spec.selector).to.deep.equal({ app: 'api' });
      expect(spec.ports.map((port) => port.port)).to.deep.equal([9100, 80, 443, 8443]);
      expect(strategic.body.metadata?.['annotations']).to.deep.equal({ keep: '1' });
      expect(strategic.body.metadata?.['finalizers']).to.deep.equal(['b']);

      const malformed = await rawCall(fake, 'PATCH', path, [{ op: 'jump', path: '/spec' }], 'application/json-patch+json');
      expect(malformed.body).to.deep.include({ kind: 'Status', code: 400 });
      const version = fake.resourceVersion;
      const dry = await rawCall(fake, 'PUT', `${path}?dryRun=All`, { ...strategic.body, spec: { ...spec, ports: [] } });
      expect(dry.status).to.equal(200);
      expect((dry.body['spec'] as { ports: unknown[] }).ports).to.deep.equal([]);
      const dryCreate = await rawCall(fake, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', 'metadata:\n  name: dry\ndata:\n  from: yaml\n', 'application/yaml');
      expect(dryCreate.status).to.equal(201);
      expect(dryCreate.body['data']).to.deep.equal({ from: 'yaml' });
      expect(fake.resourceVersion).to.equal(version);
      expect(fake.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'dry' })).to.equal(undefined);
      expect((await rawCall(fake, 'POST', '/api/v1/namespaces/default/configmaps', 'name=x', 'text/plain')).body).to.deep.include({ code: 415, reason: 'UnsupportedMediaType' });
    });

    it('keeps status out of main-resource writes and everything but status out of /status writes; generation follows spec changes', async () => {
      const fake = await fakeFor();
      const networking = kubeConfigFor(fake).makeApiClient(NetworkingV1Api);
      const created = await networking.createNamespacedIngress({
        namespace: 'default',
        body: { ...ingress('shop'), status: { loadBalancer: { ingress: [{ ip: '9.9.9.9' }] } } },
      });
      expect(created.metadata?.generation).to.equal(1);
      expect(created.status?.loadBalancer?.ingress).to.equal(undefined);

      const withStatus = await networking.replaceNamespacedIngressStatus({
        name: 'shop',
        namespace: 'default',
        body: { ...created, metadata: { ...created.metadata, labels: { ignored: 'yes' } }, spec: { rules: [] }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } },
      });
      expect(withStatus.status?.loadBalancer?.ingress).to.deep.equal([{ ip: '10.0.0.1' }]);
      expect(withStatus.spec?.rules?.[0]?.host).to.equal('a.example.com');
      expect(withStatus.metadata?.labels).to.equal(undefined);
      expect(withStatus.metadata?.generation).to.equal(1);

      const specChange = await networking.replaceNamespacedIngress({
        name: 'shop',
        namespace: 'default',
        body: { ...withStatus, spec: ingress('shop', 'b.example.com').spec, status: { loadBalancer: {} } },
      });
      expect(specChange.spec?.rules?.[0]?.host).to.equal('b.example.com');
      expect(specChange.status?.loadBalancer?.ingress).to.deep.equal([{ ip: '10.0.0.1' }]);
      expect(specChange.metadata?.generation).to.equal(2);

      const labelsOnly = await networking.patchNamespacedIngress(
        { name: 'shop', namespace: 'default', body: { metadata: { labels: { team: 'a' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      expect(labelsOnly.metadata?.generation).to.equal(2);
      const patchedStatus = await networking.patchNamespacedIngressStatus(
        { name: 'shop', namespace: 'default', body: { status: { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      expect(patchedStatus.status?.loadBalancer?.ingress).to.deep.equal([{ hostname: 'lb.example.com' }]);

      const noStatus = await failure(
        kubeConfigFor(fake)
          .makeApiClient(CoreV1Api)
          .replaceNamespacedConfigMap({ name: 'x', namespace: 'default', body: configMap('x') }),
      );
      expect(noStatus.code).to.equal(404);
      expect((await rawGet(fake, '/api/v1/namespaces/default/configmaps/x/status')).status).to.equal(404);
    });

    it('sets the server-side defaults the controller reads and refuses Ingress paths without a pathType', async () => {
      const fake = await fakeFor();
      const kc = kubeConfigFor(fake);
      const core = kc.makeApiClient(CoreV1Api);
      const service = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
      expect(service.spec).to.deep.include({ type: 'ClusterIP', sessionAffinity: 'None', ipFamilies: ['IPv4'] });
      expect(service.spec?.clusterIP).to.match(/^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
      expect(service.spec?.ports).to.deep.equal([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }]);
      // A replace that leaves the cluster IP out keeps it, as the Service strategy does.
      const replaced = await core.replaceNamespacedService({ name: 'web', namespace: 'default', body: { metadata: { name: 'web' }, spec: { ports: [{ port: 81, targetPort: 'http' }] } } });
      expect(replaced.spec?.clusterIP).to.equal(service.spec?.clusterIP);
      expect(replaced.spec?.ports?.[0]?.targetPort).to.equal('http');

      const secret = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' }, stringData: { password: 'hunter2' }, data: { user: 'YWRtaW4=' } } });
      expect(secret.type).to.equal('Opaque');
      expect(secret.stringData).to.equal(undefined);
      expect(secret.data).to.deep.equal({ user: 'YWRtaW4=', password: Buffer.from('hunter2').toString('base64') });

      await core.createNamespace({ body: { metadata: { name: 'labelled' } } });
      const relabelled = await core.replaceNamespace({ name: 'labelled', body: { metadata: { name: 'labelled', labels: { team: 'a' } } } });
      expect(relabelled.metadata?.labels).to.deep.equal({ team: 'a', 'kubernetes.io/metadata.name': 'labelled' });

      const backend = { service: { name: 'web', port: { number: 80 } } };
      const refused = await rawCall(fake, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
        metadata: { name: 'no-path-type' },
        spec: { rules: [{ http: { paths: [{ path: '/', backend }] } }] },
      });
      expect(refused.body).to.deep.include({
        code: 422,
        message: 'Ingress.networking.k8s.io "no-path-type" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      });
      // A rule's host is a DNS name, a wildcard one where it holds '*', never an address: validateIngressRules' words (kube-apiserver 1.34.4 answered the first so).
      const withHost = (name: string, host: string) =>
        rawCall(fake, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
          metadata: { name },
          spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }] },
        });
      expect((await withHost('commented', 'evil.example.com # x')).body).to.deep.include({
        code: 422,
        message: `Ingress.networking.k8s.io "commented" is invalid: spec.rules[0].host: Invalid value: "evil.example.com # x": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      });
      expect(String((await withHost('address', '10.0.0.1')).body['message'])).to.equal(
        'Ingress.networking.k8s.io "address" is invalid: spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      );
      expect((await withHost('wildcard', '*.example.com')).status).to.equal(201);
    });

    it('stores nothing and notifies nobody for a write that changes nothing', async () => {
      const fake = await fakeFor();
      const networking = kubeConfigFor(fake).makeApiClient(NetworkingV1Api);
      const created = await networking.createNamespacedIngress({ namespace: 'default', body: ingress('same') });
      const status = { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } };
      const first = await networking.replaceNamespacedIngressStatus({ name: 'same', namespace: 'default', body: { ...created, status } });
      const watch = await watchRaw(fake, '/apis/networking.k8s.io/v1/namespaces/default/ingresses', { resourceVersion: first.metadata!.resourceVersion! });
      const again = await networking.replaceNamespacedIngressStatus({ name: 'same', namespace: 'default', body: { ...first, status } });
      expect(again.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
      await networking.patchNamespacedIngress({ name: 'same', namespace: 'default', body: { metadata: { labels: { x: '1' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await eventually(
        async () => watch.events,
        (events) => events.length > 0,
        'the label change',
      );
      expect(watch.events.map(({ type, object }) => `${type} ${String(object.metadata?.['resourceVersion'])}`)).to.deep.equal([`MODIFIED ${fake.resourceVersion}`]);
    });

    it('serves namespaced and cluster-wide paths and admits namespaced objects only into existing namespaces', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
      const namespace = await core.readNamespace({ name: 'team-a' });
      expect(namespace.metadata?.labels).to.deep.equal({ 'kubernetes.io/metadata.name': 'team-a' });
      expect(namespace.status?.phase).to.equal('Active');
      await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'x' } } });
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' } } });

      const everywhere = await core.listConfigMapForAllNamespaces();
      expect(everywhere.items.map((item) => `${item.metadata?.namespace}/${item.metadata?.name}`)).to.deep.equal(['default/x', 'team-a/x']);
      expect((await core.listNamespacedConfigMap({ namespace: 'team-a' })).items).to.have.length(1);
      expect((await core.listNamespace()).items.map((item) => item.metadata?.name)).to.include.members(['default', 'kube-system', 'team-a']);

      const nowhere = await failure(core.createNamespacedConfigMap({ namespace: 'missing', body: { metadata: { name: 'x' } } }));
      expect(nowhere.status).to.deep.include({ code: 404, message: 'namespaces "missing" not found' });
      const mismatch = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'y', namespace: 'team-a' } } }));
      expect(mismatch.status).to.deep.include({ code: 400, reason: 'BadRequest' });
      // The in-process API writes as storage does, without admission.
      fake.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'never-created', name: 'x' } });

      await core.deleteNamespace({ name: 'team-a' });
      expect((await core.listConfigMapForAllNamespaces()).items.map((item) => item.metadata?.namespace)).to.deep.equal(['default', 'never-created']);
      expect((await rawGet(fake, '/api/v1/configmaps/x')).status).to.equal(404);
    });

    it('validates events.k8s.io/v1 Events and MicroTime fields as a cluster does (a JavaScript Date is refused)', async () => {
      const fake = await fakeFor();
      const kc = kubeConfigFor(fake);
      const events = kc.makeApiClient(EventsV1Api);
      const event = {
        metadata: { name: 'shop.1', namespace: 'default' },
        regarding: { kind: 'Ingress', namespace: 'default', name: 'shop' },
        reason: 'Synced',
        note: 'configuration deployed',
        action: 'Deploy',
        type: 'Normal',
        reportingController: 'haproxy-template-ic.example.com/controller',
        reportingInstance: 'controller-0',
      };
      const millis = await failure(events.createNamespacedEvent({ namespace: 'default', body: { ...event, eventTime: new Date() } }));
      expect(millis.code).to.equal(400);
      expect(millis.status['message']).to.contain('eventTime: parsing time');

      const created = await events.createNamespacedEvent({ namespace: 'default', body: { ...event, eventTime: new V1MicroTime() } });
      expect(created.reason).to.equal('Synced');

      const incomplete = await failure(events.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'bare' }, eventTime: new V1MicroTime(), type: 'Odd' } }));
      expect(incomplete.code).to.equal(422);
      expect((incomplete.status['details'] as { causes: { field: string }[] }).causes.map((cause) => cause.field)).to.have.members([
        'reportingController',
        'reportingInstance',
        'action',
        'reason',
        'type',
      ]);
      const changed = await failure(events.replaceNamespacedEvent({ name: 'shop.1', namespace: 'default', body: { ...created, reason: 'Other' } }));
      expect(changed.status['message']).to.contain('reason: Invalid value: "Other": field is immutable');
      await events.replaceNamespacedEvent({ name: 'shop.1', namespace: 'default', body: { ...created, series: { count: 2, lastObservedTime: new V1MicroTime() } } });

      const leases = kc.makeApiClient(CoordinationV1Api);
      const spec = { holderIdentity: 'controller-0', leaseDurationSeconds: 15 };
      expect((await failure(leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'leader' }, spec: { ...spec, renewTime: new Date() } } }))).code).to.equal(400);
      const lease = await leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'leader' }, spec: { ...spec, renewTime: new V1MicroTime() } } });
      // A renewal a second on: within the same millisecond it would change nothing, and a write that changes nothing keeps the version.
      await leases.replaceNamespacedLease({ name: 'leader', namespace: 'default', body: { ...lease, spec: { ...lease.spec, renewTime: new V1MicroTime(Date.now() + 1_000) } } });
      const lost = await failure(leases.replaceNamespacedLease({ name: 'leader', namespace: 'default', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'controller-1' } } }));
      expect(lost.status).to.deep.include({ code: 409, reason: 'Conflict' });
    });
    it('keeps Events about cluster-scoped objects in default or kube-system (422 elsewhere), and expires Events an --event-ttl after their last write', async () => {
      // An hour of server time passes in 200 ms.
      const fake = await fakeFor({ timeScale: 18_000 });
      await fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'haproxy' } });
      const events = kubeConfigFor(fake).makeApiClient(EventsV1Api);
      const event = (name: string, namespace: string, regarding: { kind: string; name: string; namespace?: string }) => ({
        metadata: { name, namespace },
        regarding: { apiVersion: 'v1', ...regarding },
        reason: 'Synced',
        note: 'n',
        action: 'Deploy',
        type: 'Normal',
        reportingController: 'haproxy-template-ic',
        reportingInstance: 'controller-0',
        eventTime: new V1MicroTime(),
      });
      const node = { kind: 'Node', name: 'worker-1' };
      const watch = await watchRaw(fake, '/apis/events.k8s.io/v1/events', { resourceVersion: String(fake.resourceVersion), timeoutSeconds: 86_400 });
      const written = performance.now();
      const elsewhere = await failure(events.createNamespacedEvent({ namespace: 'haproxy', body: event('node.1', 'haproxy', node) }));
      expect(elsewhere.code).to.equal(422);
      expect(elsewhere.status['message']).to.contain('involvedObject.namespace: Invalid value: "": does not match event.namespace');
      await events.createNamespacedEvent({ namespace: 'kube-system', body: event('node.2', 'kube-system', node) });
      await events.createNamespacedEvent({ namespace: 'default', body: event('node.3', 'default', node) });
      // About a namespaced object, the Event may live in another namespace: only eventTime-less (legacy) Events must match.
      await events.createNamespacedEvent({ namespace: 'haproxy', body: event('pod.1', 'haproxy', { kind: 'Pod', namespace: 'default', name: 'p' }) });

      const deleted: string[] = [];
      // Half an hour of server time passes (what is under test is the passing of time itself), then one
      // Event's series is bumped: its hour starts again.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const bumped = performance.now();
      await events.patchNamespacedEvent(
        { name: 'node.3', namespace: 'default', body: { series: { count: 2, lastObservedTime: new V1MicroTime() } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await eventually(
        async () => watch.events.filter(({ type }) => type === 'DELETED'),
        (gone) => gone.length === 3,
        'every Event to expire',
        5_000,
      );
      for (const { object } of watch.events.filter(({ type }) => type === 'DELETED')) deleted.push(String(object.metadata?.['name']));
      // The bumped one goes last, an hour after its bump; the others an hour after they were written.
      expect(deleted.at(-1)).to.equal('node.3');
      const expiredAt = (name: string) => watch.events.find(({ type, object }) => type === 'DELETED' && object.metadata?.['name'] === name)!.at;
      expect(expiredAt('node.2') - written).to.be.at.least(199);
      expect(expiredAt('node.3') - bumped).to.be.at.least(199);
      expect(fake.list('events.k8s.io/v1', 'Event')).to.deep.equal([]);
      const gone = await failure(
        events.patchNamespacedEvent(
          { name: 'node.3', namespace: 'default', body: { series: { count: 3, lastObservedTime: new V1MicroTime() } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
      expect(gone.code).to.equal(404);
    });
  });

  describe('selectors and pages', () => {
    it('applies full label selector syntax and field selectors to lists; unsupported fields and bad syntax are 400', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      for (const [name, labels] of [
        ['a', { app: 'web', tier: 'front' }],
        ['b', { app: 'web', tier: 'back' }],
        ['c', { app: 'db' }],
        ['d', {}],
      ] as const) {
        await core.createNamespacedConfigMap({ namespace: 'default', body: configMap(name, labels) });
      }
      const select = async (labelSelector?: string, fieldSelector?: string): Promise<string[]> =>
        (await core.listNamespacedConfigMap({ namespace: 'default', labelSelector, fieldSelector })).items.map((item) => item.metadata!.name!);
      expect(await select('app=web')).to.deep.equal(['a', 'b']);
      expect(await select('app in (web,db),tier notin (back)')).to.deep.equal(['a', 'c']);
      expect(await select('!app')).to.deep.equal(['d']);
      expect(await select('app!=web')).to.deep.equal(['c', 'd']);
      expect(await select(undefined, 'metadata.name=b')).to.deep.equal(['b']);
      expect(await select('app', 'metadata.name!=a')).to.deep.equal(['b', 'c']);
      expect((await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=kube-system' })).items).to.deep.equal([]);

      const unsupported = await failure(core.listNamespacedConfigMap({ namespace: 'default', fieldSelector: 'data.x=1' }));
      expect(unsupported.status).to.deep.include({ code: 400, message: 'field label not supported: data.x' });
      expect((await failure(core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app in web' }))).code).to.equal(400);
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'tls' }, type: 'kubernetes.io/tls' } });
      expect((await core.listNamespacedSecret({ namespace: 'default', fieldSelector: 'type=kubernetes.io/tls' })).items).to.have.length(1);
    });

    it("turns an object leaving a watch's selector into DELETED and one entering it into ADDED", async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('m', { app: 'web' }) });
      const watch = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', { resourceVersion: String(fake.resourceVersion), labelSelector: 'app=web' });
      const patchLabels = (app: string): Promise<V1ConfigMap> =>
        core.patchNamespacedConfigMap({ name: 'm', namespace: 'default', body: { metadata: { labels: { app } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await patchLabels('db');
      const left = fake.resourceVersion;
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('other', { app: 'db' }) });
      await patchLabels('web');
      await eventually(
        async () => watch.events,
        (events) => events.length >= 2,
        'two events',
      );
      expect(names(watch.events)).to.deep.equal(['DELETED m', 'ADDED m']);
      // The DELETED object is the last matching state, stamped with the version of the change that took it out.
      expect(watch.events[0]!.object.metadata?.['labels']).to.deep.equal({ app: 'web' });
      expect(watch.events[0]!.object.metadata?.['resourceVersion']).to.equal(String(left));
    });

    it("pages with limit and continue at the first page's version, and 410 once that version is compacted", async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      for (const name of ['a', 'b', 'c', 'd', 'e']) await core.createNamespacedConfigMap({ namespace: 'default', body: configMap(name) });
      const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
      expect(first.items.map((item) => item.metadata?.name)).to.deep.equal(['a', 'b']);
      expect(first.metadata?.remainingItemCount).to.equal(3);
      await core.deleteNamespacedConfigMap({ name: 'c', namespace: 'default' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('bb') });
      const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, [CONTINUE]: first.metadata?.[CONTINUE] });
      expect(second.items.map((item) => item.metadata?.name)).to.deep.equal(['c', 'd']);
      expect(second.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
      const third = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, [CONTINUE]: second.metadata?.[CONTINUE] });
      expect(third.items.map((item) => item.metadata?.name)).to.deep.equal(['e']);
      expect(third.metadata?.[CONTINUE]).to.equal(undefined);

      const exact = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: first.metadata!.resourceVersion!, resourceVersionMatch: 'Exact' });
      expect(exact.items.map((item) => item.metadata?.name)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
      fake.compactHistory();
      const gone = await failure(core.listNamespacedConfigMap({ namespace: 'default', limit: 2, [CONTINUE]: first.metadata?.[CONTINUE] }));
      expect(gone.status).to.deep.include({ code: 410, reason: 'Expired' });
      const future = await failure(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: String(fake.resourceVersion + 10) }));
      expect(future.status).to.deep.include({ code: 504, reason: 'Timeout' });
    });
  });

  describe('watches and informers', () => {
    it('replays a watch from a resourceVersion, then follows live changes, and ends cleanly at timeoutSeconds', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const from = String(fake.resourceVersion);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('early') });
      await core.deleteNamespacedConfigMap({ name: 'early', namespace: 'default' });
      const watch = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', { resourceVersion: from, timeoutSeconds: 1 });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('live') });
      await eventually(
        async () => watch.ended(),
        (ended) => ended !== undefined,
        'the watch to time out',
        3_000,
      );
      expect(names(watch.events)).to.deep.equal(['ADDED early', 'DELETED early', 'ADDED live']);
      expect(watch.events.map(({ object }) => object.kind)).to.deep.equal(['ConfigMap', 'ConfigMap', 'ConfigMap']);
      expect(watch.ended()?.error).to.equal(null);
    });

    it('sends bookmarks on the watch cache schedule (a minute after the watch opens, then every minute, and 2 s before its deadline) only when asked, and the initial-events-end bookmark', async () => {
      // A minute of server time passes in 100 ms.
      const scale = 600;
      const serverSeconds = (realMs: number) => (realMs * scale) / 1_000;
      const fake = await fakeFor({ timeScale: scale });
      await fake.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'x' } });
      const opened = performance.now();
      const query = { resourceVersion: String(fake.resourceVersion), timeoutSeconds: 150 };
      const asked = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', { ...query, allowWatchBookmarks: true });
      const notAsked = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', query);
      const initial = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', {
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
      });
      await eventually(
        async () => [asked.ended(), notAsked.ended()],
        (ended) => ended.every((end) => end !== undefined),
        'both watches to reach their deadline',
        5_000,
      );
      expect(asked.events.every(({ type, object }) => type === 'BOOKMARK' && object.kind === 'ConfigMap' && object.metadata?.['resourceVersion'] === String(fake.resourceVersion))).to.equal(
        true,
      );
      // 150 s: bookmarks at 60 s and 120 s, the next heartbeat (180 s) falls after the deadline so one goes 2 s before it, then the clean end.
      // The fake's timers fire on time or late, never early (a millisecond of slack is a fraction of a server second here).
      expect(asked.events.map(({ at }) => serverSeconds(at - opened))).to.satisfy((times: number[]) => times.length === 3 && times[0]! >= 59 && times[1]! >= 119 && times[2]! >= 147);
      expect(serverSeconds(asked.ended()!.at - opened)).to.be.at.least(149);
      expect(asked.ended()?.error).to.equal(null);
      expect(notAsked.events).to.deep.equal([]);
      expect(names(initial.events.slice(0, 2))).to.deep.equal(['ADDED x', 'BOOKMARK ']);
      expect(initial.events[1]!.object.metadata?.['annotations']).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    });

    it("meets client-node's idle abort as a cluster does: a silent watch is cut after 30 s, before the first bookmark, and its informer reopens it at once from the same version", async () => {
      const scale = 600;
      const fake = await fakeFor({ timeScale: scale });
      const kc = kubeConfigFor(fake);
      // What client-node 2.0.1 does, pinned: a 30 s idle abort.
      expect(idleField(new Watch(kc)).requestTimeoutMs).to.equal(30_000);
      const quiet = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', { resourceVersion: String(fake.resourceVersion), allowWatchBookmarks: true }, scaledWatch(fake, scale));
      await eventually(
        async () => quiet.ended(),
        (ended) => ended !== undefined,
        'the idle abort',
        5_000,
      );
      expect((quiet.ended()!.error as Error).name).to.equal('TimeoutError');
      expect(quiet.events).to.deep.equal([]);

      const core = kc.makeApiClient(CoreV1Api);
      const informer = new ListWatch<V1ConfigMap>('/api/v1/namespaces/default/configmaps', scaledWatch(fake, scale), () => core.listNamespacedConfigMap({ namespace: 'default' }), false);
      closers.push(() => informer.stop());
      const recorded = record(informer);
      await informer.start();
      await eventually(
        async () => fake.requests.matching({ verb: 'watch', resource: 'configmaps' }).length,
        (count) => count >= 5,
        'four reopens',
      );
      const watches = fake.requests.matching({ verb: 'watch', resource: 'configmaps' });
      expect(new Set(watches.map((request) => new URLSearchParams(request.query).get('resourceVersion'))).size).to.equal(1);
      expect(fake.requests.matching({ verb: 'list', resource: 'configmaps' })).to.have.length(1);
      expect(recorded.errors).to.deep.equal([]);
    });

    it('drives a real informer: initial list, then add, update and delete', async () => {
      const fake = await fakeFor();
      const kc = kubeConfigFor(fake);
      const core = kc.makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('before', {}, { v: '0' }) });
      const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
      closers.push(() => informer.stop());
      const recorded = record(informer as ListWatch<V1ConfigMap>);
      await informer.start();
      expect(recorded.events).to.deep.equal(['add before=0']);
      expect(fake.openWatches('configmaps')).to.equal(1);

      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('new', {}, { v: '1' }) });
      await core.patchNamespacedConfigMap({ name: 'new', namespace: 'default', body: [{ op: 'replace', path: '/data/v', value: '2' }] });
      fake.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'before' });
      await until(recorded, ['add new=1', 'update new=2', 'delete before']);
      expect(recorded.events).to.deep.equal(['add before=0', 'add new=1', 'update new=2', 'delete before']);
      expect(informer.list().map((object: KubernetesObject) => object.metadata?.name)).to.deep.equal(['new']);
      expect(recorded.errors).to.deep.equal([]);
    });

    it('recovers an informer from 410 Expired (in-stream ERROR) by relisting, with synthetic events for what it missed', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('stays', {}, { v: '1' }) });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('goes') });
      const informer = configMapInformer(fake);
      const recorded = record(informer);
      await informer.start();

      // Changes the informer never sees on its watch: held by a stall, the history compacted, the watch dropped with what it held.
      fake.faults.stallWatches(true);
      await core.replaceNamespacedConfigMap({ name: 'stays', namespace: 'default', body: configMap('stays', {}, { v: '2' }) });
      await core.deleteNamespacedConfigMap({ name: 'goes', namespace: 'default' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('arrives') });
      fake.compactHistory();
      expect(fake.faults.dropWatches({ resource: 'configmaps' })).to.equal(1);
      fake.faults.stallWatches(false);

      await until(recorded, ['update stays=2', 'delete goes', 'add arrives']);
      // Dropped, expired (200 with the ERROR event), then the watch after the relist.
      await eventually(
        async () => fake.requests.matching({ verb: 'watch', resource: 'configmaps' }).map((request) => request.status),
        (statuses) => statuses.length === 3,
        'three watches',
      );
      expect(fake.requests.matching({ verb: 'watch', resource: 'configmaps' }).map((request) => request.status)).to.deep.equal([200, 200, 200]);
      expect(fake.requests.matching({ verb: 'list', resource: 'configmaps' })).to.have.length(2);
      expect(recorded.errors).to.deep.equal([]);
    });

    it('recovers from 410 answered as an HTTP status (expiredWatchAs: status) the same way', async () => {
      const fake = await fakeFor({ expiredWatchAs: 'status' });
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const informer = configMapInformer(fake);
      const recorded = record(informer);
      await informer.start();
      fake.faults.stallWatches(true);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('missed') });
      fake.compactHistory();
      fake.faults.dropWatches();
      fake.faults.stallWatches(false);
      await until(recorded, ['add missed']);
      await eventually(
        async () => fake.requests.matching({ verb: 'watch' }).map((request) => request.status),
        (statuses) => statuses.length === 3,
        'three watches',
      );
      expect(fake.requests.matching({ verb: 'watch' }).map((request) => request.status)).to.deep.equal([200, 410, 200]);
      expect(recorded.errors).to.deep.equal([]);
    });

    it("fires the informer's error on a 5xx watch and on a failed list (client-node then stops); start() resumes from the last version", async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const informer = configMapInformer(fake);
      const recorded = record(informer);
      fake.faults.failNext(1, { verb: 'list', resource: 'configmaps' });
      await informer.start();
      expect(recorded.errors).to.have.length(1);
      expect(fake.openWatches()).to.equal(0);

      await informer.start();
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('one') });
      await until(recorded, ['add one']);
      fake.faults.failNext(1, { status: 503, verb: 'watch' });
      fake.faults.dropWatches();
      await eventually(
        async () => recorded.errors.length,
        (count) => count === 2,
        'the watch error',
      );
      expect((recorded.errors[1] as { statusCode: number }).statusCode).to.equal(503);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('two') });
      expect(fake.openWatches()).to.equal(0);

      await informer.start();
      await until(recorded, ['add two']);
      expect(fake.requests.matching({ verb: 'list' })).to.have.length(2);
    });

    it("honours label and field selectors in an informer's list and watch", async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const informer = configMapInformer(fake, { labelSelector: 'app=web', fieldSelector: 'metadata.name!=skip' });
      const recorded = record(informer);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('listed', { app: 'web' }) });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('unlisted', { app: 'db' }) });
      await informer.start();
      for (const [name, app] of [
        ['skip', 'web'],
        ['db', 'db'],
        ['watched', 'web'],
      ]) {
        await core.createNamespacedConfigMap({ namespace: 'default', body: configMap(name!, { app: app! }) });
      }
      await until(recorded, ['add watched']);
      expect(recorded.events).to.deep.equal(['add listed', 'add watched']);
      const [list] = fake.requests.matching({ verb: 'list' });
      expect(new URLSearchParams(list!.query).get('labelSelector')).to.equal('app=web');
    });
  });

  describe('faults', () => {
    it('drops watches cleanly (the informer reconnects) or with a reset (the informer reports an error)', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const informer = configMapInformer(fake);
      const recorded = record(informer);
      await informer.start();
      expect(fake.faults.dropWatches({ resource: 'ingresses' })).to.equal(0);
      expect(fake.faults.dropWatches({ resource: 'configmaps' })).to.equal(1);
      await eventually(
        async () => fake.requests.matching({ verb: 'watch' }).length,
        (count) => count === 2,
        'the reconnect',
      );
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('after-end') });
      await until(recorded, ['add after-end']);
      expect(recorded.errors).to.deep.equal([]);

      fake.faults.dropWatches({ mode: 'reset' });
      await eventually(
        async () => recorded.errors.length,
        (count) => count === 1,
        'the reset to be reported',
      );
      expect(fake.openWatches()).to.equal(0);
    });

    it('stalls watches: the connection stays open and silent (bookmarks and the end at its deadline too) until released, then the held events arrive in order, then the end', async () => {
      // A minute of server time in 20 ms: bookmarks would be due while stalled.
      const fake = await fakeFor({ timeScale: 3_000 });
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      fake.faults.stallWatches(true, 'configmaps');
      const query = { resourceVersion: String(fake.resourceVersion), allowWatchBookmarks: true, timeoutSeconds: 300 };
      const stalled = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', query);
      const other = await watchRaw(fake, '/api/v1/namespaces/default/secrets', query);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('held-1') });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('held-2') });
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
      // The other watch, opened with the same deadline, has reached it: so has the stalled one.
      await eventually(
        async () => other.ended(),
        (ended) => ended !== undefined,
        'the unstalled watch to end',
      );
      expect(names(other.events.filter(({ type }) => type !== 'BOOKMARK'))).to.deep.equal(['ADDED s']);
      expect(stalled.events).to.deep.equal([]);
      expect(stalled.ended()).to.equal(undefined);
      expect(fake.openWatches('configmaps')).to.equal(1);

      fake.faults.stallWatches(false, 'configmaps');
      await eventually(
        async () => stalled.ended(),
        (ended) => ended !== undefined,
        'the held end',
      );
      expect(names(stalled.events)).to.deep.equal(['ADDED held-1', 'ADDED held-2']);
      expect(stalled.ended()?.error).to.equal(null);
    });

    it('withholds bookmarks, as a server that sends none: the watch still ends cleanly at its deadline', async () => {
      // Virtual time: on a scaled clock a loaded machine fires the minute timers late, and the watch cache then sends fewer bookmarks.
      const clock = new ManualClock();
      const fake = await fakeFor({ clock });
      fake.faults.withholdBookmarks(true, 'configmaps');
      const before = clock.pending;
      const query = { resourceVersion: String(fake.resourceVersion), allowWatchBookmarks: true, timeoutSeconds: 300 };
      const without = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', query);
      const other = await watchRaw(fake, '/api/v1/namespaces/default/secrets', query);
      // Each watch has set its deadline and its first bookmark.
      await eventually(
        async () => clock.pending,
        (pending) => pending === before + 4,
        'both watches to set their timers',
      );
      await clock.advance(300_000);
      await eventually(
        async () => [without.ended(), other.ended()],
        (ended) => ended.every((end) => end !== undefined),
        'both deadlines',
      );
      expect([without.events.length, without.ended()?.error]).to.deep.equal([0, null]);
      expect(names(other.events)).to.deep.equal(['BOOKMARK ', 'BOOKMARK ', 'BOOKMARK ', 'BOOKMARK ', 'BOOKMARK ']);
    });

    it('fails the next N list or watch requests with a 5xx, throttles with 429 and Retry-After, slows lists, and logs every request', async () => {
      const fake = await fakeFor();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      fake.faults.failNext(2, { verb: 'list', resource: 'configmaps' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x') });
      expect((await failure(core.listNamespacedConfigMap({ namespace: 'default' }))).status).to.deep.include({ code: 500, reason: 'InternalError' });
      await core.listNamespacedSecret({ namespace: 'default' });
      expect((await failure(core.listNamespacedConfigMap({ namespace: 'default' }))).code).to.equal(500);
      expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items).to.have.length(1);

      fake.faults.throttleNext(1, { retryAfterSeconds: 7 });
      const throttled = await failure(core.readNamespacedConfigMap({ name: 'x', namespace: 'default' }));
      expect(throttled.status).to.deep.include({ code: 429, reason: 'TooManyRequests' });
      expect(throttled.headers['retry-after']).to.equal('7');
      expect(throttled.status['details']).to.deep.equal({ retryAfterSeconds: 7 });

      expect(fake.requests.entries.map((request) => `${request.method} ${request.verb} ${request.resource} ${request.status}`)).to.deep.equal([
        'POST create configmaps 201',
        'GET list configmaps 500',
        'GET list secrets 200',
        'GET list configmaps 500',
        'GET list configmaps 200',
        'GET get configmaps 429',
      ]);
      expect(fake.requests.entries[0]).to.include({ path: '/api/v1/namespaces/default/configmaps', namespace: 'default', group: '' });

      // Only the delayed resource waits: a list of another one started later still answers first.
      fake.faults.delayLists(200, 'configmaps');
      const answered: string[] = [];
      const started = Date.now();
      const slow = core.listNamespacedConfigMap({ namespace: 'default' }).then(() => answered.push(`configmaps after ${Date.now() - started} ms`));
      await core.listNamespacedSecret({ namespace: 'default' }).then(() => answered.push('secrets'));
      await slow;
      expect(answered[0]).to.equal('secrets');
      expect(Number(/after (\d+) ms/.exec(answered[1]!)?.[1])).to.be.at.least(190);
    });

    it('answers a watch from a compacted version with an in-stream 410 ERROR Status and ends it', async () => {
      const fake = await fakeFor();
      const old = String(fake.resourceVersion);
      fake.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'x' } });
      fake.compactHistory();
      const watch = await watchRaw(fake, '/api/v1/namespaces/default/configmaps', { resourceVersion: old });
      await eventually(
        async () => watch.ended(),
        (ended) => ended !== undefined,
        'the stream to end',
      );
      expect(watch.events).to.have.length(1);
      expect(watch.events[0]).to.deep.include({ type: 'ERROR' });
      expect(watch.events[0]!.object).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
      expect(fake.requests.matching({ verb: 'watch' })[0]?.status).to.equal(200);
    });
  });

  describe('authentication and transport', () => {
    it('requires the bearer token when asked (401 without it) and client-node sends it from the kubeconfig', async () => {
      const fake = await fakeFor({ requireToken: true });
      expect(await rawGet(fake, '/api/v1/namespaces', null)).to.deep.include({ status: 401 });
      expect((await rawGet(fake, '/version', 'Bearer wrong')).body).to.deep.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      expect((await core.listNamespace()).items.length).to.be.greaterThan(0);
    });

    it('serves HTTPS with the tls option, where kubectl sends the token too', async () => {
      const fake = await fakeFor({ tls: true, requireToken: true });
      expect(fake.url).to.match(/^https:/);
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('secure') });
      const got = await kubectl(fake, 'get', 'configmap', 'secure', '-o', 'json');
      expect(got.stderr).to.equal('');
      expect(JSON.parse(got.stdout)).to.deep.include({ kind: 'ConfigMap' });
    });
  });

  describe('kubectl', () => {
    it('creates, gets, replaces, applies and deletes through the written kubeconfig', async () => {
      const fake = await fakeFor();
      const directory = await mkdtemp(join(tmpdir(), 'kubectl-manifests-'));
      closers.push(() => rm(directory, { recursive: true, force: true }));
      const manifest = join(directory, 'service.yaml');
      const service = (port: number, extra = ''): string =>
        `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default${extra}\nspec:\n  ports:\n    - name: http\n      port: ${port}\n`;

      await writeFile(manifest, service(80));
      expect((await kubectl(fake, 'create', '--save-config', '-f', manifest)).stdout).to.equal('service/web created\n');
      const got = JSON.parse((await kubectl(fake, 'get', 'service', 'web', '-o', 'json')).stdout) as KubeObject;
      expect(got).to.deep.include({ kind: 'Service', apiVersion: 'v1' });
      expect(got.metadata?.['uid']).to.equal(fake.get({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'web' })?.metadata?.['uid']);

      await writeFile(manifest, service(8080));
      expect((await kubectl(fake, 'replace', '--save-config', '-f', manifest)).stdout).to.equal('service/web replaced\n');
      // apply sends a strategic merge patch that merges spec.ports by port: 8080 deleted, 9090 added.
      await writeFile(manifest, service(9090, '\n  labels:\n    app: web'));
      const applied = await kubectl(fake, 'apply', '-f', manifest);
      expect(applied.stdout).to.equal('service/web configured\n');
      const [patch] = fake.requests.matching({ verb: 'patch' });
      expect(patch?.status).to.equal(200);
      const stored = fake.get({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'web' })!;
      expect((stored['spec'] as { ports: unknown[] }).ports).to.deep.equal([{ name: 'http', port: 9090, protocol: 'TCP', targetPort: 9090 }]);
      expect(stored.metadata?.['labels']).to.deep.equal({ app: 'web' });
      expect((await kubectl(fake, 'apply', '-f', manifest)).stdout).to.equal('service/web unchanged\n');

      const listed = JSON.parse((await kubectl(fake, 'get', 'svc', '-o', 'json')).stdout) as { items: KubeObject[] };
      expect(listed.items.map((item) => item.metadata?.['name'])).to.deep.equal(['web']);
      expect((await kubectl(fake, 'delete', '-f', manifest)).stdout).to.contain('service "web" deleted');
      expect(fake.list('v1', 'Service')).to.deep.equal([]);
      const missing = await kubectl(fake, 'get', 'service', 'web');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('services "web" not found');
    });

    it('sees a registered custom resource type', async () => {
      const fake = await fakeFor();
      fake.registerCustomResource({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true, statusSubresource: true });
      fake.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'default', name: 'w' }, spec: { size: 1 } });
      const listed = JSON.parse((await kubectl(fake, 'get', 'widgets', '-o', 'json')).stdout) as { items: KubeObject[] };
      expect(listed.items.map((item) => `${String(item.kind)} ${String(item.metadata?.['name'])}`)).to.deep.equal(['Widget w']);
    });
  });

  describe('validating admission webhooks', () => {
    /** A fake whose Service test/hook:9443 is the test webhook. */
    async function withWebhook(answer: WebhookAnswer, webhook: Record<string, unknown> = {}) {
      const hook = await testWebhook(answer);
      const fake = await fakeFor({
        webhookServices: (namespace, name, port) => (namespace === 'test' && name === 'hook' && port === 9443 ? { host: '127.0.0.1', port: hook.port } : undefined),
      });
      fake.create(webhookConfiguration(hook.caBundle, webhook));
      return { fake, hook, networking: kubeConfigFor(fake).makeApiClient(NetworkingV1Api) };
    }

    it('sends a CREATE as an AdmissionReview v1 over HTTPS, verified with the caBundle for NAME.NAMESPACE.svc, with the timeout, and stores what it allows', async () => {
      const { fake, hook, networking } = await withWebhook((call) => allow(call));
      await networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') });
      expect(hook.calls).to.have.length(1);
      const [call] = hook.calls;
      expect(call!.path).to.equal('/validate?timeout=5s');
      expect(call!.servername).to.equal('hook.test.svc');
      const { review } = call!;
      expect(review).to.deep.include({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
      expect(review.request).to.deep.include({
        kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
        resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
        name: 'web',
        namespace: 'default',
        operation: 'CREATE',
        oldObject: null,
        dryRun: false,
      });
      expect(review.request.uid).to.match(/^[0-9a-f-]{36}$/);
      // What the webhook judges is the object as it would be stored: server-set metadata included.
      expect(review.request.object!.metadata).to.include.keys('uid', 'creationTimestamp');
      expect(fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name: 'web' })).to.not.equal(undefined);
    });

    it('refuses what the webhook denies as ToStatusErr words it (its status, the code raised to 400, no reason it did not give), and stores nothing', async () => {
      const { fake, networking } = await withWebhook((call) => deny(call, 'spec.rules[0].host: invalid host'));
      const { code, status } = await failure(networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(code).to.equal(400);
      expect(status).to.deep.equal({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'admission webhook "ingresses.check.example.com" denied the request: spec.rules[0].host: invalid host',
        code: 400,
      });
      expect(fake.list('networking.k8s.io/v1', 'Ingress')).to.deep.equal([]);
    });

    it('sends an update or patch as an UPDATE with the stored object, passes the warnings back as Warning headers, and never sends the status subresource', async () => {
      const { fake, hook } = await withWebhook((call) => allow(call, { warnings: ['route "a" is "held"'] }));
      fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', ...ingress('web') } as KubeObject);
      const response = await fetch(`${fake.url}/apis/networking.k8s.io/v1/namespaces/default/ingresses/web`, {
        method: 'PATCH',
        headers: { authorization: fake.authorization, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { tier: 'web' } } }),
      });
      expect(response.status).to.equal(200);
      expect(response.headers.get('warning')).to.equal('299 - "route \\"a\\" is \\"held\\""');
      expect(hook.calls.map((call) => call.review.request['operation'])).to.deep.equal(['UPDATE']);
      expect(hook.calls[0]!.review.request.oldObject!.metadata?.['labels']).to.equal(undefined);
      expect(hook.calls[0]!.review.request.object!.metadata?.['labels']).to.deep.equal({ tier: 'web' });
      const statusWrite = await rawCall(
        fake,
        'PATCH',
        '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web/status',
        { status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } },
        'application/merge-patch+json',
      );
      expect(statusWrite.status).to.equal(200);
      expect(hook.calls).to.have.length(1);
    });

    it('calls only webhooks whose rules, object selector and match conditions apply', async () => {
      const { fake, hook, networking } = await withWebhook((call) => deny(call, 'no'), {
        objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
        matchConditions: [{ name: 'class', expression: "has(object.spec.ingressClassName) && object.spec.ingressClassName == 'haproxy'" }],
      });
      await networking.createNamespacedIngress({ namespace: 'default', body: ingress('other-class') });
      await networking.createNamespacedIngress({
        namespace: 'default',
        body: { ...ingress('skipped'), metadata: { name: 'skipped', namespace: 'default', labels: { skip: 'yes' } }, spec: { ...ingress('x').spec, ingressClassName: 'haproxy' } },
      });
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('not-a-rule') });
      expect(hook.calls).to.deep.equal([]);
      const { code } = await failure(
        networking.createNamespacedIngress({ namespace: 'default', body: { ...ingress('judged'), spec: { ...ingress('x').spec, ingressClassName: 'haproxy' } } }),
      );
      // Denied with no code of the webhook's: ToStatusErr's 400.
      expect(code).to.equal(400);
      expect(hook.calls).to.have.length(1);
    });

    it('applies the failurePolicy to a match condition that cannot be evaluated: Fail refuses with 403, Ignore skips the webhook', async () => {
      const condition = { matchConditions: [{ name: 'class', expression: "object.spec.ingressClassName == 'haproxy'" }] };
      const failing = await withWebhook((call) => allow(call), condition);
      const refused = await failure(failing.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(refused.code).to.equal(403);
      expect(String(refused.status['message'])).to.match(/^ingresses\.networking\.k8s\.io "web" is forbidden: class: /);
      const ignoring = await withWebhook((call) => deny(call, 'no'), { ...condition, failurePolicy: 'Ignore' });
      await ignoring.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') });
      expect(ignoring.hook.calls).to.deep.equal([]);
    });

    it('applies the failurePolicy when the webhook cannot be called: Fail refuses with 500, Ignore admits', async () => {
      const failing = await withWebhook((call) => allow(call), { clientConfig: { service: { namespace: 'test', name: 'gone', port: 9443 } } });
      const refused = await failure(failing.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(refused.code).to.equal(500);
      expect(refused.status['message']).to.match(/^Internal error occurred: failed calling webhook "ingresses\.check\.example\.com": /);
      const ignoring = await withWebhook((call) => allow(call), { clientConfig: { service: { namespace: 'test', name: 'gone', port: 9443 } }, failurePolicy: 'Ignore' });
      await ignoring.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') });
      expect(ignoring.fake.list('networking.k8s.io/v1', 'Ingress')).to.have.length(1);
    });

    it('trusts only the caBundle: a webhook whose certificate it does not verify is a failure to call it', async () => {
      const other = generateCertificate({ dnsNames: ['hook.test.svc'] });
      const { networking, hook } = await withWebhook((call) => allow(call), {
        clientConfig: { service: { namespace: 'test', name: 'hook', port: 9443, path: '/validate' }, caBundle: Buffer.from(other.ca).toString('base64') },
      });
      const { code, status } = await failure(networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(code).to.equal(500);
      expect(String(status['message'])).to.include('failed calling webhook');
      expect(hook.calls).to.deep.equal([]);
    });

    it('gives up on a webhook after timeoutSeconds, and on an answer for another uid', async () => {
      const slow = await withWebhook(() => 'hang', { timeoutSeconds: 1 });
      const started = Date.now();
      const timedOut = await failure(slow.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(timedOut.code).to.equal(500);
      expect(Date.now() - started).to.be.within(900, 4000);
      const confused = await withWebhook(() => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'another', allowed: true } }));
      const invalid = await failure(confused.networking.createNamespacedIngress({ namespace: 'default', body: ingress('web') }));
      expect(invalid.code).to.equal(500);
      expect(String(invalid.status['message'])).to.include('received invalid webhook response: expected response.uid=');
    });

    it('calls a webhook on a dry run only when it has no side effects, and never for webhook configurations', async () => {
      const { fake, hook } = await withWebhook((call) => deny(call, 'no'), { sideEffects: 'Some' });
      const dryRun = await rawCall(fake, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses?dryRun=All', ingress('web'));
      expect(dryRun.status).to.equal(400);
      expect(dryRun.body['message']).to.equal('admission webhook "ingresses.check.example.com" does not support dry run');
      const configuration = await rawCall(fake, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
        ...webhookConfiguration(''),
        metadata: { name: 'second' },
      });
      expect(configuration.status).to.equal(201);
      expect(hook.calls).to.deep.equal([]);
    });

    it('makes kubectl print the denial, and its warnings', async () => {
      const { fake } = await withWebhook((call) =>
        call.review.request.name === 'bad' ? deny(call, 'spec.rules[0].host: invalid host') : allow(call, { warnings: ['route not served here'] }),
      );
      const directory = await mkdtemp(join(tmpdir(), 'kubectl-admission-'));
      closers.push(() => rm(directory, { recursive: true, force: true }));
      const manifest = (name: string) =>
        `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  defaultBackend:\n    service:\n      name: web\n      port:\n        number: 80\n`;
      await writeFile(join(directory, 'bad.yaml'), manifest('bad'));
      await writeFile(join(directory, 'good.yaml'), manifest('good'));
      const bad = await kubectl(fake, 'apply', '-f', join(directory, 'bad.yaml'));
      expect(bad.code).to.equal(1);
      // No reason in the webhook's status, so none in the server's: kubectl names none.
      expect(bad.stderr).to.include('Error from server: error when creating');
      expect(bad.stderr).to.include(': admission webhook "ingresses.check.example.com" denied the request: spec.rules[0].host: invalid host');
      const good = await kubectl(fake, 'apply', '-f', join(directory, 'good.yaml'));
      expect(good.code).to.equal(0);
      expect(good.stderr).to.include('Warning: route not served here');
      expect(good.stdout).to.equal('ingress.networking.k8s.io/good created\n');
    });
  });

  describe('custom resources and the in-process API', () => {
    it('serves a custom resource type through CustomObjectsApi: type fields on list items, generation, status subresource', async () => {
      const fake = await fakeFor({
        customResources: [{ group: 'example.com', version: 'v1alpha1', kind: 'Route', plural: 'routes', namespaced: true, statusSubresource: true, selectableFields: ['spec.host'] }],
      });
      const custom = kubeConfigFor(fake).makeApiClient(CustomObjectsApi);
      const where = { group: 'example.com', version: 'v1alpha1', namespace: 'default', plural: 'routes' };
      const created = (await custom.createNamespacedCustomObject({
        ...where,
        body: { apiVersion: 'example.com/v1alpha1', kind: 'Route', metadata: { name: 'r' }, spec: { host: 'a' }, status: { ready: true } },
      })) as KubeObject;
      expect(created.metadata?.['generation']).to.equal(1);
      expect(created['status']).to.equal(undefined);
      const updated = (await custom.patchNamespacedCustomObject(
        { ...where, name: 'r', body: { spec: { host: 'b' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as KubeObject;
      expect(updated.metadata?.['generation']).to.equal(2);
      const listed = (await custom.listNamespacedCustomObject({ ...where, fieldSelector: 'spec.host=b' })) as { kind: string; items: KubeObject[] };
      expect(listed.kind).to.equal('RouteList');
      expect(listed.items.map((item) => item.kind)).to.deep.equal(['Route']);
      expect(() => fake.registerCustomResource({ group: 'example.com', version: 'v1alpha1', kind: 'Other', plural: 'routes', namespaced: true })).to.throw(/already registered/);
      expect(() => fake.registerCustomResource({ group: 'example.com', version: 'v1', kind: 'bad', plural: 'bads', namespaced: true })).to.throw(/kind must be CamelCase/);
    });

    it('writes in-process through the same rules: watchers see the writes, errors are StatusErrors with the HTTP code', async () => {
      const fake = await fakeFor();
      const watch = await watchRaw(fake, '/api/v1/namespaces/default/services', { resourceVersion: String(fake.resourceVersion) });
      const service = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'web' }, spec: { ports: [{ port: 80 }] } };
      const created = fake.create(service);
      expect(() => fake.create(service))
        .to.throw(StatusError)
        .with.property('code', 409);
      fake.updateStatus({ ...created, status: { loadBalancer: { ingress: [{ ip: '10.0.0.9' }] } } });
      expect(() => fake.update(created))
        .to.throw(StatusError)
        .with.property('code', 409);
      fake.upsert({ ...service, spec: { ports: [{ port: 81 }] } });
      fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'web' }, { metadata: { labels: { a: 'b' } } });
      fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'web' });
      expect(() => fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'web' }))
        .to.throw(StatusError)
        .with.property('code', 404);
      expect(() => fake.create({ apiVersion: 'v9', kind: 'Nothing', metadata: { name: 'x' } })).to.throw('the fake API server serves no kind "Nothing" in "v9"');
      await eventually(
        async () => watch.events.length,
        (count) => count === 5,
        'five events',
      );
      expect(names(watch.events)).to.deep.equal(['ADDED web', 'MODIFIED web', 'MODIFIED web', 'MODIFIED web', 'DELETED web']);
    });

    it('close() ends every open watch and connection', async () => {
      const fake = await startFakeApiServer();
      const core = kubeConfigFor(fake).makeApiClient(CoreV1Api);
      const watch = await watchRaw(fake, '/api/v1/namespaces/default/pods', {});
      await fake.close();
      await eventually(
        async () => watch.ended(),
        (ended) => ended !== undefined,
        'the watch to end',
      );
      let refused: unknown;
      await core.listNamespace().catch((error: unknown) => (refused = error));
      expect(String(refused)).to.match(/ECONNREFUSED|fetch failed/);
    });
  });
});
