/**
 * Controller configuration edit benchmark, in a cluster: the fake API server
 * serves BENCH_CONFIG_EDIT_SIZES (10k) Ingresses, each with a Service and an
 * EndpointSlice (bench/world.ts), one HAProxy pod is a Data Plane API
 * emulator with a real HAProxy, and `haproxy-template-ic run` starts as its
 * own process, as in bench/cold-start.ts (bench/cluster-world.ts). Once it has deployed, the ConfigMap
 * is edited BENCH_CONFIG_EDITS (5) times, each edit a template change
 * (`timeout client`), each made once the last is deployed; then once more
 * adding a watched resource (every ConfigMap), which must list that resource
 * alone. Each edit is timed from the PATCH until the controller logs its
 * deployment, and the LIST requests the fake API server answered meanwhile
 * are counted; the deployment's own time (the Data Plane API's write and
 * HAProxy's reload, from its log line) is split off, and the render and
 * `haproxy -c` are read from the controller's metrics. References from the
 * same run: the cold start (process start to first deployment, every
 * resource listed and every object rendered for the first time: what an
 * edit cost when it started everything afresh), the first render, and
 * `haproxy -c` of the same output.
 *
 * Target at 10k (reported, never enforced): a template edit handed to the
 * Data Plane API in under 1 s (the reload it needs comes on top), with no
 * LIST request.
 *
 * Run with `npm run bench` (or `node bench/config-edit.ts`; BENCH_VERBOSE=1
 * shows the controller's log).
 */
import { metricPrefix } from '../lib/telemetry/metrics.ts';
import type { FakeApiServer } from '../spec/support/fake-apiserver/index.ts';
import { Notifier } from '../spec/support/notifier.ts';
import { reservePort } from '../spec/support/ports.ts';
import { histogramTotals, parseExposition } from '../spec/support/prometheus-text.ts';
import { NAMESPACE, POD, replaced, startClusterWorld, startController } from './cluster-world.ts';
import { median } from './timing.ts';

const SIZES = process.env['BENCH_CONFIG_EDIT_SIZES']?.split(',').map(Number) ?? [10_000];
const EDITS = Number(process.env['BENCH_CONFIG_EDITS'] ?? 5);
if (SIZES.some((size) => !Number.isInteger(size) || size < 1) || !Number.isInteger(EDITS) || EDITS < 1) {
  throw new Error('BENCH_CONFIG_EDIT_SIZES must list positive integers and BENCH_CONFIG_EDITS be a positive integer');
}
const TARGET_MS = 1_000;
const DEPLOYED = new RegExp(`deployed revision \\d+ to ${POD}`);

/** The sums of the controller's render and validation histograms, in ms. */
async function effortMs(metricsPort: number): Promise<{ readonly render: number; readonly validate: number }> {
  const exposition = parseExposition(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), { openMetrics: false });
  return {
    render: histogramTotals(exposition, `${metricPrefix}render_duration_seconds`).sum * 1000,
    validate: histogramTotals(exposition, `${metricPrefix}validation_duration_seconds`, { result: 'valid' }).sum * 1000,
  };
}

interface Edit {
  /** From the PATCH to the deployment's log line. */
  readonly ms: number;
  /** The deployment itself: the Data Plane API's writes and HAProxy's reload. */
  readonly deployMs: number;
  /** The render and the `haproxy -c` of what it rendered. */
  readonly renderMs: number;
  readonly validateMs: number;
  readonly lists: readonly string[];
}

interface Row {
  readonly size: number;
  readonly coldStartMs: number;
  readonly coldRenderMs: number;
  readonly templateEdits: readonly Edit[];
  readonly resourceAdded: Edit;
}

/** The configuration as the world lays it out, with `timeout client` of `seconds` and `extra` watched resources. */
function variants(config: string): (seconds: number, extra?: string) => string {
  const base = replaced(replaced(config, 'timeout client 30s', 'timeout client TIMEOUT'), /^ignoreFields:/m, 'EXTRAignoreFields:');
  return (seconds, extra = '') => base.replace('timeout client TIMEOUT', `timeout client ${seconds}s`).replace('EXTRAignoreFields:', `${extra}ignoreFields:`);
}

/** LIST requests (pages of 500) by resource and namespace: `ingresses * x20`. */
function summary(lists: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const list of lists) counts.set(list, (counts.get(list) ?? 0) + 1);
  return [...counts].map(([list, count]) => `${list} x${count}`).join(', ') || 'none';
}

function listsSince(fake: FakeApiServer, at: number): string[] {
  return fake.requests.entries
    .slice(at)
    .filter((request) => request.verb === 'list')
    .map((request) => `${request.resource} ${request.namespace ?? '*'}`);
}

async function measure(size: number): Promise<Row> {
  let config: (seconds: number, extra?: string) => string = () => '';
  const world = await startClusterWorld(size, (laidOut) => {
    config = variants(laidOut);
    return config(30);
  });
  const { fake } = world;
  try {
    let deployments = 0;
    let lastDeployMs = 0;
    const deployed = new Notifier();
    const metricsPort = await reservePort();
    const started = process.hrtime.bigint();
    const controller = await startController(world, {
      metricsPort,
      line: (line) => {
        if (!DEPLOYED.test(line)) return;
        lastDeployMs = Number((JSON.parse(line) as { durationMs: number }).durationMs);
        deployments += 1;
        deployed.changed();
      },
    });
    const exited = new Promise<never>((_, reject) => controller.process.once('exit', (code) => reject(new Error(`the controller exited (${code}):\n${controller.errors.join('\n')}`))));
    // Its exit at the end, once stopped, is no failure of a race already won.
    exited.catch(() => undefined);
    /** Resolves at the next deployment after `count` of them, with the time since `from`. */
    const deploymentAfter = (count: number, from: bigint) =>
      Promise.race([
        deployed.until(
          () => (deployments > count ? Number(process.hrtime.bigint() - from) / 1e6 : undefined),
          () => `deployment ${count + 1} (${controller.errors.join('\n')})`,
          120_000,
        ),
        exited,
      ]);
    try {
      const coldStartMs = await deploymentAfter(0, started);
      const { render: coldRenderMs } = await effortMs(metricsPort);
      const edit = async (text: string): Promise<Edit> => {
        const count = deployments;
        const at = fake.requests.entries.length;
        const before = await effortMs(metricsPort);
        const from = process.hrtime.bigint();
        fake.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' }, { data: { 'config.yaml': text } });
        const ms = await deploymentAfter(count, from);
        const after = await effortMs(metricsPort);
        return { ms, deployMs: lastDeployMs, renderMs: after.render - before.render, validateMs: after.validate - before.validate, lists: listsSince(fake, at) };
      };
      const templateEdits: Edit[] = [];
      for (let i = 1; i <= EDITS; i++) templateEdits.push(await edit(config(30 + i)));
      const resourceAdded = await edit(config(30 + EDITS + 1, '  allconfigmaps:\n    apiVersion: v1\n    kind: ConfigMap\n\n'));
      return { size, coldStartMs, coldRenderMs, templateEdits, resourceAdded };
    } finally {
      await controller.stop();
    }
  } finally {
    await world.close();
  }
}

const out = (text: string) => process.stdout.write(`${text}\n`);
const rows: Row[] = [];
for (const size of SIZES) {
  process.stderr.write(`configuration edits with ${size} Ingresses...\n`);
  rows.push(await measure(size));
}
out(`Controller configuration edits: PATCH of the ConfigMap to deployment, medians of ${EDITS} template edits, against references from the same run:`);
out('the cold start (process start to first deployment: every resource listed, every object rendered the first time), the first render, and `haproxy -c`');
out('');
out(
  '| ingresses | cold start ms | template edit ms | / cold start | of it, deployment ms | controller ms | render ms | / first render | / haproxy -c | LISTs, most in one edit | resource added ms | its LISTs |',
);
out('|---|---|---|---|---|---|---|---|---|---|---|---|');
const medianOf = (row: Row, pick: (edit: Edit) => number) => median(row.templateEdits.map(pick));
for (const row of rows) {
  const [edit, deploy, controller] = [medianOf(row, (e) => e.ms), medianOf(row, (e) => e.deployMs), medianOf(row, (e) => e.ms - e.deployMs)];
  const [render, validate] = [medianOf(row, (e) => e.renderMs), medianOf(row, (e) => e.validateMs)];
  const lists = Math.max(...row.templateEdits.map((e) => e.lists.length));
  out(
    `| ${row.size} | ${row.coldStartMs.toFixed(0)} | ${edit.toFixed(0)} | ${(edit / row.coldStartMs).toFixed(3)} | ${deploy.toFixed(0)} | ${controller.toFixed(0)} | ${render.toFixed(0)} | ` +
      `${(render / row.coldRenderMs).toFixed(3)} | ${(render / validate).toFixed(3)} | ${lists} | ${row.resourceAdded.ms.toFixed(0)} | ${summary(row.resourceAdded.lists)} |`,
  );
}
out('');
const largest = rows.at(-1)!;
const controllerMs = medianOf(largest, (e) => e.ms - e.deployMs);
const lists = largest.templateEdits.flatMap((e) => e.lists);
const met = controllerMs < TARGET_MS && lists.length === 0;
out(
  `target: a template edit handed to the Data Plane API in under ${TARGET_MS / 1000} s (the HAProxy reload it needs on top), with no LIST request, at ${largest.size} Ingresses ` +
    `(${controllerMs.toFixed(0)} ms, ${lists.length} LISTs${lists.length > 0 ? `: ${summary(lists)}` : ''}): ${met ? 'met' : 'NOT met'}`,
);
