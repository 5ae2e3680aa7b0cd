import { kubeConnectionFromFile } from '../../lib/kube/kube-connection.ts';
import { readFile } from 'node:fs/promises';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { defaultInformerOptions } from '../../lib/kube/informer.ts';
import type { ClusterModeOptions } from '../../streams/cluster-mode.ts';
import { startEmulator, type Emulator } from './dataplane-emulator/index.ts';
import type { FakeApiServer, KubeObject } from './fake-apiserver/index.ts';
import { reservePort } from './ports.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A ready HAProxy pod as the chart runs it (haproxy and dataplaneapi containers), at `podIP`. */
export function createHaproxyPod(fake: FakeApiServer, namespace: string, name: string, podIP: string): KubeObject {
  const pod = fake.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels: { 'app.kubernetes.io/name': 'haproxy' } },
    spec: {
      containers: [
        { name: 'haproxy', image: 'haproxy' },
        { name: 'dataplaneapi', image: 'haproxy' },
      ],
    },
  });
  return fake.updateStatus({
    ...pod,
    status: {
      phase: 'Running',
      podIP,
      containerStatuses: [
        { name: 'haproxy', ready: true },
        { name: 'dataplaneapi', ready: true },
      ],
    },
  });
}

/** The controller's own objects: its namespace, the ConfigMap with `config.yaml`, the credentials Secret. */
export function createControllerObjects(
  fake: FakeApiServer,
  namespace: string,
  options: { readonly config: string; readonly secret: string; readonly username: string; readonly password: string },
): void {
  fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  fake.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name: 'haproxy-config' }, data: { 'config.yaml': options.config } });
  fake.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name: options.secret },
    data: { dataplane_username: b64(options.username), dataplane_password: b64(options.password) },
  });
}

/**
 * A replica of `run`'s mode against the fake, as the end-to-end specs start
 * them: the controller objects of createControllerObjects, leases of
 * `leaseMs`, health and metrics on free ports, informers on the fake's
 * clock, output only with DEBUG_E2E; `overrides` for the rest.
 */
export function replicaOptions(
  fake: FakeApiServer,
  namespace: string,
  identity: string,
  settings: { readonly leaseMs: number },
  overrides: Partial<ClusterModeOptions> = {},
): ClusterModeOptions {
  const kubeConnection = kubeConnectionFromFile(fake.kubeconfigPath);
  const show = (suffix: string) => (text: string) => void (process.env['DEBUG_E2E'] && process.stdout.write(`${identity}${suffix} ${text}`));
  return {
    kubeConnection,
    namespace,
    configMap: 'haproxy-config',
    credentialsSecret: 'dataplane-credentials',
    identity,
    lease: { name: 'haproxy-template-ic-leader', durationMs: settings.leaseMs, renewDeadlineMs: 2_000, retryMs: 250 },
    publishService: undefined,
    dataplaneTls: undefined,
    dataplaneContainer: 'dataplaneapi',
    bindAddress: '127.0.0.1',
    healthPort: 0,
    metricsPort: 0,
    // The production timings, on the server's clock.
    informer: { ...defaultInformerOptions, clock: fake.clock },
    output: { out: show(''), err: show(' ERR') },
    ...overrides,
  };
}

/**
 * One HAProxy pod behind a Data Plane API emulator at `podAddress`, and the
 * controller's objects naming it, with the shipped configuration on ports
 * reserved on that address and a 100ms debounce: the cluster a Gateway API
 * spec starts its controller in.
 */
export async function haproxyPodWithShippedConfig(fake: FakeApiServer, namespace: string, podAddress: string): Promise<Emulator> {
  const dataplanePort = await reservePort(podAddress);
  const emulator = await startEmulator({
    pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: podAddress },
    listen: { host: podAddress, port: dataplanePort },
  });
  const config = (await readFile(defaultConfigPath(), 'utf8'))
    .replace('  httpPort: 80\n', `  httpPort: ${await reservePort(podAddress)}\n`)
    .replace('  httpsPort: 443\n', `  httpsPort: ${await reservePort(podAddress)}\n`)
    .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(podAddress)}\n`)
    .replace('  port: 5555\n', `  port: ${dataplanePort}\n`)
    .replace('debounce: 500ms\n', 'debounce: 100ms\n');
  const { user, password } = emulator.credentials;
  createControllerObjects(fake, namespace, { config, secret: 'dataplane-credentials', username: user, password });
  createHaproxyPod(fake, namespace, 'haproxy-0', podAddress);
  return emulator;
}
