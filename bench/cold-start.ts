/**
 * Cold-start benchmark for the in-cluster controller: the fake API server
 * serves 1k and 10k Ingresses (each with a Service and an EndpointSlice,
 * bench/world.ts), one HAProxy pod is a Data Plane API emulator
 * with a real HAProxy, and `haproxy-template-ic run` starts as its own
 * process (bench/cluster-world.ts). Prints the time from the process start to its first deployment
 * and the controller's resident memory then (VmRSS) and at its peak (VmHWM),
 * split into the time to the end of the first LIST (the controller's "resources
 * listed" line), from there until the deployment started (render, `haproxy -c`,
 * planning) and the deployment (the Data Plane API emulator's writes and the
 * reload of its real HAProxy, from the deployment's log line).
 *
 * Targets at 10k (reported, never enforced; issue 29): first deploy under 5 s
 * after start, resident memory under 250 MiB.
 *
 * Run with `npm run bench` (or `node bench/cold-start.ts`; BENCH_SIZES=1000 picks sizes,
 * BENCH_VERBOSE=1 shows the controller's log, BENCH_COMPILED=1 runs the compiled build as
 * the image does, after `npm run build`).
 */
import { readFileSync } from 'node:fs';
import { POD, startClusterWorld, startController } from './cluster-world.ts';

const SIZES = process.env['BENCH_SIZES']?.split(',').map(Number) ?? [1_000, 10_000];
const TARGET_MS = 5_000;
const TARGET_MIB = 250;
const DEPLOYED = new RegExp(`deployed revision \\d+ to ${POD}`);
const LISTED = /"msg":"resources listed/;

interface Row {
  readonly size: number;
  readonly firstDeployMs: number;
  readonly listedMs: number;
  readonly deployMs: number;
  readonly rssMib: number;
  readonly peakMib: number;
}

function memoryMib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return kib / 1024;
}

async function measure(size: number): Promise<Row> {
  const world = await startClusterWorld(size);
  try {
    const started = process.hrtime.bigint();
    const since = () => Number(process.hrtime.bigint() - started) / 1e6;
    let deployed: (ms: number) => void = () => undefined;
    const firstDeploy = new Promise<number>((resolve) => (deployed = resolve));
    let listedMs = Number.NaN;
    let deployMs = Number.NaN;
    const controller = await startController(world, {
      line: (line) => {
        if (LISTED.test(line) && Number.isNaN(listedMs)) listedMs = since();
        if (!DEPLOYED.test(line)) return;
        if (Number.isNaN(deployMs)) deployMs = Number((JSON.parse(line) as { durationMs?: number }).durationMs);
        deployed(since());
      },
    });
    try {
      const firstDeployMs = await new Promise<number>((resolve, reject) => {
        void firstDeploy.then(resolve);
        controller.process.once('exit', (code) => reject(new Error(`the controller exited (${code}) before deploying:\n${controller.errors.join('\n')}`)));
        setTimeout(() => reject(new Error(`no deployment within 120 s:\n${controller.errors.join('\n')}`)), 120_000).unref();
      });
      const pid = controller.process.pid!;
      const row = { size, firstDeployMs, listedMs, deployMs, rssMib: memoryMib(pid, 'VmRSS'), peakMib: memoryMib(pid, 'VmHWM') };
      if (process.env['BENCH_SNAPSHOT']) {
        controller.process.kill('SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 15_000));
      }
      return row;
    } finally {
      await controller.stop();
    }
  } finally {
    await world.close();
  }
}

const rows: Row[] = [];
for (const size of SIZES) {
  process.stderr.write(`cold start with ${size} Ingresses...\n`);
  rows.push(await measure(size));
}
const lines = [
  '| ingresses | start to first deploy ms | start to listed ms | listed to deploying ms | deployment ms | RSS at first deploy MiB | peak RSS MiB |',
  '|-----------|--------------------------|--------------------|------------------------|---------------|-------------------------|--------------|',
  ...rows.map(
    (r) =>
      `| ${String(r.size).padStart(9)} | ${r.firstDeployMs.toFixed(0).padStart(24)} | ${r.listedMs.toFixed(0).padStart(18)} | ` +
      `${(r.firstDeployMs - r.listedMs - r.deployMs).toFixed(0).padStart(22)} | ${r.deployMs.toFixed(0).padStart(13)} | ${r.rssMib.toFixed(0).padStart(23)} | ${r.peakMib.toFixed(0).padStart(12)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n\n`);
const largest = rows.find((r) => r.size === 10_000);
if (largest) {
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  process.stdout.write(
    `target: first deploy under ${TARGET_MS / 1000} s at 10000 Ingresses (${(largest.firstDeployMs / 1000).toFixed(1)} s): ${met(largest.firstDeployMs < TARGET_MS)}\n` +
      `target: resident memory at first deploy under ${TARGET_MIB} MiB at 10000 Ingresses (${largest.rssMib.toFixed(0)} MiB; peak ${largest.peakMib.toFixed(0)} MiB): ${met(largest.rssMib < TARGET_MIB)}\n`,
  );
}
