/**
 * Render benchmark: 100, 1k and 10k Ingresses, each with its own Service
 * and an EndpointSlice of 3 ready endpoints, rendered with the shipped
 * configuration; then the same worlds with settings on 20% of the
 * Ingresses (backend and route settings from annotations, see world.ts).
 * Prints render time and memory next to `haproxy -c` time on the same
 * output, and the time to apply one changed object to the stores.
 *
 * Targets (informational: machines are noisy, so a missed target is
 * reported, never a failure; only errors exit non-zero):
 *   - a full render at 10k Ingresses takes at most a tenth of `haproxy -c` on
 *     it, both after a change (the running controller) and cold (a new
 *     renderer with nothing cached, as at start-up or after a configuration
 *     change), with and without settings;
 *   - applying one changed object to the stores takes microseconds,
 *     independent of the number of objects.
 *
 * Next to them it times a bare render (bare-render.ts): the same backends
 * and map lines written by short, plain code that checks nothing and keeps
 * nothing. It shows, in the same run, what writing this output costs
 * without the renderer's work of checking values, settling conflicts and
 * recording line origins.
 *
 * Run with `npm run bench`. BENCH_SIZES=100,1000 picks other sizes.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ControllerConfig } from '../lib/config/types.ts';
import { checkConfig } from '../lib/haproxy/check.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { createRenderer, type RenderOutput } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { writeRenderedFiles } from '../lib/render/write-files.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { bareRender, type BareOutput } from './bare-render.ts';
import { gc, median, medianAfterChange, milliseconds } from './timing.ts';
import { endpointSliceObject, ingressObject, serviceObject, SETTINGS_EVERY } from './world.ts';
import type { IndexedStore } from '../lib/store/indexed-store.ts';

const SIZES = process.env['BENCH_SIZES']?.split(',').map(Number) ?? [100, 1_000, 10_000];
/** Fewer timed renders where one takes long, to stay within a couple of minutes overall. */
const renderRuns = (size: number): number => (size >= 10_000 ? 7 : size >= 1_000 ? 15 : 31);
const CHECK_RUNS = 3;
/** Cold renders are single samples of something slow: the median of a few. */
const COLD_RUNS = 3;
const UPSERT_RUNS = 20_000;

function world(size: number, settings: boolean): Map<string, KubeObject[]> {
  const range = Array.from({ length: size }, (_, i) => i);
  return new Map([
    ['ingresses', range.map((i) => ingressObject(i, 1, settings))],
    ['services', range.map(serviceObject)],
    ['endpointslices', range.map((i) => endpointSliceObject(i))],
    ['secrets', []],
  ]);
}

interface Row {
  readonly size: number;
  /** Settings on every SETTINGS_EVERY-th Ingress. */
  readonly settings: boolean;
  /** A first render of a new renderer, with nothing cached (median). */
  readonly coldMs: number;
  /** The first of those: with a smaller size run before it, the JIT has warmed up; as the first size, it has not. */
  readonly firstColdMs: number;
  /** A bare render of the same world (median): see bare-render.ts. Not for a world with settings, which it does not write. */
  readonly bareMs: number | undefined;
  /** A full render after one EndpointSlice changed (the commonest change). */
  readonly endpointMs: number;
  /** A full render after one Ingress changed (its routes moved). */
  readonly renderMs: number;
  readonly checkMs: number;
  readonly heapMb: number;
  readonly rssMb: number;
  readonly storesMs: number;
  readonly upsertUs: number;
  readonly configKb: number;
}

/**
 * Median time of one upsert that changes the object: the same slice
 * alternates between two versions, so every call reindexes (an unchanged
 * version would return early and measure nothing).
 */
function upsertMicroseconds(store: IndexedStore, size: number): number {
  const target = size >> 1;
  const versions = [endpointSliceObject(target, 4), endpointSliceObject(target, 5)];
  const samples: number[] = [];
  for (let run = 0; run < UPSERT_RUNS; run++) {
    const start = process.hrtime.bigint();
    const changed = store.upsert(versions[run % 2]!);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e3;
    if (!changed) throw new Error('upsert saw no change: the benchmark would measure the early return');
    samples.push(elapsed);
  }
  return median(samples.slice(UPSERT_RUNS / 10));
}

async function measure(config: ControllerConfig, size: number, settings: boolean): Promise<Row> {
  const objects = world(size, settings);
  const storesStart = process.hrtime.bigint();
  const stores = buildStores(config.watchedResources, objects, config.ignoreFields);
  const storesMs = milliseconds(storesStart);
  const dir = await mkdtemp(join(tmpdir(), `haproxy-bench-${size}-`));
  // Each cold render starts from a collected heap: otherwise it would pay for
  // the collector moving the objects this benchmark built just before (and
  // for the renderer before it), which is not the renderer's work.
  const colds: number[] = [];
  let cold: RenderOutput | undefined;
  for (let run = 0; run < COLD_RUNS; run++) {
    gc();
    const coldStart = process.hrtime.bigint();
    cold = createRenderer(config, routingViews)({ stores, baseDir: dir });
    colds.push(milliseconds(coldStart));
  }
  const bares: number[] = [];
  let bare: BareOutput | undefined;
  for (let run = 0; run < (settings ? 0 : COLD_RUNS); run++) {
    gc();
    const bareStart = process.hrtime.bigint();
    bare = bareRender(objects);
    bares.push(milliseconds(bareStart));
  }
  // The floor only counts if it writes what the renderer writes from the same stores.
  const { maps } = cold!.files;
  if (bare && (!cold!.files.config.endsWith(bare.backends) || maps['host.map'] !== bare.hostMap || maps['path-exact.map'] !== bare.exactMap || maps['path-prefix.map'] !== bare.prefixMap)) {
    throw new Error(`${size} Ingresses: the bare render writes other backends or map lines than the renderer`);
  }
  if (settings) {
    // The settings must really be rendered: a backend line of each kind, and route policies.
    for (const line of [/^ {2}timeout server 45000$/m, /^ {2}cookie SRVID /m, / proto h2$/m, / maxconn 100$/m, /^ {2}acl policy_p[0-9a-f]{16} /m]) {
      if (!line.test(cold!.files.config)) throw new Error(`${size} Ingresses with settings: no line matches ${String(line)}`);
    }
  }
  const render = createRenderer(config, routingViews);
  try {
    const once = () => render({ stores, baseDir: dir });
    // Warm-up: JIT compilation and inline caches, so the median is steady-state.
    once();
    once();
    // Each timed render follows a real change to the stores, as in the running controller:
    // the same object alternates between two versions, so every render has something new.
    const slices = stores.get('endpointslices');
    const ingresses = stores.get('ingresses');
    if (!slices || !ingresses) throw new Error('the shipped configuration has no endpointslices or ingresses store');
    const target = size >> 1;
    const afterChange = (change: (run: number) => void) => medianAfterChange(renderRuns(size), change, once);
    const endpointMs = afterChange((run) => slices.upsert(endpointSliceObject(target, 2 + (run % 2))));
    // The Ingress changed is one with settings in a world with them (target is a multiple of SETTINGS_EVERY).
    const renderMs = afterChange((run) => ingresses.upsert(ingressObject(target, 2 + (run % 2), settings)));
    ingresses.upsert(ingressObject(target, 3, settings));

    gc();
    const before = process.memoryUsage();
    const output = once();
    gc();
    const after = process.memoryUsage();
    const rssPeak = process.resourceUsage().maxRSS / 1024;
    const problems = output.excluded.length + output.warnings.length;
    if (problems > 0) throw new Error(`${size} Ingresses: the generated world has ${problems} problems, e.g. ${JSON.stringify(output.excluded[0] ?? output.warnings[0])}`);
    const servers = output.files.config.match(/^ {2}server /gm)?.length ?? 0;
    if (servers !== size * 3) throw new Error(`${size} Ingresses: expected ${size * 3} servers, got ${servers}`);

    const configFile = await writeRenderedFiles(dir, output.files, config.dataplane);
    const checks: number[] = [];
    for (let run = 0; run < CHECK_RUNS; run++) {
      const start = process.hrtime.bigint();
      const result = await checkConfig(configFile);
      checks.push(milliseconds(start));
      if (!result.valid) throw new Error(`haproxy -c refuses the ${size}-Ingress configuration:\n${result.output}`);
    }

    return {
      size,
      settings,
      coldMs: median(colds),
      firstColdMs: colds[0]!,
      bareMs: bares.length > 0 ? median(bares) : undefined,
      endpointMs,
      renderMs,
      checkMs: median(checks),
      heapMb: (after.heapUsed - before.heapUsed) / 2 ** 20,
      rssMb: rssPeak,
      storesMs,
      upsertUs: upsertMicroseconds(slices, size),
      configKb: output.files.config.length / 1024,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function table(rows: readonly Row[]): string {
  const header = [
    'ingresses',
    'settings',
    'cold render ms',
    'bare render ms',
    'render after endpoint change ms',
    'render after Ingress change ms',
    'haproxy -c ms',
    'cold / haproxy -c',
    'bare / haproxy -c',
    'render / haproxy -c',
    'heap MB',
    'upsert µs',
  ];
  const cells = rows.map((row) => [
    String(row.size),
    row.settings ? `1 in ${SETTINGS_EVERY}` : 'none',
    row.coldMs.toFixed(1),
    row.bareMs?.toFixed(1) ?? '-',
    row.endpointMs.toFixed(1),
    row.renderMs.toFixed(1),
    row.checkMs.toFixed(0),
    (row.coldMs / row.checkMs).toFixed(3),
    row.bareMs === undefined ? '-' : (row.bareMs / row.checkMs).toFixed(3),
    (row.renderMs / row.checkMs).toFixed(3),
    row.heapMb.toFixed(1),
    row.upsertUs.toFixed(2),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  const line = (cell: readonly string[]) => `| ${cell.map((text, column) => text.padStart(widths[column]!)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}

async function main(): Promise<void> {
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
  const rows: Row[] = [];
  for (const settings of [false, true]) {
    for (const size of SIZES) {
      rows.push(await measure(loaded.config, size, settings));
      gc();
    }
  }
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(table(rows));
  out('');
  for (const row of rows) {
    out(
      `${row.size} Ingresses${row.settings ? ' with settings' : ''}: haproxy.cfg ${row.configKb.toFixed(0)} KiB, stores built in ${row.storesMs.toFixed(1)} ms, ` +
        `first cold render ${row.firstColdMs.toFixed(1)} ms${row === rows[0] ? ' (JIT not yet warm)' : ''}, ` +
        `heap kept by one render ${row.heapMb.toFixed(1)} MB, peak RSS so far ${row.rssMb.toFixed(0)} MB`,
    );
  }
  out('');
  const plain = rows.filter((row) => !row.settings);
  const largestPlain = plain.at(-1)!;
  for (const largest of [largestPlain, rows.at(-1)!]) {
    const tenth = largest.checkMs / 10;
    const which = `${largest.size} Ingresses${largest.settings ? ` with settings on 1 in ${SETTINGS_EVERY}` : ''}`;
    out(
      `target: full render at ${which} after an Ingress change <= 1/10 of haproxy -c ` +
        `(${largest.renderMs.toFixed(1)} ms vs ${tenth.toFixed(1)} ms, ${(largest.renderMs / largest.checkMs).toFixed(3)} of haproxy -c): ${largest.renderMs <= tenth ? 'met' : 'NOT MET'}`,
    );
    const bare =
      largest.bareMs === undefined
        ? ''
        : `; the bare render takes ${largest.bareMs.toFixed(1)} ms (${(largest.bareMs / largest.checkMs).toFixed(2)} of haproxy -c), the cold render ${(largest.coldMs / largest.bareMs).toFixed(1)} times that`;
    out(
      `target: cold render (new renderer, nothing cached) at ${which} <= 1/10 of haproxy -c ` +
        `(${largest.coldMs.toFixed(1)} ms vs ${tenth.toFixed(1)} ms): ${largest.coldMs <= tenth ? 'met' : `NOT MET (${(largest.coldMs / largest.checkMs).toFixed(2)} of haproxy -c)`}${bare}`,
    );
  }
  // "Microseconds, independent of the number of objects": under 100 µs at
  // every size, and the largest size within 3x of the smallest (noise, not growth).
  const smallest = plain[0]!;
  const upsertMet = plain.every((row) => row.upsertUs < 100) && largestPlain.upsertUs <= Math.max(3 * smallest.upsertUs, smallest.upsertUs + 5);
  out(
    `target: one changed object applied to the stores in microseconds, independent of size ` +
      `(${plain.map((row) => `${row.size}: ${row.upsertUs.toFixed(2)} µs`).join(', ')}): ${upsertMet ? 'met' : 'NOT MET'}`,
  );
}

await main();
