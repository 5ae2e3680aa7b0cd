/**
 * Scale benchmark: 50k Ingresses (each with its Service and an EndpointSlice
 * of one endpoint, as in bench/cluster-world.ts) and 10k HTTPRoutes through
 * one Gateway (HTTPRoute i routes to svc-i, one in SETTINGS_EVERY splits its
 * traffic and sets a header; bench/world.ts), rendered with the shipped
 * configuration, next to a reference world of a fifth of that size in the
 * same run (10k Ingresses + 2k HTTPRoutes).
 *
 * Each world runs in a process of its own (with the V8 young generation
 * `run` sets), so its resident memory is its own: the start (the LIST
 * bodies parsed, the stores built, the cold render and `haproxy -c` on its
 * output, as a controller starts up to its first deployment), the resident memory and the live heap then, and renders after
 * one HTTPRoute change (a weight) and after one Ingress change (a new path).
 * Printed as ratios: the large world to the reference, and each render after
 * a change to `haproxy -c` on the same configuration (target: a tenth).
 *
 * The deployment itself is left out: a HAProxy health-checking 50k servers
 * needs more file descriptors than this machine's hard limit (20000), so the
 * configuration is validated with `haproxy -c` only (bench/cold-start.ts
 * deploys, at 10k).
 *
 * Run with `node bench/scale.ts` (part of `npm run bench`).
 * BENCH_SCALE_WORLDS=10000+2000,50000+10000 picks the worlds (Ingresses +
 * HTTPRoutes), the first the reference.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import { semiSpaceMb } from '../lib/container/heap-plan.ts';
import { checkConfig } from '../lib/haproxy/check.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { writeRenderedFiles } from '../lib/render/write-files.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { gc, medianAfterChange, milliseconds } from './timing.ts';
import { endpointSliceObject, gatewayClassObject, gatewayObject, GATEWAY_NAMESPACE, httpRouteObject, ingressObject, NAMESPACES, serviceObject } from './world.ts';

const WORLDS = (process.env['BENCH_SCALE_WORLDS'] ?? '10000+2000,50000+10000').split(',').map((world) => {
  const [ingresses, routes] = world.split('+').map(Number);
  if (!(ingresses! > 0 && routes! >= 0 && routes! <= ingresses!))
    throw new Error(`BENCH_SCALE_WORLDS: ${world} is not <Ingresses>+<HTTPRoutes> with at most as many HTTPRoutes as Ingresses`);
  return { ingresses: ingresses!, routes: routes! };
});
const RENDER_RUNS = 5;

interface Figures {
  readonly ingresses: number;
  readonly routes: number;
  readonly parseMs: number;
  readonly coldMs: number;
  readonly checkMs: number;
  readonly startMs: number;
  readonly rssMib: number;
  readonly heapMib: number;
  readonly routeMs: number;
  readonly ingressMs: number;
  readonly configMib: number;
}

/** The world's objects by store, as the LIST bodies would bring them: JSON text, in pages of 500. */
function listBodies(ingresses: number, routes: number): Map<string, string[]> {
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const namespaces = [...range(NAMESPACES).map((n) => `ns-${n}`), GATEWAY_NAMESPACE].map((name) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, uid: `uid-ns-${name}`, resourceVersion: '1' },
  }));
  const objects = new Map<string, readonly KubeObject[]>([
    ['ingresses', range(ingresses).map((i) => ingressObject(i))],
    ['services', range(ingresses).map(serviceObject)],
    ['endpointslices', range(ingresses).map((i) => endpointSliceObject(i, 1, 1))],
    ['secrets', []],
    ['gatewayclasses', [gatewayClassObject()]],
    ['gateways', [gatewayObject()]],
    ['httproutes', range(routes).map((i) => httpRouteObject(i, routes))],
    ['referencegrants', []],
    ['namespaces', namespaces],
  ]);
  const pages = new Map<string, string[]>();
  for (const [name, items] of objects) {
    const bodies: string[] = [];
    for (let at = 0; at < items.length || bodies.length === 0; at += 500) bodies.push(JSON.stringify({ items: items.slice(at, at + 500) }));
    pages.set(name, bodies);
  }
  return pages;
}

function residentMib(): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
}

/** One world, in this process: what the parent prints. */
async function measureWorld(ingresses: number, routes: number): Promise<Figures> {
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
  const config = loaded.config;
  let bodies: Map<string, string[]> | undefined = listBodies(ingresses, routes);
  gc();
  const dir = await mkdtemp(join(tmpdir(), `haproxy-scale-bench-${ingresses}-`));
  try {
    const started = process.hrtime.bigint();
    const listed = new Map([...bodies].map(([name, pages]) => [name, pages.flatMap((page) => (JSON.parse(page) as { items: KubeObject[] }).items)]));
    bodies = undefined;
    const stores = buildStores(config.watchedResources, listed, config.ignoreFields);
    listed.clear();
    const parseMs = milliseconds(started);
    const render = createRenderer(config, routingViews);
    const renderStart = process.hrtime.bigint();
    const output = render({ stores, baseDir: dir });
    const coldMs = milliseconds(renderStart);
    const problems = output.excluded.length + output.warnings.length;
    if (problems > 0) throw new Error(`${ingresses} + ${routes}: the world has ${problems} problems, e.g. ${JSON.stringify(output.excluded[0] ?? output.warnings[0])}`);
    const hostMap = output.files.maps['host.map'] ?? '';
    for (const host of [`app-${ingresses - 1}.example.com`, ...(routes > 0 ? [`route-${routes - 1}.example.com`] : [])]) {
      if (!hostMap.includes(host)) throw new Error(`${ingresses} + ${routes}: host.map has no line for ${host}`);
    }
    const checkStart = process.hrtime.bigint();
    const result = await checkConfig(await writeRenderedFiles(dir, output.files, config.dataplane));
    const checkMs = milliseconds(checkStart);
    if (!result.valid) throw new Error(`haproxy -c refuses the ${ingresses} + ${routes} configuration:\n${result.output}`);
    const startMs = milliseconds(started);
    const rssMib = residentMib();
    gc();
    const heapMib = process.memoryUsage().heapUsed / 2 ** 20;
    const once = () => render({ stores, baseDir: dir });
    once();
    const target = (n: number) => n >> 1;
    const routeMs = routes > 0 ? medianAfterChange(RENDER_RUNS, (run) => stores.get('httproutes')!.upsert(httpRouteObject(target(routes), routes, 2 + (run % 2))), once) : Number.NaN;
    const ingressMs = medianAfterChange(RENDER_RUNS, (run) => stores.get('ingresses')!.upsert(ingressObject(target(ingresses), 2 + (run % 2))), once);
    return { ingresses, routes, parseMs, coldMs, checkMs, startMs, rssMib, heapMib, routeMs, ingressMs, configMib: output.files.config.length / 2 ** 20 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function inChild(ingresses: number, routes: number): Promise<Figures> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      // The young generation `run` gives the controller (lib/container/heap-plan.ts), so each world's memory is the controller's.
      [`--max-semi-space-size=${semiSpaceMb}`, fileURLToPath(import.meta.url)],
      { env: { ...process.env, BENCH_SCALE_CHILD: `${ingresses}+${routes}` }, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the ${ingresses} + ${routes} world failed: ${stderr.slice(-4_000)}`));
        else resolve(JSON.parse(stdout) as Figures);
      },
    );
  });
}

async function main(): Promise<void> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const rows: Figures[] = [];
  for (const { ingresses, routes } of WORLDS) {
    process.stderr.write(`scale: ${ingresses} Ingresses + ${routes} HTTPRoutes...\n`);
    rows.push(await inChild(ingresses, routes));
  }
  const f = (value: number, digits = 0) => (Number.isNaN(value) ? '-' : value.toFixed(digits));
  out(
    '| Ingresses + HTTPRoutes | start ms | LIST parsed + stores ms | cold render ms | haproxy -c ms | RSS MiB | live heap MiB | after HTTPRoute change ms | after Ingress change ms | haproxy.cfg MiB |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    out(
      `| ${r.ingresses} + ${r.routes} | ${f(r.startMs)} | ${f(r.parseMs)} | ${f(r.coldMs)} | ${f(r.checkMs)} | ${f(r.rssMib)} | ${f(r.heapMib)} | ` +
        `${f(r.routeMs, 1)} | ${f(r.ingressMs, 1)} | ${f(r.configMib, 1)} |`,
    );
  }
  out('');
  const reference = rows[0]!;
  out(`| Ingresses + HTTPRoutes | objects / reference | start / reference | RSS / reference | live heap / reference | HTTPRoute change / haproxy -c | Ingress change / haproxy -c |`);
  out('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const objects = (r.ingresses * 3 + r.routes) / (reference.ingresses * 3 + reference.routes);
    out(
      `| ${r.ingresses} + ${r.routes} | ${f(objects, 2)} | ${f(r.startMs / reference.startMs, 2)} | ${f(r.rssMib / reference.rssMib, 2)} | ${f(r.heapMib / reference.heapMib, 2)} | ` +
        `${f(r.routeMs / r.checkMs, 3)} | ${f(r.ingressMs / r.checkMs, 3)} |`,
    );
  }
  out('');
  const largest = rows.at(-1)!;
  out(
    `target: a render after one change at ${largest.ingresses} + ${largest.routes} within 1/10 of haproxy -c ` +
      `(HTTPRoute ${f(largest.routeMs / largest.checkMs, 3)}, Ingress ${f(largest.ingressMs / largest.checkMs, 3)}): ` +
      `${Math.max(largest.routeMs, largest.ingressMs) <= largest.checkMs / 10 ? 'met' : 'NOT met'}`,
  );
}

const child = process.env['BENCH_SCALE_CHILD'];
if (child) {
  const [ingresses, routes] = child.split('+').map(Number);
  process.stdout.write(JSON.stringify(await measureWorld(ingresses!, routes!)));
} else {
  await main();
}
