/**
 * Fan-out benchmark for the Data Plane API path: the same deployments to 1,
 * 5 and 20 instances through the controller's own code (the deploy stage,
 * streams/deploy.ts, at most dataplane.maxParallel endpoints at once, each
 * through the Data Plane API fleet: clients, one convergence per instance, real HTTP).
 * Three deployments per fleet: the first one (cold cache, a reload), a
 * runtime-only change (one more endpoint) and a change that needs a reload
 * (one more Ingress). Prints each one's wall time relative to one instance,
 * the controller's CPU time, and the HTTP requests it costs per instance.
 * Target: 20 instances cost no more than twice one instance. With the
 * default maxParallel of 20 they deploy in one wave; with BENCH_MAX_PARALLEL
 * set lower, N instances take ceil(N / maxParallel) waves, and that many
 * times one instance is the floor: what is above it is the controller's own cost.
 *
 * Measured in two ways, because in production every instance is a machine
 * of its own, and here all of them share this machine's two cores:
 *
 * 1. Controller-side fan-out (the target's figure). Each instance is a
 *    stand-in (replayed-instance.ts) that answers every request exactly as a
 *    real instance (the emulator in front of a real HAProxy) answered it
 *    when it ran alone earlier in the same run, after as long as it took
 *    then. The instances' latency stays; their CPU work (haproxy -c on every
 *    write, reloads, runtime socket commands, 20 HAProxy processes) leaves
 *    this machine, as it does in a fleet. The stand-ins share one thread
 *    (replay-worker.ts) and answer on time to about 0.1 ms (answer-clock.ts),
 *    so the controller's thread does its own work only; its CPU time
 *    (process.threadCpuUsage) is printed too. Other ways were weighed: CPU
 *    pinning or cgroups cannot make 2 cores stand for 20 machines (and the
 *    cgroup hierarchy is read-only here), and fixed latencies without the
 *    recorded answers could not drive the real convergence.
 * 2. Everything on this machine: 20 emulators, each driving its own real
 *    HAProxy, compete with the controller for the same 2 cores. This grows
 *    with the instances' own work; it is not a fan-out figure.
 *
 * Each cell is the median of BENCH_SAMPLES runs (default 3), each on fresh
 * instances. BENCH_FLEET_SIZES (default 1,5,20) must start with 1;
 * BENCH_MAX_PARALLEL overrides dataplane.maxParallel. Every address is
 * loopback: the APIs on 127.0.0.1, the emulated pods on 127.0.1.x, the
 * rendered servers on 127.1.x.x.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { defer, firstValueFrom, Subject, take, toArray } from 'rxjs';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import { dataplaneFleet } from '../lib/deploy/dataplane-fleet.ts';
import { contentHash } from '../lib/pipeline/content-hash.ts';
import type { DeployMode, FleetCommand, KubeObject, Validated } from '../lib/pipeline/model.ts';
import type { DeployOutcome } from '../lib/pipeline/outcome.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import type { Exchange } from '../spec/support/dataplane-emulator/index.ts';
import { reservePort } from '../spec/support/ports.ts';
import { deploy } from '../streams/deploy.ts';
import { scriptOf, type ScriptedAnswer } from './replayed-instance.ts';

const sizes = (process.env['BENCH_FLEET_SIZES'] ?? '1,5,20').split(',').map(Number);
if (sizes[0] !== 1 || !sizes.every((size) => Number.isInteger(size) && size > 0)) {
  throw new Error(`BENCH_FLEET_SIZES must be positive integers starting with 1 (the reference), got ${process.env['BENCH_FLEET_SIZES']}`);
}
const samples = Number(process.env['BENCH_SAMPLES'] ?? 3);
if (!Number.isInteger(samples) || samples < 1) throw new Error(`BENCH_SAMPLES must be a positive integer, got ${process.env['BENCH_SAMPLES']}`);
const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };

// The shipped configuration with reserved ports (spec/support/ports.ts): the real instances' HAProxy binds them.
const ports: Record<string, number> = { httpPort: await reservePort(), httpsPort: await reservePort(), statusPort: await reservePort() };
const configText = readFileSync(defaultConfigPath(), 'utf8').replace(/^ {2}(httpPort|httpsPort|statusPort): \d+$/gm, (_, name: string) => `  ${name}: ${ports[name]}`);
for (const [name, port] of Object.entries(ports)) {
  if (!configText.includes(`  ${name}: ${port}\n`)) throw new Error(`the shipped configuration ${defaultConfigPath()} has no templateValues.${name} to point at a free port`);
}
const loaded = loadControllerConfig(configText);
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;
const maxParallel = Number(process.env['BENCH_MAX_PARALLEL'] ?? config.pipeline.maxParallel);
if (!Number.isInteger(maxParallel) || maxParallel < 1) throw new Error(`BENCH_MAX_PARALLEL must be a positive integer, got ${process.env['BENCH_MAX_PARALLEL']}`);

/** `ingresses` Ingresses, each with a Service with one loopback endpoint, but the first one's, which has `endpoints`. */
function world(ingresses: number, endpoints: number): Map<string, KubeObject[]> {
  const range = Array.from({ length: ingresses }, (_, i) => i);
  return new Map<string, KubeObject[]>([
    [
      'ingresses',
      range.map((i) => ({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: `app-${i}`, namespace: 'default' },
        spec: {
          ingressClassName: 'haproxy',
          rules: [{ host: `app-${i}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } }] } }],
        },
      })),
    ],
    ['services', range.map((i) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'default' }, spec: { ports: [{ port: 80, targetPort: 8080 }] } }))],
    [
      'endpointslices',
      range.map((i) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `svc-${i}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${i}` } },
        addressType: 'IPv4',
        ports: [{ port: 8080 }],
        endpoints: Array.from({ length: i === 0 ? endpoints : 1 }, (_, j) => ({ addresses: [`127.1.${i}.${j + 1}`] })),
      })),
    ],
  ]);
}

function validated(revision: number, ingresses: number, endpoints: number): Validated {
  const stores = buildStores(config.watchedResources, world(ingresses, endpoints), config.ignoreFields);
  const output = createRenderer(config, routingViews)({ stores });
  return { ...output, revision, hash: contentHash(output.files), changes: { count: 1, firstAt: Date.now(), refs: [] }, snapshot: { revision, stores, change: undefined } };
}

interface Step {
  readonly name: string;
  readonly mode: DeployMode;
  readonly config: Validated;
}

const steps: readonly Step[] = [
  { name: 'first deploy', mode: 'reload', config: validated(1, 20, 1) },
  { name: 'runtime change', mode: 'runtime', config: validated(2, 20, 2) },
  { name: 'reload change', mode: 'reload', config: validated(3, 21, 2) },
];

interface StepFigures {
  readonly ms: number;
  /** CPU time of the controller's thread (the deploy stage, fleet, clients, convergences). */
  readonly cpuMs: number;
  /** HTTP requests received per instance. */
  readonly requests: number;
}

/** A fleet of instances to deploy to, wherever they run. */
interface Instances {
  readonly urls: readonly string[];
  readonly credentials: { readonly user: string; readonly password: string };
  /** Requests received so far, summed over the instances. */
  readonly requests: () => Promise<number>;
  /** Why the instances answered something else than a real one would have; empty for real ones. */
  readonly mismatches: () => Promise<readonly string[]>;
  readonly stop: () => Promise<void>;
}

function reply(worker: Worker, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (message['type'] !== type) return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      resolve(message);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
}

async function ask(worker: Worker, type: string, answerType = type): Promise<Record<string, unknown>> {
  const answer = reply(worker, answerType);
  worker.postMessage({ type });
  return answer;
}

interface Started {
  readonly worker: Worker;
  readonly ready: Record<string, unknown>;
}

/** `count` workers running `file`, each told `data(i)`, once every one is ready; none left running on failure. */
async function startWorkers(count: number, file: string, data: (index: number) => unknown): Promise<Started[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, async (_, i) => {
      const worker = new Worker(new URL(file, import.meta.url), { workerData: data(i) });
      return { worker, ready: await reply(worker, 'ready') };
    }),
  );
  const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await stopWorkers(running);
    throw failed.reason;
  }
  return running;
}

async function stopWorkers(running: readonly Started[]): Promise<void> {
  await Promise.all(running.map(({ worker }) => ask(worker, 'stop', 'stopped')));
}

async function totalRequests(running: readonly Started[]): Promise<number> {
  const answers = await Promise.all(running.map(({ worker }) => ask(worker, 'requests')));
  return answers.reduce((sum, answer) => sum + (answer['count'] as number), 0);
}

/** `count` emulators, each with its own real HAProxy, on this machine; pods on 127.0.1.x. */
async function realInstances(count: number, record = false): Promise<Instances & { readonly recorded: () => Promise<Exchange[]> }> {
  const running = await startWorkers(count, './emulator-worker.ts', (i) => ({ pod: { ...pod, address: `127.0.1.${i + 1}` }, record }));
  return {
    urls: running.map(({ ready }) => ready['url'] as string),
    credentials: running[0]!.ready['credentials'] as Instances['credentials'],
    requests: () => totalRequests(running),
    mismatches: async () => [],
    recorded: async () => (await ask(running[0]!.worker, 'exchanges'))['exchanges'] as Exchange[],
    stop: () => stopWorkers(running),
  };
}

/** `count` stand-ins playing `script`, on one thread of their own. */
async function replayedInstances(count: number, script: readonly ScriptedAnswer[]): Promise<Instances> {
  const [running] = await startWorkers(1, './replay-worker.ts', () => ({ script, instances: count }));
  const { worker, ready } = running!;
  return {
    urls: ready['urls'] as string[],
    // The stand-ins do not check credentials; the client sends them all the same.
    credentials: { user: 'admin', password: 'replayed' },
    requests: () => totalRequests([running!]),
    mismatches: async () => (await ask(worker, 'requests'))['mismatches'] as string[],
    stop: () => stopWorkers([running!]),
  };
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** Runs the steps through the deploy stage and the Data Plane API fleet. */
async function measure(instances: Instances): Promise<StepFigures[]> {
  const count = instances.urls.length;
  const fleet = dataplaneFleet({ urls: instances.urls, username: instances.credentials.user, password: instances.credentials.password });
  const commands = new Subject<FleetCommand>();
  const outcomes = new Subject<DeployOutcome>();
  const subscription = commands
    .pipe(
      deploy({
        deploy: (request) => defer(() => fleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason, true)),
        timeoutMs: config.pipeline.deployTimeoutMs,
        maxParallel,
        // A failure is a broken benchmark: reported at once, never retried.
        retry: { ...config.pipeline.retry, maxAttempts: 1 },
      }),
    )
    .subscribe(outcomes);
  try {
    const figures: StepFigures[] = [];
    for (const step of steps) {
      const requestsBefore = await instances.requests();
      const done = firstValueFrom(outcomes.pipe(take(count), toArray()));
      const cpuBefore = threadCpuMs();
      const start = performance.now();
      for (const endpoint of fleet.endpoints) commands.next({ type: 'deploy', request: { endpoint, config: step.config, reason: 'change' } });
      const results = await done;
      const ms = performance.now() - start;
      const cpuMs = threadCpuMs() - cpuBefore;
      const failed = results.flatMap((outcome) => (outcome.type === 'deployFailed' ? [`${outcome.endpoint}: ${outcome.error}`] : []));
      const mismatches = await instances.mismatches();
      if (failed.length > 0 || mismatches.length > 0) {
        throw new Error(`${count} instance(s), ${step.name}: ${[...failed, ...mismatches].join('\n')}`);
      }
      const modes = results.flatMap((outcome) => (outcome.type === 'deployed' ? [outcome.result.mode] : []));
      if (modes.some((mode) => mode !== step.mode)) throw new Error(`${count} instance(s), ${step.name}: expected ${step.mode}, got ${modes.join(', ')}`);
      figures.push({ ms, cpuMs, requests: ((await instances.requests()) - requestsBefore) / count });
    }
    return figures;
  } finally {
    subscription.unsubscribe();
    await fleet.stop();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Median figures of `samples` runs for each fleet size. */
async function series(start: (count: number) => Promise<Instances>): Promise<StepFigures[][]> {
  const rows: StepFigures[][] = [];
  for (const size of sizes) {
    const runs: StepFigures[][] = [];
    for (let sample = 0; sample < samples; sample++) {
      const instances = await start(size);
      try {
        runs.push(await measure(instances));
      } finally {
        await instances.stop();
      }
    }
    rows.push(
      steps.map((_, s) => ({
        ms: median(runs.map((run) => run[s]!.ms)),
        cpuMs: median(runs.map((run) => run[s]!.cpuMs)),
        requests: median(runs.map((run) => run[s]!.requests)),
      })),
    );
  }
  return rows;
}

/** One line per deployment and fleet size. */
function table(rows: readonly StepFigures[][]): string {
  const cells = [['deployment', 'instances', 'waves', 'ms', 'x one', 'controller CPU ms', 'requests/instance']];
  steps.forEach((step, s) => {
    rows.forEach((row, r) => {
      const figures = row[s]!;
      cells.push([
        `${step.name} (${step.mode})`,
        String(sizes[r]),
        String(Math.ceil(sizes[r]! / maxParallel)),
        figures.ms.toFixed(0),
        (figures.ms / rows[0]![s]!.ms).toFixed(2),
        figures.cpuMs.toFixed(0),
        figures.requests.toFixed(1),
      ]);
    });
  });
  const widths = cells[0]!.map((_, c) => Math.max(...cells.map((line) => line[c]!.length)));
  return cells.map((line) => `${line.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}\n`).join('');
}

// One instance alone, recorded: what every stand-in plays back. It also warms the controller's code up.
const recording = await realInstances(1, true);
let exchanges: Exchange[];
try {
  await measure(recording);
  exchanges = await recording.recorded();
} finally {
  await recording.stop();
}
const script = scriptOf(exchanges);
const serviceMs = script.reduce((sum, answer) => sum + answer.serviceMs, 0);

const replayed = await series((count) => replayedInstances(count, script));
const shared = await series((count) => realInstances(count));

const out = (text: string) => process.stdout.write(text);
const largest = sizes.length - 1;
const each = (rows: readonly StepFigures[][], r: number) => steps.map((_, s) => rows[r]![s]!.ms.toFixed(0)).join(' / ');
out(
  `Fan-out of three deployments through the deploy stage and the Data Plane API fleet, maxParallel ${maxParallel} ` +
    `(N instances deploy in ceil(N/${maxParallel}) waves, each at least as long as one instance alone), median of ${samples} run(s) per row.\n\n`,
);
out(
  '1. Controller-side fan-out, the figure the target is about: each instance is a stand-in answering every request as one real\n' +
    "   instance (emulator + real HAProxy) answered it alone earlier in this run, after as long as it took. The instances' own\n" +
    '   work (haproxy -c on every write, reloads, runtime commands) is off this machine, as in a fleet of separate machines.\n' +
    `   Recorded: ${script.length} requests, ${serviceMs.toFixed(0)} ms of instance time. One stand-in vs one real instance ` +
    `(first deploy / runtime change / reload change): ${each(replayed, 0)} ms vs ${each(shared, 0)} ms.\n`,
);
out(table(replayed));
const verdicts = steps.map((step, s) => `${step.name} ${(replayed[largest]![s]!.ms / replayed[0]![s]!.ms).toFixed(2)}x`);
const met = steps.every((_, s) => replayed[largest]![s]!.ms <= 2 * replayed[0]![s]!.ms);
out(`target, controller-side: ${sizes[largest]} instances cost no more than twice one: ${met ? 'met' : 'NOT MET'} (${verdicts.join(', ')})\n\n`);
out(
  `2. Everything on this machine, not a fan-out figure: ${sizes[largest]} emulators, each driving its own real HAProxy, share this\n` +
    `   machine's ${availableParallelism()} cores with the controller, so the instances' own work grows with their number.\n`,
);
out(table(shared));
