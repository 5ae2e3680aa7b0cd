import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { runSettings } from '../../lib/cli/run-settings.ts';
import type { WebhookSettings } from '../../lib/webhook/settings.ts';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import { renderChart, releaseName, releaseNamespace } from '../chart/helm.ts';
import { container } from '../chart/manifests.ts';
import type { Workload } from '../chart/manifests.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { createControllerObjects, createHaproxyPod, replicaOptions } from '../support/cluster-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { reservePort } from '../support/ports.ts';
import { startFakeApiServer, type FakeApiServer, type KubeObject } from '../support/fake-apiserver/index.ts';
import { kubeTool } from '../support/kube-tools.ts';
import { classIngress, documents, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, UNRELATED_KEY } from '../support/tls-fixture.ts';
import { httpGet, OutcomeLog, servedBy } from '../support/traffic.ts';

/**
 * The admission webhook end to end, as a cluster runs it: the chart's
 * ValidatingWebhookConfiguration in the fake API server, which calls the
 * webhook over HTTPS (verified with the caBundle the controller set) when
 * the real kubectl applies objects; two controller replicas with the
 * chart's webhook flags, both serving it; one HAProxy pod (a Data Plane
 * API emulator with a real HAProxy) and real HTTP through it.
 */

const NAMESPACE = releaseNamespace;
const SERVICE = `${releaseName}-haproxy-template-ic`;
const POD_ADDRESS = '127.0.0.7';
const SERVER_TIME_SCALE = 150;

function run(command: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }));
  });
}

describe('admission webhook: kubectl against the fake API server, two replicas serving it, a real HAProxy', function () {
  this.timeout(120_000);
  let fake: FakeApiServer;
  let emulator: Emulator;
  let stopBackends: () => Promise<void> = async () => undefined;
  let manifests = '';
  let httpPort = 0;
  let backend = 0;
  const replicas: { name: string; mode: ClusterMode; log: OutcomeLog; port: number; calls: number; up: boolean }[] = [];
  let next = 0;

  const kubectl = (...args: string[]) => run(kubeTool('kubectl'), ['--kubeconfig', fake.kubeconfigPath, ...args]);
  const apply = async (file: string, text: string) => {
    await writeFile(join(manifests, file), text);
    return kubectl('apply', '-f', join(manifests, file));
  };
  const caBundle = () =>
    (
      fake.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: SERVICE })?.['webhooks'] as
        | { clientConfig: { caBundle?: string } }[]
        | undefined
    )?.map((hook) => hook.clientConfig.caBundle);
  const renderedMaps = () => replicas.flatMap(({ log }) => log.since(0).flatMap((outcome) => (outcome.type === 'rendered' ? [JSON.stringify(outcome.files.maps)] : [])));

  before(async () => {
    // The Service the chart's configuration names is served by whichever replica is up, in turn, as a Service balances.
    fake = await startFakeApiServer({
      timeScale: SERVER_TIME_SCALE,
      webhookServices: (namespace, name, port) => {
        const up = replicas.filter((replica) => replica.up);
        if (namespace !== NAMESPACE || name !== SERVICE || port !== 9443 || up.length === 0) return undefined;
        const replica = up[next++ % up.length]!;
        replica.calls++;
        return { host: '127.0.0.1', port: replica.port };
      },
    });
    manifests = await mkdtemp(join(tmpdir(), 'webhook-e2e-'));
    httpPort = await reservePort(POD_ADDRESS);
    const dataplanePort = await reservePort(POD_ADDRESS);
    emulator = await startEmulator({
      pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: POD_ADDRESS },
      listen: { host: POD_ADDRESS, port: dataplanePort },
    });
    const started = await startBackends([0]);
    backend = started.ports[0]!;
    stopBackends = started.stop;
    const config = (await readFile(defaultConfigPath(), 'utf8'))
      .replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  port: 5555\n', `  port: ${dataplanePort}\n`)
      .replace('  minDeploymentInterval: 2s\n', '  minDeploymentInterval: 200ms\n')
      .replace('debounce: 500ms\n', 'debounce: 100ms\n');
    const { user, password } = emulator.credentials;
    createControllerObjects(fake, NAMESPACE, { config, secret: 'dataplane-credentials', username: user, password });
    createHaproxyPod(fake, NAMESPACE, 'haproxy-0', POD_ADDRESS);

    // The chart as installed: its ValidatingWebhookConfiguration, and the webhook flags of its Deployment.
    const chart = await renderChart({});
    fake.create(chart.one('ValidatingWebhookConfiguration') as unknown as KubeObject);
    const chartArgs = container(chart.one('Deployment') as Workload, 'controller').args ?? [];
    const flags = Object.fromEntries(chartArgs.slice(1).map((arg) => [arg.slice(2).split('=')[0]!, arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : true]));
    const chartWebhook: WebhookSettings = runSettings(flags, { POD_NAMESPACE: NAMESPACE, POD_NAME: 'x' }, undefined).webhook!;

    for (const name of ['controller-a', 'controller-b']) {
      const mode = await startClusterMode(replicaOptions(fake, NAMESPACE, name, { leaseMs: 3_000 }, { webhook: { ...chartWebhook, port: await reservePort() } }));
      const port = await mode.webhookPort!;
      replicas.push({ name, mode, log: new OutcomeLog(mode.outcomes), port, calls: 0, up: true });
      if (name === 'controller-a') await firstValueFrom(mode.leading.pipe(filter(Boolean)));
    }
    // Objects of other classes and TLS Secrets of the cluster, before anything judges them.
    await apply('web.yaml', documents(service('web', [{ port: 80, targetPort: backend }]), slice('web-0', 'web', undefined, backend)));
  });

  after(async () => {
    for (const { mode } of replicas) await mode.stop();
    await emulator?.stop();
    await stopBackends();
    await fake?.close();
    if (manifests) await rm(manifests, { recursive: true, force: true });
  });

  it("generates one certificate into the chart's Secret for every replica, and sets its CA as the caBundle", async () => {
    const secret = await eventually(
      async () => fake.get({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: `${SERVICE}-webhook-tls` }),
      (found) => found !== undefined,
      'the generated Secret',
    );
    const ca = (secret!['data'] as Record<string, string>)['ca.crt'];
    await eventually(
      async () => caBundle(),
      (bundles) => bundles !== undefined && bundles.every((bundle) => bundle === ca),
      'the caBundle',
    );
    expect(caBundle()).to.deep.equal([ca, ca]);
  });

  it('admits a good Ingress of the class, which HAProxy then serves', async () => {
    const from = replicas[0]!.log.mark();
    const calls = () => replicas.reduce((sum, replica) => sum + replica.calls, 0);
    const before = calls();
    const applied = await apply('good.yaml', classIngress('good', 'good.example.com', '/'));
    expect(applied).to.deep.include({ code: 0, stdout: 'ingress.networking.k8s.io/good created\n', stderr: '' });
    expect(calls()).to.equal(before + 1);
    await replicas[0]!.log.deployedOn(from, [`${NAMESPACE}/haproxy-0`]);
    await servedBy('good.example.com', [backend], [POD_ADDRESS], httpPort);
  });

  it('refuses a bad Ingress at kubectl apply, naming the field, and it never reaches HAProxy', async () => {
    const refused = await apply('bad.yaml', classIngress('bad', 'bad.example.com', '/shop"'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('Error from server (Forbidden): error when creating');
    expect(refused.stderr).to.include(
      '.yaml": admission webhook "ingresses.networking.k8s.io.webhook.haproxy-template-ic.io" denied the request: spec.rules[0].http.paths[0].path: invalid path: "/shop\\"" has characters outside',
    );
    expect((await kubectl('get', 'ingress', 'bad', '-n', 'default')).stderr).to.include('ingresses.networking.k8s.io "bad" not found');
    // Another change deploys; the refused host is in no configuration either replica rendered, and HAProxy does not know it.
    const from = replicas[0]!.log.mark();
    await apply('after.yaml', classIngress('after', 'after.example.com', '/'));
    await replicas[0]!.log.deployedOn(from, [`${NAMESPACE}/haproxy-0`]);
    await servedBy('after.example.com', [backend], [POD_ADDRESS], httpPort);
    expect(await httpGet(POD_ADDRESS, httpPort, 'bad.example.com', '/shop')).to.match(/^404 /);
    expect(renderedMaps().some((maps) => maps.includes('bad.example.com'))).to.equal(false);
  });

  it('leaves another class untouched: the API server never sends it, and it is stored as written', async () => {
    const callsBefore = replicas.reduce((sum, replica) => sum + replica.calls, 0);
    const applied = await apply('nginx.yaml', classIngress('other', 'other.example.com', '/shop"', 'nginx'));
    expect(applied).to.deep.include({ code: 0, stdout: 'ingress.networking.k8s.io/other created\n' });
    expect(replicas.reduce((sum, replica) => sum + replica.calls, 0)).to.equal(callsBefore);
  });

  it('admits with a warning kubectl prints what will be served otherwise than asked', async () => {
    const applied = await apply('late.yaml', classIngress('late', 'good.example.com', '/', 'haproxy', 'default', 'legacy'));
    expect(applied.code).to.equal(0);
    // creationTimestamp has whole seconds (the fake API server stamps as the real one): created within the second
    // of good, late is as old, and second by namespace/name.
    expect(applied.stderr).to.match(
      /^Warning: spec\.rules\[0\]\.http\.paths\[0\]: route "good\.example\.com\/" not served here: (older Ingress default\/good|Ingress default\/good, as old and first by namespace\/name,)/m,
    );
  });

  it('refuses a host another namespace holds, naming the owner', async () => {
    const refused = await apply('taken.yaml', classIngress('taken', 'good.example.com', '/', 'haproxy', 'kube-public'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('denied the request: spec.rules[0].host: host "good.example.com" belongs to namespace default');
  });

  it("refuses a TLS Secret an Ingress of the class uses when its key is not the certificate's", async () => {
    await apply('tls-user.yaml', classIngress('secure', 'secure.example.com', '/').replace('  rules:', '  tls: [ { hosts: [secure.example.com], secretName: secure-tls } ]\n  rules:'));
    const refused = await apply('secure-tls.yaml', tlsSecret('secure-tls', LEAF_CERT, UNRELATED_KEY));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('.yaml": admission webhook "secrets.core.webhook.haproxy-template-ic.io" denied the request: data[tls.key]: ');
  });

  it('is served by every replica, and goes on judging when the leader stops', async () => {
    expect(replicas.map((replica) => replica.calls > 0)).to.deep.equal([true, true]);
    const leader = replicas[0]!;
    leader.up = false;
    await leader.mode.stop();
    const refused = await apply('bad-again.yaml', classIngress('bad-again', 'bad.example.com', '/x y'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('denied the request: spec.rules[0].http.paths[0].path: invalid path');
  });
});
