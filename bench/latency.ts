/**
 * Change-to-traffic benchmark for local mode: the shipped configuration, a
 * real HAProxy and real backends on loopback. Prints
 *   - the time from a manifest write to traffic served (measured here, over
 *     HTTP) and from the change to its deployment (read from the
 *     controller's own haproxy_template_ic_change_to_deploy_seconds
 *     histogram, scraped from /metrics before and after each change), for a
 *     change the Runtime API applies (an endpoint added) and for one that
 *     needs a reload (a new Ingress with a new Service);
 *   - the share of changes applied without a reload in a churn run of
 *     endpoint, path-to-existing-backend, certificate and new-backend
 *     changes, from the runtime_deploys_total and reloads_total counters,
 *     checked against HAProxy's master socket. Target: every endpoint, path
 *     and certificate change is reload-free;
 *   - the render, validation and deployment times of the whole run, from
 *     their histograms.
 *
 * Each change is made once the controller is idle (the minimum deployment
 * interval and the debounce passed since the last deployment), so the
 * leading edge renders it at once. BENCH_DEPLOYMENT_INTERVAL sets the minimum
 * deployment interval (a duration; the shipped 2s when absent).
 */
import { loadControllerConfig } from '../lib/config/load.ts';
import { LocalHarness } from '../spec/support/local-harness.ts';
import { ingress, service, slice, tlsSecret, type PathRule } from '../spec/support/manifest-builders.ts';
import { histogramTotals, parseExposition, sampleValue, type Exposition } from '../spec/support/prometheus-text.ts';
import { LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../spec/support/tls-fixture.ts';

const samples = Number(process.env['BENCH_SAMPLES'] ?? 3);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const site = (name: string, host: string, paths: [string, string][], tls?: string) =>
  ingress(
    name,
    host,
    paths.map(([path, serviceName]): PathRule => [path, 'Prefix', serviceName, { number: 80 }]),
    tls,
  );
const svc = (name: string, target: number) => service(name, [{ port: 80, targetPort: target }]);
const endpointSlice = (name: string, serviceName: string, port: number) => slice(name, serviceName, undefined, port);
const secret = (cert: string, key: string) => tlsSecret('tls', cert, key);

const interval = process.env['BENCH_DEPLOYMENT_INTERVAL'];
let idleMs = 0;
const harness = await LocalHarness.start({
  manifests: {},
  backends: 12,
  config: (shipped) => {
    const text = interval === undefined ? shipped : shipped.replace('  minDeploymentInterval: 2s\n', `  minDeploymentInterval: ${interval}\n`);
    const loaded = loadControllerConfig(text);
    if (!loaded.ok) throw new Error(`the benchmark's configuration does not load:\n${loaded.errors.join('\n')}`);
    if (interval !== undefined && text === shipped) throw new Error('the shipped configuration no longer sets dataplane.minDeploymentInterval to 2s');
    idleMs = Math.max(loaded.config.pipeline.minDeploymentIntervalMs, loaded.config.pipeline.debounceMs) + 100;
    return text;
  },
});
const ports = harness.backends;
const settle = () => new Promise((resolve) => setTimeout(resolve, idleMs));

const metric = (name: string) => `haproxy_template_ic_${name}`;

async function scrape(): Promise<Exposition> {
  const response = await fetch(`http://127.0.0.1:${harness.mode.observer.metricsPort}/metrics`);
  return parseExposition(await response.text(), { openMetrics: false });
}

/** How much a counter grew between two scrapes, over all its series. */
function grew(before: Exposition, after: Exposition, name: string): number {
  const total = (e: Exposition) => (e.get(name)?.samples ?? []).reduce((sum, s) => sum + s.value, 0);
  return total(after) - total(before);
}

/** A quantile from cumulative histogram buckets, interpolated within the bucket as Prometheus does. */
function quantile(exposition: Exposition, name: string, q: number): number {
  const buckets = (exposition.get(name)?.samples ?? [])
    .filter((s) => s.name === `${name}_bucket`)
    .map((s) => ({ le: Number(s.labels['le'] === '+Inf' ? Number.POSITIVE_INFINITY : s.labels['le']), count: s.value }));
  const merged = [...new Set(buckets.map((b) => b.le))].sort((a, b) => a - b).map((le) => ({ le, count: buckets.filter((b) => b.le === le).reduce((sum, b) => sum + b.count, 0) }));
  const total = merged.at(-1)?.count ?? 0;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of merged) {
    if (count >= rank) return le === Number.POSITIVE_INFINITY ? lower : lower + ((le - lower) * (rank - below)) / Math.max(count - below, 1);
    lower = le;
    below = count;
  }
  return lower;
}

/** Writes a change and measures until `served` holds, polling HTTP every 5 ms. */
async function timeToTraffic(change: () => Promise<void>, served: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  await change();
  for (;;) {
    if (await served().catch(() => false)) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

try {
  let mark = harness.mark();
  await harness.write('web.yaml', [site('web', 'web.example.com', [['/', 'web']]), svc('web', ports[0]!), endpointSlice('web-0', 'web', ports[0]!)].join('---\n'));
  await harness.write('tls.yaml', [site('secure', 'secure.example.com', [['/', 'web']], 'tls'), secret(SELF_SIGNED_CERT, SELF_SIGNED_KEY)].join('---\n'));
  await harness.next(mark, 'deployed');
  await harness.until('web.example.com', '/', [ports[0]!]);

  const runtimeTimes: number[] = [];
  const reloadTimes: number[] = [];
  const runtimeDeployLatencies: number[] = [];
  const reloadDeployLatencies: number[] = [];
  /** Measures one change: traffic served here, and its change-to-deploy latency from the controller's histogram. */
  const sample = async (mode: 'runtime' | 'reload', change: () => Promise<void>, served: () => Promise<boolean>) => {
    const before = await scrape();
    const from = harness.mark();
    const trafficMs = await timeToTraffic(change, served);
    await harness.next(from, 'deployed');
    const after = await scrape();
    const name = metric('change_to_deploy_seconds');
    const [a, b] = [histogramTotals(before, name, { mode }), histogramTotals(after, name, { mode })];
    if (b.count - a.count !== 1) throw new Error(`expected one ${mode} deployment in the metrics, got ${b.count - a.count}`);
    (mode === 'runtime' ? runtimeTimes : reloadTimes).push(trafficMs);
    (mode === 'runtime' ? runtimeDeployLatencies : reloadDeployLatencies).push((b.sum - a.sum) * 1000);
  };
  for (let i = 1; i <= samples; i++) {
    await settle();
    await sample(
      'runtime',
      () => harness.write(`web-${i}.yaml`, endpointSlice(`web-${i}`, 'web', ports[i]!)),
      async () => (await harness.answering('web.example.com', '/', 6)).includes(ports[i]!),
    );
    await settle();
    const host = `new-${i}.example.com`;
    await sample(
      'reload',
      () =>
        harness.write(`new-${i}.yaml`, [site(`new-${i}`, host, [['/', `new-${i}`]]), svc(`new-${i}`, ports[6 + i]!), endpointSlice(`new-${i}-0`, `new-${i}`, ports[6 + i]!)].join('---\n')),
      async () => (await harness.get(host, '/')).body.startsWith(`backend ${ports[6 + i]} `),
    );
  }

  // Churn: each change waits for its own deployment, and its mode is recorded.
  const kinds = ['endpoint', 'path', 'certificate', 'new backend'] as const;
  const modes = new Map<string, string[]>(kinds.map((kind) => [kind, []]));
  const reloadsBefore = await harness.reloads();
  const churnBefore = await scrape();
  for (let round = 0; round < samples * 2; round++) {
    for (const kind of kinds) {
      await settle();
      mark = harness.mark();
      if (kind === 'endpoint') {
        const file = `churn-endpoint.yaml`;
        if (round % 2 === 0) await harness.write(file, endpointSlice('churn-endpoint', 'web', ports[5]!));
        else await harness.remove(file);
      } else if (kind === 'path') {
        await harness.write(
          'web.yaml',
          [
            site('web', 'web.example.com', [
              ['/', 'web'],
              [`/p${round}`, 'web'],
            ]),
            svc('web', ports[0]!),
            endpointSlice('web-0', 'web', ports[0]!),
          ].join('---\n'),
        );
      } else if (kind === 'certificate') {
        const [cert, key] = round % 2 === 0 ? [LEAF_CERT, LEAF_KEY] : [SELF_SIGNED_CERT, SELF_SIGNED_KEY];
        await harness.write('tls.yaml', [site('secure', 'secure.example.com', [['/', 'web']], 'tls'), secret(cert, key)].join('---\n'));
      } else {
        await harness.write(
          `churn-backend-${round}.yaml`,
          [site(`cb-${round}`, `cb-${round}.example.com`, [['/', `cb-${round}`]]), svc(`cb-${round}`, ports[11]!), endpointSlice(`cb-${round}-0`, `cb-${round}`, ports[11]!)].join('---\n'),
        );
      }
      modes.get(kind)!.push((await harness.next(mark, 'deployed')).result.mode);
    }
  }
  const reloads = (await harness.reloads()) - reloadsBefore;
  const churnAfter = await scrape();
  const runtimeCounted = grew(churnBefore, churnAfter, metric('runtime_deploys_total'));
  const reloadsCounted = grew(churnBefore, churnAfter, metric('reloads_total'));

  const stats = (values: readonly number[]) => [String(values.length), median(values).toFixed(0), Math.min(...values).toFixed(0), Math.max(...values).toFixed(0)];
  const rows = [
    ['path', 'samples', 'median ms', 'min ms', 'max ms'],
    ['runtime (endpoint added): traffic served', ...stats(runtimeTimes)],
    ['runtime (endpoint added): deployed, from metrics', ...stats(runtimeDeployLatencies)],
    ['reload (new Ingress + Service): traffic served', ...stats(reloadTimes)],
    ['reload (new Ingress + Service): deployed, from metrics', ...stats(reloadDeployLatencies)],
  ];
  const print = (table: string[][]) => {
    const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
    for (const row of table) process.stdout.write(`${row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
  };
  process.stdout.write('\nTime from a manifest change to traffic served (measured over HTTP) and to its deployment\n');
  process.stdout.write('(haproxy_template_ic_change_to_deploy_seconds), each change made with the controller idle:\n');
  print(rows);
  process.stdout.write('\nChurn run, deployments by change kind:\n');
  const churnRows = [['change', 'changes', 'runtime', 'reload', 'reload-free']];
  let target = true;
  for (const kind of kinds) {
    const list = modes.get(kind)!;
    const runtime = list.filter((m) => m === 'runtime').length;
    const reload = list.filter((m) => m === 'reload').length;
    churnRows.push([kind, String(list.length), String(runtime), String(reload), `${((100 * runtime) / list.length).toFixed(0)}%`]);
    if (kind !== 'new backend' && reload > 0) target = false;
  }
  print(churnRows);
  const share = (100 * runtimeCounted) / (runtimeCounted + reloadsCounted);
  process.stdout.write(
    `\nreload-free share of all changes, from the metrics: ${share.toFixed(0)}% (runtime_deploys_total +${runtimeCounted}, reloads_total +${reloadsCounted}); ` +
      `reloads counted on the master socket: ${reloads}${reloads === reloadsCounted ? ', the same' : ', NOT the same'}\n`,
  );
  const final = await scrape();
  const stageRows = [['stage', 'count', 'mean ms', 'p50 ms', 'p95 ms']];
  for (const [stage, name] of [
    ['render', 'render_duration_seconds'],
    ['validation (haproxy -c)', 'validation_duration_seconds'],
    ['deployment', 'deploy_duration_seconds'],
    ['reconciliation', 'reconciliation_duration_seconds'],
  ] as const) {
    const { count, sum } = histogramTotals(final, metric(name));
    stageRows.push([
      stage,
      String(count),
      ((1000 * sum) / count).toFixed(1),
      (1000 * quantile(final, metric(name), 0.5)).toFixed(1),
      (1000 * quantile(final, metric(name), 0.95)).toFixed(1),
    ]);
  }
  process.stdout.write("\nWhole run, from the controller's histograms (quantiles interpolated within buckets):\n");
  print(stageRows);
  process.stdout.write(
    `reconciliations: ${sampleValue(final, metric('reconciliations_total'), { result: 'deployed' })} deployed, ${sampleValue(final, metric('reconciliations_total'), { result: 'unchanged' })} unchanged\n`,
  );
  process.stdout.write(`target (every endpoint, path and certificate change reload-free): ${target ? 'met' : 'NOT MET'}\n`);
} finally {
  await harness.stop();
}
