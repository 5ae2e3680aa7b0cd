/**
 * Change to traffic served, for the four kinds of change issue 29 names, at
 * each size of BENCH_SERVED_SIZES (100, 1000 and 10000 Ingresses): local-mode
 * controllers side by side, each with the shipped configuration (changed as
 * named), its own real HAProxy and that many Ingresses (each with its own
 * Service and EndpointSlice) over real backends on loopback, plus one Ingress
 * `alt` whose Service's endpoint is the second backend.
 *
 * The changes, each a manifest file written beside its place and renamed
 * over it (as GitOps tools and editors' atomic saves write), timed from the
 * rename until requests through HAProxy show it (polled every 5 ms):
 * - endpoint added: Ingress i's file gets a second EndpointSlice for Service
 *   i, on the second backend, until that backend answers for host i;
 * - endpoint removed: the file without it again, until it no longer does;
 * - path added: Ingress i gets `/alt` to Service alt (an existing backend),
 *   until the second backend answers host i's `/alt`;
 * - new backend: a new file with an Ingress, Service and EndpointSlice, until
 *   its host is answered (a reload, whose own time the controller's log gives).
 * Each change is made once its controller is idle (the last change deployed,
 * then the minimum deployment interval and the debounce passed). Per size, the
 * controllers are the shipped one (leading edge, runtime-only changes deployed
 * while `haproxy -c` runs) and one with `runtimeFirst: false` (each change
 * waits for its check); at the first size also the seed's (trailing debounce,
 * every change checked first), the reference the shipped one is a ratio to. p50 and p95 over
 * BENCH_SERVED_CHANGES (20) changes of each kind; BENCH_DEPLOYMENT_INTERVAL
 * sets the minimum deployment interval (the shipped 2s when absent).
 *
 * Run with `node bench/change-to-served.ts` (part of `npm run bench`).
 */
import { LocalHarness } from '../spec/support/local-harness.ts';
import { ingress, service, slice } from '../spec/support/manifest-builders.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import { DEFAULT_SETTLE_MS } from '../streams/local-mode.ts';

const SIZES = (process.env['BENCH_SERVED_SIZES'] ?? '100,1000,10000').split(',').map(Number);
const CHANGES = Number(process.env['BENCH_SERVED_CHANGES'] ?? 20);
const INTERVAL = process.env['BENCH_DEPLOYMENT_INTERVAL'];
if (!Number.isInteger(CHANGES) || CHANGES < 1 || SIZES.some((size) => !Number.isInteger(size) || size < CHANGES)) {
  throw new Error('BENCH_SERVED_CHANGES must be a positive integer and each of BENCH_SERVED_SIZES an integer at least as large');
}

interface Variant {
  readonly name: string;
  readonly leadingEdge: boolean;
  readonly runtimeFirst: boolean;
}

const SHIPPED: Variant = { name: 'shipped (leading edge, runtime first)', leadingEdge: true, runtimeFirst: true };
const VALIDATE_FIRST: Variant = { name: 'runtimeFirst: false', leadingEdge: true, runtimeFirst: false };
const TRAILING: Variant = { name: "the seed's (leadingEdge: false, runtimeFirst: false)", leadingEdge: false, runtimeFirst: false };

/** The shipped configuration, with the interval asked for and the variant's settings. */
function configure(shipped: string, { leadingEdge, runtimeFirst }: Variant): string {
  let text = shipped;
  const replace = (from: string, to: string) => {
    if (!text.includes(from)) throw new Error(`the shipped configuration no longer has ${JSON.stringify(from)}`);
    text = text.replace(from, to);
  };
  if (INTERVAL !== undefined) replace('  minDeploymentInterval: 2s\n', `  minDeploymentInterval: ${INTERVAL}\n`);
  if (!leadingEdge) replace('maxWait: 5s\n', 'maxWait: 5s\nleadingEdge: false\n');
  if (!runtimeFirst) replace('maxWait: 5s\n', 'maxWait: 5s\nruntimeFirst: false\n');
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
/** Ingress i's file: its Service's endpoint on `base`, and a second on `added` when given. */
const appFile = (i: number, base: number, paths: readonly string[] = ['/'], added?: number) =>
  [
    ingress(
      `app-${i}`,
      host(i),
      paths.map((path) => [path, 'Prefix', path === '/alt' ? 'alt' : `app-${i}`, { number: 80 }] as const),
    ),
    service(`app-${i}`, [{ port: 80, targetPort: base }]),
    slice(`app-${i}-0`, `app-${i}`, undefined, base),
    ...(added === undefined ? [] : [slice(`app-${i}-1`, `app-${i}`, undefined, added)]),
  ].join('---\n');

const KINDS = ['endpoint added', 'endpoint removed', 'path added', 'new backend'] as const;
type Kind = (typeof KINDS)[number];
/** Served without a reload: the runtime-only targets apply to these. */
const RUNTIME_ONLY: ReadonlySet<Kind> = new Set(['endpoint added', 'endpoint removed', 'path added']);

interface Controller {
  readonly variant: Variant;
  readonly harness: LocalHarness;
  readonly idleMs: number;
  readonly times: Map<Kind, number[]>;
  /** The reloads' own durations (the controller's log), for the new backends. */
  readonly reloads: number[];
}

async function startController(size: number, variant: Variant, backends?: readonly number[]): Promise<Controller> {
  let config = '';
  // Manifest changes settle as long as they do in local mode as shipped.
  const harness = await LocalHarness.start({ manifests: {}, backends: 2, settleMs: DEFAULT_SETTLE_MS, config: (shipped) => (config = configure(shipped, variant)) }, backends);
  const [base, added] = harness.backends as [number, number];
  const mark = harness.mark();
  await harness.write(
    'alt.yaml',
    [ingress('alt', 'alt.example.com', [['/', 'Prefix', 'alt', { number: 80 }]]), service('alt', [{ port: 80, targetPort: added }]), slice('alt-0', 'alt', undefined, added)].join('---\n'),
  );
  for (let i = 0; i < size; i++) await harness.write(`app-${i}.yaml`, appFile(i, base));
  await harness.next(mark, 'deployed', 300_000);
  await harness.until(host(size - 1), '/', [base], 300_000);
  await harness.until('alt.example.com', '/', [added], 60_000);
  await harness.settled();
  return { variant, harness, idleMs: idleMs(config), times: new Map(KINDS.map((kind) => [kind, []])), reloads: [] };
}

/** Makes change `kind` number i, times it until HAProxy serves it, then waits for the controller to be idle. */
async function change(controller: Controller, kind: Kind, i: number): Promise<void> {
  const { harness } = controller;
  const [base, added] = harness.backends as [number, number];
  const mark = harness.mark();
  const poll = async (served: () => Promise<boolean>) => {
    while (!(await served())) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const file = kind === 'new backend' ? `new-${i}.yaml` : `app-${i}.yaml`;
  if (kind === 'endpoint added') await harness.write(`${file}.new`, appFile(i, base, ['/'], added));
  else if (kind === 'endpoint removed') await harness.write(`${file}.new`, appFile(i, base));
  else if (kind === 'path added') await harness.write(`${file}.new`, appFile(i, base, ['/', '/alt']));
  else {
    await harness.write(
      `${file}.new`,
      [
        ingress(`new-${i}`, `new-${i}.example.com`, [['/', 'Prefix', `new-${i}`, { number: 80 }]]),
        service(`new-${i}`, [{ port: 80, targetPort: added }]),
        slice(`new-${i}-0`, `new-${i}`, undefined, added),
      ].join('---\n'),
    );
  }
  // Timed from the rename: what was written beside (a name no manifest has) is no change yet.
  const start = performance.now();
  await harness.rename(`${file}.new`, file);
  if (kind === 'endpoint added') await poll(async () => (await harness.answering(host(i), '/', 6)).includes(added));
  else if (kind === 'endpoint removed') await poll(async () => !(await harness.answering(host(i), '/', 6)).includes(added));
  else if (kind === 'path added') await poll(async () => (await harness.answering(host(i), '/alt', 2)).includes(added));
  else await poll(async () => (await harness.answering(`new-${i}.example.com`, '/', 2)).includes(added));
  controller.times.get(kind)!.push(performance.now() - start);
  const deployed = await harness.next(mark, 'deployed');
  if (kind === 'new backend' && deployed.result.mode === 'reload') controller.reloads.push(deployed.durationMs);
  await harness.settled();
  await new Promise((resolve) => setTimeout(resolve, controller.idleMs));
}

const out = (text: string) => process.stdout.write(`${text}\n`);
const figures = new Map<number, Controller[]>();
const running: Controller[] = [];
try {
  for (const [index, size] of SIZES.entries()) {
    const variants = index === 0 ? [SHIPPED, VALIDATE_FIRST, TRAILING] : [SHIPPED, VALIDATE_FIRST];
    const controllers: Controller[] = [];
    for (const variant of variants) {
      controllers.push(await startController(size, variant, controllers[0]?.harness.backends));
      running.push(controllers.at(-1)!);
    }
    for (const controller of controllers) await new Promise((resolve) => setTimeout(resolve, controller.idleMs));
    for (const kind of KINDS) {
      for (let i = 0; i < CHANGES; i++) for (const controller of controllers) await change(controller, kind, i);
    }
    figures.set(size, controllers);
    out(`Change to traffic served at ${size} Ingresses, ${CHANGES} changes of each kind, real HTTP through a real HAProxy (local mode):`);
    out('');
    out('| change | controller | p50 ms | p95 ms | min ms | max ms |');
    out('|---|---|---|---|---|---|');
    for (const kind of KINDS) {
      for (const { variant, times } of controllers) {
        const values = times.get(kind)!;
        out(
          `| ${kind} | ${variant.name} | ${percentile(values, 0.5).toFixed(0)} | ${percentile(values, 0.95).toFixed(0)} | ${Math.min(...values).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`,
        );
      }
    }
    const reloads = controllers[0]!.reloads;
    if (reloads.length > 0) out(`\nthe reloads of the new backends (shipped): p50 ${percentile(reloads, 0.5).toFixed(0)} ms`);
    out('');
    // The later controllers borrowed the first one's backends: they stop first, leaving them to the first.
    for (const controller of controllers.toReversed()) {
      await controller.harness.stop({ keepBackends: controller !== controllers[0] });
      running.splice(running.indexOf(controller), 1);
    }
  }
  const ratio = (a: readonly number[], b: readonly number[]) => `p50 ${(percentile(a, 0.5) / percentile(b, 0.5)).toFixed(2)}, p95 ${(percentile(a, 0.95) / percentile(b, 0.95)).toFixed(2)}`;
  const first = figures.get(SIZES[0]!)!;
  const [shippedFirst, , seed] = first;
  for (const kind of KINDS) out(`shipped / the seed's at ${SIZES[0]}, ${kind}: ${ratio(shippedFirst!.times.get(kind)!, seed!.times.get(kind)!)}`);
  for (const [size, [shipped, validateFirst]] of figures) {
    for (const kind of KINDS) {
      out(`shipped / runtimeFirst: false at ${size}, ${kind}: ${ratio(shipped!.times.get(kind)!, validateFirst!.times.get(kind)!)}`);
      if (size !== SIZES[0]) out(`shipped at ${size} / at ${SIZES[0]}, ${kind}: ${ratio(shipped!.times.get(kind)!, shippedFirst!.times.get(kind)!)}`);
    }
  }
  for (const [size, controllers] of figures) {
    const limit = size <= 100 ? 100 : 150;
    for (const { variant, times } of controllers.slice(0, 2)) {
      const worst = Math.max(...[...RUNTIME_ONLY].map((kind) => percentile(times.get(kind)!, 0.5)));
      out(`target: runtime-only changes served within ${limit} ms at ${size} Ingresses (${variant.name}, slowest p50 ${worst.toFixed(0)} ms): ${worst <= limit ? 'met' : 'NOT MET'}`);
    }
    const [shipped] = controllers;
    const newBackend = percentile(shipped!.times.get('new backend')!, 0.5);
    const reload = shipped!.reloads.length > 0 ? percentile(shipped!.reloads, 0.5) : 0;
    out(
      `target: a new backend (a reload) served within 1 s plus the reload at ${size} Ingresses (p50 ${newBackend.toFixed(0)} ms, reload ${reload.toFixed(0)} ms): ${newBackend - reload <= 1000 ? 'met' : 'NOT MET'}`,
    );
  }
} finally {
  for (const controller of running.toReversed()) await controller.harness.stop({ keepBackends: controller !== running[0] });
}
