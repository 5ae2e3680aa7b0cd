/**
 * Cold-start benchmark for the in-cluster controller: the fake API server
 * serves 1k and 10k Ingresses (each with a Service and an EndpointSlice,
 * bench/world.ts), one HAProxy pod is a Data Plane API emulator
 * with a real HAProxy, and `haproxy-template-ic run` starts as its own
 * process. Prints the time from the process start to its first deployment
 * and the controller's resident memory then (VmRSS) and at its peak (VmHWM).
 *
 * Targets at 10k (reported, never enforced): first deploy under 10 s after
 * start, resident memory under 300 MiB.
 *
 * Run with `npm run bench` (or `node bench/cold-start.ts`; BENCH_SIZES=1000 picks sizes,
 * BENCH_VERBOSE=1 shows the controller's log).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultConfigPath, packageRoot } from '../lib/cli/package-root.ts';
import { createControllerObjects, createHaproxyPod } from '../spec/support/cluster-fixtures.ts';
import { startEmulator } from '../spec/support/dataplane-emulator/index.ts';
import { startFakeApiServer } from '../spec/support/fake-apiserver/index.ts';
import { reservePort } from '../spec/support/ports.ts';
import { endpointSliceObject, ingressObject, NAMESPACES, serviceObject } from './world.ts';

const SIZES = process.env['BENCH_SIZES']?.split(',').map(Number) ?? [1_000, 10_000];
const TARGET_MS = 10_000;
const TARGET_MIB = 300;
const POD_ADDRESS = '127.0.0.9';
/**
 * One endpoint per slice: a HAProxy health-checking 30k servers needs more
 * file descriptors than this machine's hard limit (20000) allows it, and the
 * pod's HAProxy must start for the controller to deploy at all.
 */
const ENDPOINTS_PER_SLICE = 1;

interface Row {
  readonly size: number;
  readonly firstDeployMs: number;
  readonly rssMib: number;
  readonly peakMib: number;
}

function memoryMib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return kib / 1024;
}

async function measure(size: number): Promise<Row> {
  const fake = await startFakeApiServer({ historyLimit: 100 });
  const dataplanePort = await reservePort(POD_ADDRESS);
  const emulator = await startEmulator({
    pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: POD_ADDRESS },
    listen: { host: POD_ADDRESS, port: dataplanePort },
  });
  try {
    const config = readFileSync(defaultConfigPath(), 'utf8')
      .replace('  httpPort: 80\n', `  httpPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  httpsPort: 443\n', `  httpsPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  port: 5555\n', `  port: ${dataplanePort}\n`);
    for (let n = 0; n < NAMESPACES; n++) fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
    const strip = (object: ReturnType<typeof ingressObject>) => ({ ...object, metadata: { ...object.metadata, uid: undefined, resourceVersion: undefined } });
    for (let i = 0; i < size; i++) {
      fake.create(strip(ingressObject(i)));
      fake.create(strip(serviceObject(i)));
      fake.create(strip(endpointSliceObject(i, 1, ENDPOINTS_PER_SLICE)));
    }
    const { user, password } = emulator.credentials;
    createControllerObjects(fake, 'haproxy', { config, secret: 'haproxy-template-ic-credentials', username: user, password });
    createHaproxyPod(fake, 'haproxy', 'haproxy-0', POD_ADDRESS);

    const started = process.hrtime.bigint();
    const controller = spawn(
      process.execPath,
      [
        ...(process.env['BENCH_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
        join(packageRoot(), 'streams', 'main.ts'),
        'run',
        '--kubeconfig',
        fake.kubeconfigPath,
        '--namespace',
        'haproxy',
        '--identity',
        'bench',
        '--no-leader-election',
        '--bind-address',
        '127.0.0.1',
        '--health-port',
        String(await reservePort()),
        '--metrics-port',
        String(await reservePort()),
        '--webhook-port',
        String(await reservePort()),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const errors: string[] = [];
    createInterface({ input: controller.stderr }).on('line', (line) => errors.push(line));
    try {
      const firstDeployMs = await new Promise<number>((resolve, reject) => {
        createInterface({ input: controller.stdout }).on('line', (line) => {
          if (process.env['BENCH_VERBOSE']) process.stderr.write(`${line}\n`);
          if (/deployed revision \d+ to haproxy\/haproxy-0/.test(line)) resolve(Number(process.hrtime.bigint() - started) / 1e6);
        });
        controller.once('exit', (code) => reject(new Error(`the controller exited (${code}) before deploying:\n${errors.join('\n')}`)));
        setTimeout(() => reject(new Error(`no deployment within 120 s:\n${errors.join('\n')}`)), 120_000).unref();
      });
      const row = { size, firstDeployMs, rssMib: memoryMib(controller.pid!, 'VmRSS'), peakMib: memoryMib(controller.pid!, 'VmHWM') };
      if (process.env['BENCH_SNAPSHOT']) {
        controller.kill('SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 15_000));
      }
      return row;
    } finally {
      controller.kill('SIGTERM');
      await new Promise((resolve) => controller.once('exit', resolve));
    }
  } finally {
    await emulator.stop();
    await fake.close();
  }
}

const rows: Row[] = [];
for (const size of SIZES) {
  process.stderr.write(`cold start with ${size} Ingresses...\n`);
  rows.push(await measure(size));
}
const lines = [
  '| ingresses | start to first deploy ms | RSS at first deploy MiB | peak RSS MiB |',
  '|-----------|--------------------------|-------------------------|--------------|',
  ...rows.map((r) => `| ${String(r.size).padStart(9)} | ${r.firstDeployMs.toFixed(0).padStart(24)} | ${r.rssMib.toFixed(0).padStart(23)} | ${r.peakMib.toFixed(0).padStart(12)} |`),
];
process.stdout.write(`${lines.join('\n')}\n\n`);
const largest = rows.find((r) => r.size === 10_000);
if (largest) {
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  process.stdout.write(
    `target: first deploy under ${TARGET_MS / 1000} s at 10000 Ingresses (${(largest.firstDeployMs / 1000).toFixed(1)} s): ${met(largest.firstDeployMs < TARGET_MS)}\n` +
      `target: resident memory under ${TARGET_MIB} MiB at 10000 Ingresses (${largest.peakMib.toFixed(0)} MiB peak): ${met(largest.peakMib < TARGET_MIB)}\n`,
  );
}
