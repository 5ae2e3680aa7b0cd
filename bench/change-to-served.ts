/**
 * Change to traffic served, with the leading edge and with the seed's
 * trailing debounce, in one run: two local-mode controllers side by side,
 * each with the shipped configuration (one with `leadingEdge: false`), its
 * own real HAProxy and BENCH_SERVED_INGRESSES (100) Ingresses, each with its
 * own Service and EndpointSlice, over real backends on loopback.
 *
 * A change is an endpoint added: a second EndpointSlice for one Service,
 * on a backend of its own. It is timed from the manifest write until a
 * request through HAProxy is answered by the new backend (polled every
 * 5 ms). Changes alternate between the two controllers, each made once its
 * controller is idle again (its last change deployed, then the minimum
 * deployment interval and the debounce passed), so both see the same
 * machine. p50 and p95 over BENCH_SERVED_CHANGES (20) changes each, and
 * leading / trailing as a ratio. BENCH_DEPLOYMENT_INTERVAL sets the minimum
 * deployment interval (a duration; the shipped 2s when absent).
 *
 * Run with `node bench/change-to-served.ts` (part of `npm run bench`).
 */
import { LocalHarness } from '../spec/support/local-harness.ts';
import { ingress, service, slice } from '../spec/support/manifest-builders.ts';
import { loadControllerConfig } from '../lib/config/load.ts';

const INGRESSES = Number(process.env['BENCH_SERVED_INGRESSES'] ?? 100);
const CHANGES = Number(process.env['BENCH_SERVED_CHANGES'] ?? 20);
const INTERVAL = process.env['BENCH_DEPLOYMENT_INTERVAL'];
if (!Number.isInteger(INGRESSES) || INGRESSES < CHANGES || !Number.isInteger(CHANGES) || CHANGES < 1) {
  throw new Error('BENCH_SERVED_CHANGES must be a positive integer and BENCH_SERVED_INGRESSES an integer at least as large');
}

/** The shipped configuration, with the interval asked for and, for the trailing controller, the seed's debounce. */
function configure(shipped: string, leadingEdge: boolean): string {
  let text = shipped;
  const replace = (from: string, to: string) => {
    if (!text.includes(from)) throw new Error(`the shipped configuration no longer has ${JSON.stringify(from)}`);
    text = text.replace(from, to);
  };
  if (INTERVAL !== undefined) replace('  minDeploymentInterval: 2s\n', `  minDeploymentInterval: ${INTERVAL}\n`);
  if (!leadingEdge) replace('maxWait: 5s\n', 'maxWait: 5s\nleadingEdge: false\n');
  return text;
}

/** The wait that makes a controller idle again after a deployment: the minimum interval and the debounce, and a margin. */
function idleMs(config: string): number {
  const loaded = loadControllerConfig(config);
  if (!loaded.ok) throw new Error(`the benchmark's configuration does not load:\n${loaded.errors.join('\n')}`);
  return Math.max(loaded.config.pipeline.minDeploymentIntervalMs, loaded.config.pipeline.debounceMs) + 100;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const host = (i: number) => `app-${i}.example.com`;
const world = (base: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: INGRESSES }, (_, i) => [
      `app-${i}.yaml`,
      [
        ingress(`app-${i}`, host(i), [['/', 'Prefix', `app-${i}`, { number: 80 }]]),
        service(`app-${i}`, [{ port: 80, targetPort: base }]),
        slice(`app-${i}-0`, `app-${i}`, undefined, base),
      ].join('---\n'),
    ]),
  );

interface Controller {
  readonly name: string;
  readonly harness: LocalHarness;
  readonly idleMs: number;
  readonly times: number[];
}

async function startController(name: string, leadingEdge: boolean, backends?: readonly number[]): Promise<Controller> {
  let config = '';
  const harness = await LocalHarness.start({ manifests: {}, backends: 2, config: (shipped) => (config = configure(shipped, leadingEdge)) }, backends);
  const [base] = harness.backends as [number, number];
  const mark = harness.mark();
  for (const [file, text] of Object.entries(world(base))) await harness.write(file, text);
  await harness.next(mark, 'deployed', 60_000);
  await harness.until(host(INGRESSES - 1), '/', [base], 60_000);
  await harness.settled();
  return { name, harness, idleMs: idleMs(config), times: [] };
}

/** Adds an endpoint to Service i on the second backend and times it until HAProxy routes to it, then waits for the controller to be idle. */
async function change(controller: Controller, i: number): Promise<void> {
  const { harness } = controller;
  const added = harness.backends[1]!;
  const mark = harness.mark();
  const start = performance.now();
  await harness.write(`app-${i}-added.yaml`, slice(`app-${i}-1`, `app-${i}`, undefined, added));
  while (!(await harness.answering(host(i), '/', 6)).includes(added)) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.times.push(performance.now() - start);
  await harness.next(mark, 'deployed');
  await harness.settled();
  await new Promise((resolve) => setTimeout(resolve, controller.idleMs));
}

const controllers: Controller[] = [];
try {
  controllers.push(await startController('leading edge (default)', true));
  controllers.push(await startController('trailing debounce (leadingEdge: false)', false, controllers[0]!.harness.backends));
  for (const controller of controllers) await new Promise((resolve) => setTimeout(resolve, controller.idleMs));
  for (let i = 0; i < CHANGES; i++) {
    for (const controller of controllers) await change(controller, i);
  }
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(`Change to traffic served: an endpoint added, ${INGRESSES} Ingresses, ${CHANGES} changes each, real HTTP through a real HAProxy (local mode):`);
  out('');
  out('| controller | p50 ms | p95 ms | min ms | max ms |');
  out('|---|---|---|---|---|');
  for (const { name, times } of controllers) {
    out(`| ${name} | ${percentile(times, 0.5).toFixed(0)} | ${percentile(times, 0.95).toFixed(0)} | ${Math.min(...times).toFixed(0)} | ${Math.max(...times).toFixed(0)} |`);
  }
  const [leading, trailing] = controllers.map((c) => c.times) as [number[], number[]];
  out('');
  out(`leading / trailing: p50 ${(percentile(leading, 0.5) / percentile(trailing, 0.5)).toFixed(2)}, p95 ${(percentile(leading, 0.95) / percentile(trailing, 0.95)).toFixed(2)}`);
  out(
    `target: an endpoint added served within 100 ms at ${INGRESSES} Ingresses (p50 with the leading edge: ${percentile(leading, 0.5).toFixed(0)} ms): ${percentile(leading, 0.5) <= 100 ? 'met' : 'NOT MET'}`,
  );
} finally {
  // The second controller borrowed the first one's backends: it stops first, leaving them to the first.
  for (const controller of controllers.toReversed()) await controller.harness.stop({ keepBackends: controller !== controllers[0] });
}
