/**
 * Fan-out benchmark for the Data Plane API path: the same deployment to 1, 5
 * and 20 emulated instances (each a real HAProxy behind the emulated API),
 * at most `maxParallel` (10, the default) at once as the deploy stage runs
 * them. Prints the wall time relative to one instance for a runtime-only
 * change and for a reload, and the HTTP requests one deployment costs per
 * instance. Target: 20 instances cost no more than twice one instance.
 */
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import { dataplaneFleet } from '../lib/dataplane/fleet.ts';
import type { KubeObject, RenderedFiles } from '../lib/pipeline/model.ts';
import { contentHash } from '../lib/pipeline/content-hash.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { Worker } from 'node:worker_threads';

const sizes = process.env['BENCH_FLEET_SIZES']?.split(',').map(Number) ?? [1, 5, 20];
const maxParallel = 10;
const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8').replace('  httpPort: 80\n', '  httpPort: 18790\n').replace('  statusPort: 8404\n', '  statusPort: 18791\n'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

/** Twenty Ingresses, each with a Service and one endpoint; `endpoints` gives the first Service more (a runtime change). */
function world(endpoints: number): Map<string, KubeObject[]> {
  const range = Array.from({ length: 20 }, (_, i) => i);
  return new Map<string, KubeObject[]>([
    ['ingresses', range.map((i) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `app-${i}`, namespace: 'default' }, spec: { ingressClassName: 'haproxy', rules: [{ host: `app-${i}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } }] } }] } }))],
    ['services', range.map((i) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'default' }, spec: { ports: [{ port: 80, targetPort: 8080 }] } }))],
    ['endpointslices', range.map((i) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `svc-${i}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${i}` } }, addressType: 'IPv4', ports: [{ port: 8080 }], endpoints: Array.from({ length: i === 0 ? endpoints : 1 }, (_, j) => ({ addresses: [`127.1.${i}.${j + 1}`] })) }))],
  ]);
}

function render(endpoints: number): { files: RenderedFiles; hash: string } {
  const { files } = createRenderer(config)({ stores: buildStores(config.watchedResources, world(endpoints), config.ignoreFields) });
  return { files, hash: contentHash(files) };
}

/** Runs every task, at most `limit` at once; resolves when all are done. */
async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

interface Row {
  readonly instances: number;
  readonly reloadMs: number;
  readonly runtimeMs: number;
  readonly reloadRequests: number;
  readonly runtimeRequests: number;
}

interface RemoteEmulator {
  readonly url: string;
  readonly credentials: { readonly user: string; readonly password: string };
  readonly requests: () => Promise<number>;
  readonly stop: () => Promise<void>;
}

function reply(worker: Worker, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (message['type'] !== type) return;
      worker.off('message', onMessage);
      resolve(message);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
}

async function startRemoteEmulator(address: string): Promise<RemoteEmulator> {
  const worker = new Worker(new URL('./emulator-worker.ts', import.meta.url), { workerData: { pod: { ...pod, address } } });
  const ready = await reply(worker, 'ready');
  return {
    url: ready['url'] as string,
    credentials: ready['credentials'] as RemoteEmulator['credentials'],
    requests: async () => {
      const answer = reply(worker, 'requests');
      worker.postMessage({ type: 'requests' });
      return (await answer)['count'] as number;
    },
    stop: async () => {
      const answer = reply(worker, 'stopped');
      worker.postMessage({ type: 'stop' });
      await answer;
    },
  };
}

async function measure(instances: number): Promise<Row> {
  const emulators: RemoteEmulator[] = [];
  try {
    emulators.push(...(await Promise.all(Array.from({ length: instances }, (_, i) => startRemoteEmulator(`127.0.1.${i + 1}`)))));
    const { user, password } = emulators[0]!.credentials;
    const fleet = dataplaneFleet({ urls: emulators.map((e) => e.url), username: user, password });
    const requests = async () => (await Promise.all(emulators.map((e) => e.requests()))).reduce((sum, n) => sum + n, 0);
    const deployAll = async (target: { files: RenderedFiles; hash: string }, mode: string) => {
      const before = await requests();
      const start = performance.now();
      const results = await pool(fleet.endpoints.map((endpoint) => () => fleet.deploy(endpoint, target.files, target.hash, 'change')), maxParallel);
      const ms = performance.now() - start;
      const wrong = results.filter((result) => result.mode !== mode);
      if (wrong.length > 0) throw new Error(`${instances} instances: expected ${mode}, got ${wrong.map((r) => r.mode).join(', ')}`);
      return { ms, requests: ((await requests()) - before) / instances };
    };
    const first = await deployAll(render(1), 'reload');
    const runtime = await deployAll(render(2), 'runtime');
    await fleet.stop();
    return { instances, reloadMs: first.ms, runtimeMs: runtime.ms, reloadRequests: first.requests, runtimeRequests: runtime.requests };
  } finally {
    for (const emulator of emulators) await emulator.stop();
  }
}

const rows: Row[] = [];
for (const size of sizes) rows.push(await measure(size));
const one = rows[0]!;
const cells = [
  ['instances', 'reload ms', 'x one', 'runtime ms', 'x one', 'requests/instance (reload)', 'requests/instance (runtime)'],
  ...rows.map((row) => [
    String(row.instances),
    row.reloadMs.toFixed(0),
    (row.reloadMs / one.reloadMs).toFixed(2),
    row.runtimeMs.toFixed(0),
    (row.runtimeMs / one.runtimeMs).toFixed(2),
    row.reloadRequests.toFixed(1),
    row.runtimeRequests.toFixed(1),
  ]),
];
const widths = cells[0]!.map((_, c) => Math.max(...cells.map((row) => row[c]!.length)));
for (const row of cells) process.stdout.write(`${row.map((cell, c) => cell.padStart(widths[c]!)).join('  ')}\n`);
const largest = rows.at(-1)!;
const met = largest.reloadMs <= 2 * one.reloadMs && largest.runtimeMs <= 2 * one.runtimeMs;
process.stdout.write(`target: ${largest.instances} instances cost no more than twice one instance: ${met ? 'met' : 'NOT MET'}\n`);
