import { expect } from 'chai';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import type { Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { classIngress, service, tlsSecret } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { chartReplicaOptions, configOnPorts, controllerObjects, createHaproxyPod, haproxyAt, startChartCluster, type ChartCluster } from '../support/real-cluster.ts';
import { LEAF_CERT, UNRELATED_KEY } from '../support/tls-fixture.ts';
import { httpGet, OutcomeLog } from '../support/traffic.ts';

/**
 * The admission webhook called by a real kube-apiserver: the chart's
 * ValidatingWebhookConfiguration and Services applied with kubectl, two
 * replicas under the chart's RBAC generating the certificate into the
 * chart's Secret and setting the caBundle, and the API server reaching them
 * through the webhook Service's EndpointSlices (written here, as the
 * EndpointSlice controller would for ready pods, with pod addresses the
 * control plane's cluster network maps to the replicas' loopback ports),
 * verifying them with that caBundle, when the real kubectl applies objects.
 */

const POD_ADDRESS = '127.0.0.23';
/** The controller pods' addresses in the cluster network the control plane stands in for (TEST-NET-1: never dialled, only mapped). */
const CONTROLLER_POD_ADDRESSES: Readonly<Record<string, string>> = { 'controller-a': '192.0.2.10', 'controller-b': '192.0.2.11' };

describe('admission webhook called by a real kube-apiserver: kubectl, the chart, two replicas serving it', function () {
  this.timeout(180_000);
  let cluster: ChartCluster;
  let emulator: Emulator;
  let httpPort = 0;
  let webhookService = '';
  const replicas: { name: string; mode: ClusterMode; log: OutcomeLog }[] = [];
  /** Where each replica's webhook listens on loopback, by its pod address. */
  const webhookListeners = new Map<string, number>();

  const apply = (file: string, text: string) => cluster.apply(file, text);
  /** Until HAProxy routes `host` (to a backend without servers: 503), or knows it not (404). */
  const routed = (host: string, yes = true) =>
    eventually(
      () => httpGet(POD_ADDRESS, httpPort, host),
      (answer) => (yes ? /^503 / : /^404 /).test(answer),
      `${host} ${yes ? 'routed' : 'unknown'}`,
      30_000,
    );
  const caBundles = async () =>
    (
      (await cluster.plane.read('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', webhookService))?.['webhooks'] as { clientConfig: { caBundle?: string } }[] | undefined
    )?.map((hook) => hook.clientConfig.caBundle);
  /** The replica's endpoint in the webhook Service, as the EndpointSlice controller writes one per ready pod. */
  const endpointSlice = (name: string) =>
    JSON.stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { namespace: cluster.namespace, name: `${webhookService}-${name}`, labels: { 'kubernetes.io/service-name': webhookService } },
      addressType: 'IPv4',
      ports: [{ name: 'webhook', port: 9443, protocol: 'TCP' }],
      endpoints: [{ addresses: [CONTROLLER_POD_ADDRESSES[name]!], conditions: { ready: true } }],
    });

  before(async function () {
    // A cold cache builds kube-apiserver first (minutes); .ci/run builds it before the suite.
    this.timeout(45 * 60_000);
    cluster = await startChartCluster(
      {},
      {
        extraKinds: ['Service', 'ValidatingWebhookConfiguration'],
        clusterNetwork: (host, port) => {
          const listener = webhookListeners.get(host);
          return port === 9443 && listener !== undefined ? { host: '127.0.0.1', port: listener } : undefined;
        },
      },
    );
    webhookService = String(cluster.flags['webhook-service']);
    httpPort = await reservePort(POD_ADDRESS);
    const dataplanePort = await reservePort(POD_ADDRESS);
    emulator = await haproxyAt(POD_ADDRESS, dataplanePort);
    const config = configOnPorts(cluster.chart, {
      '  httpPort: 80\n': `  httpPort: ${httpPort}\n`,
      '  statusPort: 8404\n': `  statusPort: ${await reservePort(POD_ADDRESS)}\n`,
      '  port: 5555\n': `  port: ${dataplanePort}\n`,
      '  minDeploymentInterval: 2s\n': '  minDeploymentInterval: 200ms\n',
      'debounce: 500ms\n': 'debounce: 100ms\n',
    });
    const objects = await apply('controller.yaml', controllerObjects(cluster, config, emulator.credentials));
    if (objects.code !== 0) throw new Error(objects.stderr);
    await createHaproxyPod(cluster, 'haproxy-0', POD_ADDRESS);
    for (const name of ['controller-a', 'controller-b']) {
      const mode = await startClusterMode(await chartReplicaOptions(cluster, name));
      const port = await mode.webhookPort!;
      replicas.push({ name, mode, log: new OutcomeLog(mode.outcomes) });
      webhookListeners.set(CONTROLLER_POD_ADDRESSES[name]!, port);
      if (name === 'controller-a') await firstValueFrom(mode.leading.pipe(filter(Boolean)));
      const added = await apply(`endpoints-${name}.yaml`, endpointSlice(name));
      if (added.code !== 0) throw new Error(added.stderr);
    }
    // A Service without endpoints: the API server refuses loopback addresses in EndpointSlices, and HAProxy may reach no other.
    const web = await apply('web.yaml', service('web', [{ port: 80, targetPort: 8080 }]));
    if (web.code !== 0) throw new Error(web.stderr);
  });

  after(async () => {
    for (const { mode } of replicas) await mode.stop();
    await emulator?.stop();
    await cluster?.stop();
  });

  it("generates one certificate into the chart's Secret for every replica, and sets its CA as the caBundle", async () => {
    const secret = await eventually(
      () => cluster.plane.read('v1', 'Secret', String(cluster.flags['webhook-secret']), cluster.namespace),
      (found) => found !== undefined,
      'the generated Secret',
      15_000,
    );
    const ca = (secret!['data'] as Record<string, string>)['ca.crt'];
    expect(ca).to.be.a('string');
    const bundles = await eventually(caBundles, (found) => found !== undefined && found.every((bundle) => bundle === ca), 'the caBundle', 15_000);
    expect(bundles).to.deep.equal([ca, ca]);
  });

  it('admits a good Ingress of the class, which HAProxy then routes', async () => {
    const from = replicas[0]!.log.mark();
    const applied = await apply('good.yaml', classIngress('good', 'good.example.com', '/'));
    // The webhook's warning, printed by kubectl: the Service has no endpoints here.
    expect(applied).to.deep.include({
      code: 0,
      stdout: 'ingress.networking.k8s.io/good created\n',
      stderr: 'Warning: spec.rules[0].http.paths[0]: backend default_web_80 has no servers: Service default/web has no EndpointSlices\n',
    });
    await replicas[0]!.log.deployedOn(from, [`${cluster.namespace}/haproxy-0`]);
    await routed('good.example.com');
  });

  it('refuses a bad Ingress at kubectl apply, naming the field, and it never reaches HAProxy', async () => {
    const refused = await apply('bad.yaml', classIngress('bad', 'bad.example.com', '/shop"'));
    expect(refused.code).to.equal(1);
    // The webhook's status as ToStatusErr passes it on: its 403 and reason, no "is forbidden" of the server's.
    expect(refused.stderr).to.equal(
      `Error from server (Forbidden): error when creating "${join(cluster.manifests, 'bad.yaml')}": admission webhook "ingresses.networking.k8s.io.webhook.haproxy-template-ic.io" denied the request: spec.rules[0].http.paths[0].path: invalid path: "/shop\\"" has characters outside A-Z a-z 0-9 - . _ ~ ! & * + = : @ / and %XX percent-encodings\n`,
    );
    expect((await cluster.plane.kubectl('get', 'ingress', 'bad', '-n', 'default')).stderr).to.include('ingresses.networking.k8s.io "bad" not found');
    const from = replicas[0]!.log.mark();
    await apply('after.yaml', classIngress('after', 'after.example.com', '/'));
    await replicas[0]!.log.deployedOn(from, [`${cluster.namespace}/haproxy-0`]);
    await routed('after.example.com');
    expect(await httpGet(POD_ADDRESS, httpPort, 'bad.example.com', '/shop')).to.match(/^404 /);
  });

  it("stores another class's Ingress as written: the matchConditions keep it from the webhook", async () => {
    const applied = await apply('nginx.yaml', classIngress('other', 'other.example.com', '/shop"', 'nginx'));
    expect(applied).to.deep.include({ code: 0, stdout: 'ingress.networking.k8s.io/other created\n' });
  });

  it('admits with a warning kubectl prints what will be served otherwise than asked', async () => {
    const applied = await apply('late.yaml', classIngress('late', 'good.example.com', '/', 'haproxy', 'default', 'legacy'));
    expect(applied.code).to.equal(0);
    // creationTimestamp has whole seconds: created within the second of good, late is as old, and second by namespace/name.
    expect(applied.stderr).to.match(
      /^Warning: spec\.rules\[0\]\.http\.paths\[0\]: route "good\.example\.com\/" not served here: (older Ingress default\/good|Ingress default\/good, as old and first by namespace\/name,)/m,
    );
  });

  it("refuses a TLS Secret an Ingress of the class uses when its key is not the certificate's", async () => {
    await apply('tls-user.yaml', classIngress('secure', 'secure.example.com', '/').replace('  rules:', '  tls: [ { hosts: [secure.example.com], secretName: secure-tls } ]\n  rules:'));
    const refused = await apply('secure-tls.yaml', tlsSecret('secure-tls', LEAF_CERT, UNRELATED_KEY));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('admission webhook "secrets.core.webhook.haproxy-template-ic.io" denied the request: data[tls.key]: ');
  });

  it('goes on judging when the leader stops, its endpoint taken out of the Service first as for a terminating pod', async () => {
    const leader = replicas.shift()!;
    await cluster.plane.kubectlOk('delete', 'endpointslice', `${webhookService}-${leader.name}`, '-n', cluster.namespace);
    await leader.mode.stop();
    const refused = await apply('bad-again.yaml', classIngress('bad-again', 'bad.example.com', '/x y'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('denied the request: spec.rules[0].http.paths[0].path: invalid path');
  });
});
