import { kubeConnectionFromFile } from '../../lib/kube/kube-connection.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSettings } from '../../lib/cli/run-settings.ts';
import type { ClusterModeOptions } from '../../streams/cluster-mode.ts';
import { container, type Workload } from '../chart/manifests.ts';
import { renderChart, type Manifest, type RenderedChart } from '../chart/helm.ts';
import { startEmulator, type Emulator } from './dataplane-emulator/index.ts';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions, type ServiceAccountRef } from './kube-control-plane.ts';
import { reservePort } from './ports.ts';

/**
 * The chart installed into a real control plane as far as one can be
 * without a kubelet: its ServiceAccount, RBAC and (when asked)
 * ValidatingWebhookConfiguration applied with the real kubectl, its
 * ConfigMap and credentials Secret, and controller replicas started
 * in-process with the settings its Deployment gives them (args and env),
 * authenticated as its ServiceAccount, so a permission the chart lacks fails.
 * HAProxy pods are Pods whose status the spec writes (no kubelet), each
 * served by a Data Plane API emulator with a real HAProxy at its pod address.
 */

/** The kinds of the chart that take effect without a kubelet. */
const RBAC_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

export interface ChartCluster {
  readonly plane: ControlPlane;
  readonly chart: RenderedChart;
  readonly namespace: string;
  readonly serviceAccount: ServiceAccountRef;
  /** The controller's arguments and environment from the chart's Deployment. */
  readonly flags: Record<string, string | true>;
  readonly env: Record<string, string>;
  /** A folder for manifests the spec applies, removed by stop(). */
  readonly manifests: string;
  /** Writes `text` to a file and applies it with kubectl as the admin. */
  apply(file: string, text: string): ReturnType<ControlPlane['kubectl']>;
  stop(): Promise<void>;
}

const asYaml = (manifests: readonly object[]) => manifests.map((manifest) => JSON.stringify(manifest)).join('\n---\n');

/** Renders the chart, starts a control plane with a token for its ServiceAccount, and applies its RBAC (and `extraKinds`). */
export async function startChartCluster(
  values: object = {},
  options: ControlPlaneOptions & { readonly extraKinds?: readonly string[]; readonly namespaces?: readonly string[] } = {},
): Promise<ChartCluster> {
  const chart = await renderChart(values);
  const account = chart.one('ServiceAccount', '-haproxy-template-ic');
  const namespace = account.metadata.namespace!;
  const serviceAccount = { namespace, name: account.metadata.name };
  const plane = await startControlPlane({ ...options, serviceAccounts: [...(options.serviceAccounts ?? []), serviceAccount] });
  const manifests = await mkdtemp(join(tmpdir(), 'real-apiserver-'));
  const apply = async (file: string, text: string) => {
    await writeFile(join(manifests, file), text);
    return plane.kubectl('apply', '-f', join(manifests, file));
  };
  try {
    const namespaces = [namespace, ...(options.namespaces ?? [])].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    const installed = chart.manifests.filter((manifest) => RBAC_KINDS.includes(manifest.kind) || (options.extraKinds ?? []).includes(manifest.kind));
    // The controller's ServiceAccount only: the HAProxy pods' one belongs to pods that do not run here.
    const ours = installed.filter((manifest: Manifest) => manifest.kind !== 'ServiceAccount' || manifest.metadata.name === serviceAccount.name);
    for (const [file, objects] of [
      ['namespaces.yaml', namespaces],
      ['chart.yaml', ours],
    ] as const) {
      const result = await apply(file, asYaml(objects));
      if (result.code !== 0) throw new Error(`kubectl apply of the chart's ${file} failed:\n${result.stderr}`);
    }
  } catch (error) {
    await plane.stop();
    throw error;
  }
  const deployment = container(chart.one('Deployment') as Workload, 'controller');
  const flags: Record<string, string | true> = Object.fromEntries(
    (deployment.args ?? []).slice(1).map((arg) => [arg.slice(2).split('=')[0]!, arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (true as const)]),
  );
  const env = Object.fromEntries(
    ((deployment as { env?: { name: string; value?: string }[] }).env ?? []).flatMap((variable) => (variable.value === undefined ? [] : [[variable.name, variable.value]])),
  );
  return {
    plane,
    chart,
    namespace,
    serviceAccount,
    flags,
    env,
    manifests,
    apply,
    stop: async () => {
      await plane.stop();
      await rm(manifests, { recursive: true, force: true });
    },
  };
}

/**
 * A replica as the chart's Deployment runs it (its flags and env; this
 * pod's name as the identity), as the chart's ServiceAccount; health,
 * metrics and the webhook on free loopback ports; `overrides` for the rest.
 */
export async function chartReplicaOptions(cluster: ChartCluster, identity: string, overrides: Partial<ClusterModeOptions> = {}): Promise<ClusterModeOptions> {
  const settings = runSettings(cluster.flags, { ...cluster.env, POD_NAMESPACE: cluster.namespace, POD_NAME: identity }, undefined);
  const kubeConnection = kubeConnectionFromFile(cluster.plane.kubeconfigFor(cluster.serviceAccount));
  const show = (text: string) => void (process.env['DEBUG_E2E'] && process.stdout.write(`${identity} ${text}`));
  return {
    ...settings,
    kubeConnection,
    bindAddress: '127.0.0.1',
    healthPort: 0,
    metricsPort: 0,
    webhook: settings.webhook === undefined ? undefined : { ...settings.webhook, port: await reservePort() },
    output: { out: show, err: show },
    ...overrides,
  };
}

/** The chart's ConfigMap with the configuration's ports moved onto reserved ones; fails when a line to move is gone. */
export function configOnPorts(chart: RenderedChart, replacements: Readonly<Record<string, string>>): string {
  const configMap = chart.all('ConfigMap').find((manifest) => (manifest['data'] as Record<string, string> | undefined)?.['config.yaml'] !== undefined);
  if (configMap === undefined) throw new Error('the chart renders no ConfigMap with config.yaml');
  let text = (configMap['data'] as Record<string, string>)['config.yaml']!;
  for (const [from, to] of Object.entries(replacements)) {
    if (!text.includes(from)) throw new Error(`the chart's config.yaml has no ${JSON.stringify(from)} to replace`);
    text = text.replace(from, to);
  }
  return text;
}

/** The chart's ConfigMap and credentials Secret, as the controller reads them, with this configuration. */
export function controllerObjects(cluster: ChartCluster, config: string, credentials: { readonly user: string; readonly password: string }): string {
  const settings = runSettings(cluster.flags, { ...cluster.env, POD_NAMESPACE: cluster.namespace, POD_NAME: 'x' }, undefined);
  return asYaml([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: cluster.namespace, name: settings.configMap }, data: { 'config.yaml': config } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: cluster.namespace, name: settings.credentialsSecret },
      stringData: { dataplane_username: credentials.user, dataplane_password: credentials.password },
    },
  ]);
}

/**
 * A HAProxy pod as the chart's StatefulSet makes one, Running and ready at
 * `podIP`: created, then its status written through the status subresource
 * as a kubelet would (none runs here).
 */
export async function createHaproxyPod(cluster: ChartCluster, name: string, podIP: string): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: cluster.namespace, name, labels: { 'app.kubernetes.io/name': 'haproxy' } },
    spec: {
      containers: [
        { name: 'haproxy', image: 'haproxy' },
        { name: 'dataplaneapi', image: 'haproxy' },
      ],
    },
  };
  const created = await cluster.apply(`pod-${name}.yaml`, JSON.stringify(pod));
  if (created.code !== 0) throw new Error(`creating Pod ${name} failed:\n${created.stderr}`);
  const status = {
    status: {
      phase: 'Running',
      podIP,
      podIPs: [{ ip: podIP }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: ['haproxy', 'dataplaneapi'].map((containerName) => ({
        name: containerName,
        ready: true,
        image: 'haproxy',
        imageID: '',
        restartCount: 0,
        started: true,
        state: { running: { startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } },
      })),
    },
  };
  await cluster.plane.kubectlOk('patch', 'pod', name, '-n', cluster.namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify(status));
}

/** A Data Plane API emulator with a real HAProxy at `address`, on `port`. */
export function haproxyAt(address: string, port: number): Promise<Emulator> {
  return startEmulator({ pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address }, listen: { host: address, port } });
}
