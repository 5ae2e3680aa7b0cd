/**
 * Gateway API render benchmark: 10k HTTPRoutes beside 10k Ingresses,
 * rendered with the shipped configuration. Ingress i and HTTPRoute i both
 * route to Service svc-i (3 ready endpoints), on their own hosts, through
 * one Gateway of the controller's GatewayClass; one HTTPRoute in
 * SETTINGS_EVERY has a header filter and splits by weight over two Services
 * (see world.ts).
 *
 * It prints a full render after one HTTPRoute change (a weight change),
 * after one Ingress change (a new path), and cold (a new renderer, nothing
 * cached), each as a ratio to `haproxy -c` on the same configuration in the
 * same run; and a render after one change of an HTTPRoute with a header
 * match, where one HTTPRoute in 10 (BENCH_GATEWAY_CONDITIONS_EVERY) has
 * one, whose candidate lists are settled key by key. Target (informational, as in render.ts: machines are noisy, a
 * missed target is reported, never a failure): a full render after one
 * change within a tenth of `haproxy -c`.
 *
 * Run with `node bench/gateway-render.ts` (part of `npm run bench`).
 * BENCH_GATEWAY_SIZES=1000 picks other sizes (routes and Ingresses each).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ControllerConfig } from '../lib/config/types.ts';
import { checkConfig } from '../lib/haproxy/check.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { createRenderer, type RenderOutput } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { writeRenderedFiles } from '../lib/render/write-files.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { gc, median, medianAfterChange, milliseconds } from './timing.ts';
import {
  endpointSliceObject,
  gatewayClassObject,
  gatewayObject,
  grpcRouteObject,
  hasConditions,
  httpRouteObject,
  ingressObject,
  NAMESPACES,
  serviceObject,
  SETTINGS_EVERY,
  tlsRouteObject,
} from './world.ts';

const SIZES = process.env['BENCH_GATEWAY_SIZES']?.split(',').map(Number) ?? [10_000];
const RENDER_RUNS = 7;
const COLD_RUNS = 3;
const CHECK_RUNS = 3;
/** One HTTPRoute in this many has a header match, in the world of the conditions figure. */
const CONDITIONS_EVERY = Number(process.env['BENCH_GATEWAY_CONDITIONS_EVERY'] ?? 10);

/** In the mixed world, one GRPCRoute and one TLSRoute for every this many HTTPRoutes: 2k of each beside 10k (issue 28). */
const MIXED_EVERY = 5;

function world(size: number, conditionsEvery = 0): Map<string, KubeObject[]> {
  const range = Array.from({ length: size }, (_, i) => i);
  return new Map([
    ['ingresses', range.map((i) => ingressObject(i))],
    ['services', range.map(serviceObject)],
    ['endpointslices', range.map((i) => endpointSliceObject(i))],
    ['secrets', []],
    ['gatewayclasses', [gatewayClassObject()]],
    ['gateways', [gatewayObject()]],
    ['httproutes', range.map((i) => httpRouteObject(i, size, 1, conditionsEvery))],
    ['referencegrants', []],
    [
      'namespaces',
      [...Array.from({ length: NAMESPACES }, (_, n) => `ns-${n}`), 'infra'].map((name) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, uid: `uid-ns-${name}`, resourceVersion: '1' },
      })),
    ],
  ]);
}

interface Row {
  readonly size: number;
  readonly coldMs: number;
  readonly routeMs: number;
  readonly ingressMs: number;
  readonly checkMs: number;
  readonly configKb: number;
  readonly splitBackends: number;
}

/** The render after one change of an HTTPRoute with a header match, in a world where one HTTPRoute in CONDITIONS_EVERY has one. */
interface ConditionsRow {
  readonly size: number;
  readonly withConditions: number;
  readonly routeMs: number;
  readonly checkMs: number;
}

/** The render really serves both kinds: every host, every split backend, the filters' policies, and no problem. */
function verify(size: number, output: RenderOutput): number {
  const problems = output.excluded.length + output.warnings.length;
  if (problems > 0) throw new Error(`${size} HTTPRoutes: the generated world has ${problems} problems, e.g. ${JSON.stringify(output.excluded[0] ?? output.warnings[0])}`);
  const hostMap = output.files.maps['host.map'] ?? '';
  for (const host of ['app-0.example.com', `app-${size - 1}.example.com`, 'route-0.example.com', `route-${size - 1}.example.com`]) {
    if (!hostMap.includes(host)) throw new Error(`${size} HTTPRoutes: host.map has no line for ${host}`);
  }
  const splitBackends = output.files.config.match(/^backend \S+_split$/gm)?.length ?? 0;
  if (splitBackends !== Math.ceil(size / SETTINGS_EVERY)) throw new Error(`${size} HTTPRoutes: expected ${Math.ceil(size / SETTINGS_EVERY)} split backends, got ${splitBackends}`);
  if (!/set-header X-Route /.test(output.files.config)) throw new Error(`${size} HTTPRoutes: no route policy sets X-Route`);
  return splitBackends;
}

/** The median of COLD_RUNS renders by a new renderer each, nothing cached. */
function coldRenderMs(config: ControllerConfig, stores: ReturnType<typeof buildStores>, dir: string): number {
  const colds: number[] = [];
  for (let run = 0; run < COLD_RUNS; run++) {
    gc();
    const start = process.hrtime.bigint();
    createRenderer(config, routingViews)({ stores, baseDir: dir });
    colds.push(milliseconds(start));
  }
  return median(colds);
}

async function measure(config: ControllerConfig, size: number): Promise<Row> {
  const stores = buildStores(config.watchedResources, world(size), config.ignoreFields);
  const dir = await mkdtemp(join(tmpdir(), `haproxy-gateway-bench-${size}-`));
  try {
    const coldMs = coldRenderMs(config, stores, dir);
    const render = createRenderer(config, routingViews);
    const once = () => render({ stores, baseDir: dir });
    // Warm-up: JIT compilation and inline caches, so the medians are steady-state.
    once();
    once();
    const routes = stores.get('httproutes');
    const ingresses = stores.get('ingresses');
    if (!routes || !ingresses) throw new Error('the shipped configuration has no httproutes or ingresses store');
    // The same object alternates between two versions, so every timed render follows a real change.
    const target = size >> 1;
    const afterChange = (change: (run: number) => void) => medianAfterChange(RENDER_RUNS, change, once);
    const routeMs = afterChange((run) => routes.upsert(httpRouteObject(target, size, 2 + (run % 2))));
    const ingressMs = afterChange((run) => ingresses.upsert(ingressObject(target, 2 + (run % 2))));
    const output = once();
    const splitBackends = verify(size, output);
    // What the renderer kept from the changes must not show: the files are those a new renderer writes.
    if (!isDeepStrictEqual(output.files, createRenderer(config, routingViews)({ stores, baseDir: dir }).files)) {
      throw new Error(`${size} HTTPRoutes: after the changes, the render differs from a new renderer's`);
    }
    const checkMs = await checkTime(dir, output, config, `${size}-HTTPRoute`);
    return { size, coldMs, routeMs, ingressMs, checkMs, configKb: output.files.config.length / 1024, splitBackends };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** haproxy -c's median time on a rendered configuration, which it must accept. */
async function checkTime(dir: string, output: RenderOutput, config: ControllerConfig, what: string): Promise<number> {
  const configFile = await writeRenderedFiles(dir, output.files, config.dataplane);
  const checks: number[] = [];
  for (let run = 0; run < CHECK_RUNS; run++) {
    const start = process.hrtime.bigint();
    const result = await checkConfig(configFile);
    checks.push(milliseconds(start));
    if (!result.valid) throw new Error(`haproxy -c refuses the ${what} configuration:\n${result.output}`);
  }
  return median(checks);
}

async function measureConditions(config: ControllerConfig, size: number): Promise<ConditionsRow> {
  const stores = buildStores(config.watchedResources, world(size, CONDITIONS_EVERY), config.ignoreFields);
  const dir = await mkdtemp(join(tmpdir(), `haproxy-gateway-conditions-bench-${size}-`));
  try {
    const render = createRenderer(config, routingViews);
    const once = () => render({ stores, baseDir: dir });
    once();
    once();
    const routes = stores.get('httproutes')!;
    // A route with a header match, whose version changes the header's value: its list's candidates change.
    const half = size >> 1;
    const target = half - (half % CONDITIONS_EVERY) + 1;
    const routeMs = medianAfterChange(RENDER_RUNS, (run) => routes.upsert(httpRouteObject(target, size, 2 + (run % 2), CONDITIONS_EVERY)), once);
    const output = once();
    verify(size, output);
    if (!output.files.maps['candidates.map']?.includes('=')) throw new Error(`${size} HTTPRoutes with conditions: candidates.map has no candidate`);
    if (!isDeepStrictEqual(output.files, createRenderer(config, routingViews)({ stores, baseDir: dir }).files)) {
      throw new Error(`${size} HTTPRoutes with conditions: after the changes, the render differs from a new renderer's`);
    }
    const withConditions = Array.from({ length: size }, (_, i) => i).filter((i) => hasConditions(i, CONDITIONS_EVERY)).length;
    return { size, withConditions, routeMs, checkMs: await checkTime(dir, output, config, `${size}-HTTPRoute with conditions`) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface MixedRow {
  readonly size: number;
  readonly kinds: number;
  readonly coldMs: number;
  readonly grpcMs: number;
  readonly tlsMs: number;
  readonly routeMs: number;
  readonly checkMs: number;
}

/** The world beside GRPCRoutes and TLSRoutes (one of each per MIXED_EVERY HTTPRoutes) on a Gateway with a TLS Passthrough listener too. */
function mixedWorld(size: number): Map<string, KubeObject[]> {
  const objects = world(size);
  const kinds = Array.from({ length: Math.ceil(size / MIXED_EVERY) }, (_, j) => j * MIXED_EVERY);
  objects.set('gateways', [gatewayObject(true)]);
  objects.set(
    'grpcroutes',
    kinds.map((i) => grpcRouteObject(i)),
  );
  objects.set(
    'tlsroutes',
    kinds.map((i) => tlsRouteObject(i, size)),
  );
  return objects;
}

async function measureMixed(config: ControllerConfig, size: number): Promise<MixedRow> {
  const stores = buildStores(config.watchedResources, mixedWorld(size), config.ignoreFields);
  const dir = await mkdtemp(join(tmpdir(), `haproxy-gateway-mixed-bench-${size}-`));
  try {
    const coldMs = coldRenderMs(config, stores, dir);
    const render = createRenderer(config, routingViews);
    const once = () => render({ stores, baseDir: dir });
    once();
    once();
    const target = (size >> 1) - ((size >> 1) % MIXED_EVERY);
    const store = (name: string) => {
      const found = stores.get(name);
      if (!found) throw new Error(`the shipped configuration has no ${name} store`);
      return found;
    };
    const grpcMs = medianAfterChange(RENDER_RUNS, (run) => store('grpcroutes').upsert(grpcRouteObject(target, 2 + (run % 2))), once);
    const tlsMs = medianAfterChange(RENDER_RUNS, (run) => store('tlsroutes').upsert(tlsRouteObject(target, size, 2 + (run % 2))), once);
    const routeMs = medianAfterChange(RENDER_RUNS, (run) => store('httproutes').upsert(httpRouteObject(target + 1, size, 2 + (run % 2))), once);
    const output = once();
    if (!output.files.maps['host.map']?.includes(`grpc-${target}.example.com`)) {
      throw new Error(`${size} HTTPRoutes, mixed: GRPCRoute grpc-${target} is not served`);
    }
    if (!output.files.maps['l4.map']?.includes(`tls-${target}.example.com`)) throw new Error(`${size} HTTPRoutes, mixed: TLSRoute tls-${target} is not served`);
    if (!isDeepStrictEqual(output.files, createRenderer(config, routingViews)({ stores, baseDir: dir }).files)) {
      throw new Error(`${size} HTTPRoutes, mixed: after the changes, the render differs from a new renderer's`);
    }
    return { size, kinds: Math.ceil(size / MIXED_EVERY), coldMs, grpcMs, tlsMs, routeMs, checkMs: await checkTime(dir, output, config, `${size}-HTTPRoute mixed`) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(
    '| HTTPRoutes + Ingresses | cold render ms | after HTTPRoute change ms | after Ingress change ms | haproxy -c ms | cold / haproxy -c | HTTPRoute / haproxy -c | Ingress / haproxy -c |',
  );
  out('|---|---|---|---|---|---|---|---|');
  const rows: Row[] = [];
  for (const size of SIZES) {
    const row = await measure(loaded.config, size);
    rows.push(row);
    const ratio = (ms: number) => (ms / row.checkMs).toFixed(3);
    out(
      `| ${size} + ${size} | ${row.coldMs.toFixed(1)} | ${row.routeMs.toFixed(1)} | ${row.ingressMs.toFixed(1)} | ${row.checkMs.toFixed(0)} | ` +
        `${ratio(row.coldMs)} | ${ratio(row.routeMs)} | ${ratio(row.ingressMs)} |`,
    );
    gc();
  }
  out('');
  out('| HTTPRoutes + Ingresses | HTTPRoutes with a header match | after change of one with a header match ms | haproxy -c ms | change / haproxy -c |');
  out('|---|---|---|---|---|');
  for (const size of SIZES) {
    const row = await measureConditions(loaded.config, size);
    out(`| ${size} + ${size} | ${row.withConditions} | ${row.routeMs.toFixed(1)} | ${row.checkMs.toFixed(0)} | ${(row.routeMs / row.checkMs).toFixed(3)} |`);
    gc();
  }
  out('');
  out(
    '| HTTPRoutes + Ingresses | GRPCRoutes, TLSRoutes | cold render ms | after GRPCRoute change ms | after TLSRoute change ms | after HTTPRoute change ms | haproxy -c ms | GRPCRoute / haproxy -c | TLSRoute / haproxy -c | HTTPRoute / haproxy -c |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|');
  const mixed: MixedRow[] = [];
  for (const size of SIZES) {
    const row = await measureMixed(loaded.config, size);
    mixed.push(row);
    const ratio = (ms: number) => (ms / row.checkMs).toFixed(3);
    out(
      `| ${size} + ${size} | ${row.kinds}, ${row.kinds} | ${row.coldMs.toFixed(1)} | ${row.grpcMs.toFixed(1)} | ${row.tlsMs.toFixed(1)} | ${row.routeMs.toFixed(1)} | ${row.checkMs.toFixed(0)} | ` +
        `${ratio(row.grpcMs)} | ${ratio(row.tlsMs)} | ${ratio(row.routeMs)} |`,
    );
    gc();
  }
  out('');
  for (const row of rows) out(`${row.size} HTTPRoutes + ${row.size} Ingresses: haproxy.cfg ${row.configKb.toFixed(0)} KiB, ${row.splitBackends} weighted split backends`);
  const largest = rows.at(-1)!;
  const tenth = largest.checkMs / 10;
  for (const [what, ms] of [
    ['after one HTTPRoute change', largest.routeMs],
    ['after one Ingress change', largest.ingressMs],
    ['cold (new renderer, nothing cached)', largest.coldMs],
  ] as const) {
    out(
      `target: full render ${what} at ${largest.size} HTTPRoutes + ${largest.size} Ingresses <= 1/10 of haproxy -c ` +
        `(${ms.toFixed(1)} ms vs ${tenth.toFixed(1)} ms, ${(ms / largest.checkMs).toFixed(3)} of haproxy -c): ${ms <= tenth ? 'met' : 'NOT MET'}`,
    );
  }
  const widest = mixed.at(-1)!;
  const worst = Math.max(widest.grpcMs, widest.tlsMs, widest.routeMs);
  out(
    `target: full render after one GRPCRoute, TLSRoute or HTTPRoute change at ${widest.size} HTTPRoutes + ${widest.kinds} GRPCRoutes + ${widest.kinds} TLSRoutes + ${widest.size} Ingresses <= 1/10 of haproxy -c ` +
      `(slowest ${worst.toFixed(1)} ms vs ${(widest.checkMs / 10).toFixed(1)} ms, ${(worst / widest.checkMs).toFixed(3)} of haproxy -c): ${worst <= widest.checkMs / 10 ? 'met' : 'NOT MET'}`,
  );
}

await main();
