import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultConfigPath, packageRoot } from '../lib/cli/package-root.ts';
import { createControllerObjects, createHaproxyPod } from '../spec/support/cluster-fixtures.ts';
import { startEmulator, type Emulator } from '../spec/support/dataplane-emulator/index.ts';
import { startFakeApiServer, type FakeApiServer } from '../spec/support/fake-apiserver/index.ts';
import { reservePort } from '../spec/support/ports.ts';
import { endpointSliceObject, ingressObject, NAMESPACES, serviceObject } from './world.ts';

/**
 * The world of the benchmarks that run `haproxy-template-ic run` in a
 * cluster (bench/cold-start.ts, bench/config-edit.ts): the fake API server
 * holding `size` Ingresses, each with a Service and an EndpointSlice
 * (bench/world.ts), the controller's ConfigMap and credentials Secret, and
 * one HAProxy pod whose Data Plane API is an emulator with a real HAProxy.
 */

export const NAMESPACE = 'haproxy';
const POD_ADDRESS = '127.0.0.9';
/** The pod, as the controller names the endpoint in its log lines. */
export const POD = `${NAMESPACE}/haproxy-0`;
/**
 * One endpoint per slice: a HAProxy health-checking 30k servers needs more
 * file descriptors than this machine's hard limit (20000) allows it, and the
 * pod's HAProxy must start for the controller to deploy at all.
 */
const ENDPOINTS_PER_SLICE = 1;

export interface ClusterWorld {
  readonly fake: FakeApiServer;
  readonly emulator: Emulator;
  close(): Promise<void>;
}

/** Replaces `from` in `text`, which must hold it: a shipped configuration that moved on fails the benchmark, never skews it. */
export function replaced(text: string, from: string | RegExp, to: string): string {
  if (!text.match(from)) throw new Error(`the shipped configuration no longer has ${String(from)}`);
  return text.replace(from, to);
}

/**
 * Starts the world. `configure` gets the shipped configuration with the
 * pod's ports laid over it and returns the ConfigMap's `config.yaml`.
 */
export async function startClusterWorld(size: number, configure: (config: string) => string = (config) => config): Promise<ClusterWorld> {
  const fake = await startFakeApiServer({ historyLimit: 100 });
  const dataplanePort = await reservePort(POD_ADDRESS);
  const emulator = await startEmulator({
    pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: POD_ADDRESS },
    listen: { host: POD_ADDRESS, port: dataplanePort },
  });
  const close = async () => {
    await emulator.stop();
    await fake.close();
  };
  try {
    let config = readFileSync(defaultConfigPath(), 'utf8');
    config = replaced(config, '  httpPort: 80\n', `  httpPort: ${await reservePort(POD_ADDRESS)}\n`);
    config = replaced(config, '  httpsPort: 443\n', `  httpsPort: ${await reservePort(POD_ADDRESS)}\n`);
    config = replaced(config, '  statusPort: 8404\n', `  statusPort: ${await reservePort(POD_ADDRESS)}\n`);
    config = replaced(config, '  port: 5555\n', `  port: ${dataplanePort}\n`);
    for (let n = 0; n < NAMESPACES; n++) fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
    const strip = (object: ReturnType<typeof ingressObject>) => ({ ...object, metadata: { ...object.metadata, uid: undefined, resourceVersion: undefined } });
    for (let i = 0; i < size; i++) {
      fake.create(strip(ingressObject(i)));
      fake.create(strip(serviceObject(i)));
      fake.create(strip(endpointSliceObject(i, 1, ENDPOINTS_PER_SLICE)));
    }
    const { user, password } = emulator.credentials;
    createControllerObjects(fake, NAMESPACE, { config: configure(config), secret: 'haproxy-template-ic-credentials', username: user, password });
    createHaproxyPod(fake, NAMESPACE, 'haproxy-0', POD_ADDRESS);
    return { fake, emulator, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface RunningController {
  readonly process: ChildProcess;
  /** What it wrote to stderr so far, for the message of a failure. */
  readonly errors: readonly string[];
  /** Stops it and resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * What the controller process runs: the TypeScript source, or with
 * BENCH_COMPILED=1 the compiled build the image runs (`npm run build`
 * first), which spares Node's TypeScript stripper (about 30 MiB resident
 * with the module graph's stripped sources).
 */
function entryPoint(): string {
  if (!process.env['BENCH_COMPILED']) return join(packageRoot(), 'streams', 'main.ts');
  const compiled = join(packageRoot(), 'dist', 'streams', 'main.js');
  if (!existsSync(compiled)) throw new Error(`BENCH_COMPILED: ${compiled} is missing; run npm run build first`);
  return compiled;
}

/**
 * `haproxy-template-ic run` as its own process against the world, leading
 * alone; `line` gets every line of its standard output (JSON log lines).
 * BENCH_NODE_ARGS adds Node flags, BENCH_VERBOSE=1 shows its log,
 * BENCH_COMPILED=1 runs the compiled build.
 */
export async function startController(world: ClusterWorld, options: { readonly metricsPort?: number; readonly line: (line: string) => void }): Promise<RunningController> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env['BENCH_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
      entryPoint(),
      'run',
      '--kubeconfig',
      world.fake.kubeconfigPath,
      '--namespace',
      NAMESPACE,
      '--identity',
      'bench',
      '--no-leader-election',
      '--bind-address',
      '127.0.0.1',
      '--health-port',
      String(await reservePort()),
      '--metrics-port',
      String(options.metricsPort ?? (await reservePort())),
      '--webhook-port',
      String(await reservePort()),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const errors: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => errors.push(line));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (process.env['BENCH_VERBOSE']) process.stderr.write(`${line}\n`);
    options.line(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    errors,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
