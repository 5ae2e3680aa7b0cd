/**
 * Change-to-traffic benchmark for local mode: the shipped configuration, a
 * real HAProxy and real backends on loopback. Prints
 *   - the time from a manifest write to traffic served, for a change the
 *     Runtime API applies (an endpoint added) and for one that needs a
 *     reload (a new Ingress with a new Service);
 *   - the share of changes applied without a reload in a churn run of
 *     endpoint, path-to-existing-backend, certificate and new-backend
 *     changes. Target: every endpoint, path and certificate change is
 *     reload-free (reloads counted from HAProxy's master socket).
 *
 * The figures include the controller's deliberate waits (500 ms debounce,
 * 2 s minimum deployment interval, seed defaults), which dominate them.
 */
import { LocalHarness } from '../spec/support/local-harness.ts';
import { ingress, service, slice, tlsSecret, type PathRule } from '../spec/support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../spec/support/tls-fixture.ts';

const samples = Number(process.env['BENCH_SAMPLES'] ?? 3);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const site = (name: string, host: string, paths: [string, string][], tls?: string) =>
  ingress(name, host, paths.map(([path, serviceName]): PathRule => [path, 'Prefix', serviceName, { number: 80 }]), tls);
const svc = (name: string, target: number) => service(name, [{ port: 80, targetPort: target }]);
const endpointSlice = (name: string, serviceName: string, port: number) => slice(name, serviceName, undefined, port);
const secret = (cert: string, key: string) => tlsSecret('tls', cert, key);

const harness = await LocalHarness.start({ manifests: {}, backends: 12 });
const ports = harness.backends;
const settle = () => new Promise((resolve) => setTimeout(resolve, 2_100));

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
  for (let i = 1; i <= samples; i++) {
    await settle();
    runtimeTimes.push(
      await timeToTraffic(
        () => harness.write(`web-${i}.yaml`, endpointSlice(`web-${i}`, 'web', ports[i]!)),
        async () => (await harness.answering('web.example.com', '/', 6)).includes(ports[i]!),
      ),
    );
    await settle();
    const host = `new-${i}.example.com`;
    reloadTimes.push(
      await timeToTraffic(
        () => harness.write(`new-${i}.yaml`, [site(`new-${i}`, host, [['/', `new-${i}`]]), svc(`new-${i}`, ports[6 + i]!), endpointSlice(`new-${i}-0`, `new-${i}`, ports[6 + i]!)].join('---\n')),
        async () => (await harness.get(host, '/')).body.startsWith(`backend ${ports[6 + i]} `),
      ),
    );
  }

  // Churn: each change waits for its own deployment, and its mode is recorded.
  const kinds = ['endpoint', 'path', 'certificate', 'new backend'] as const;
  const modes = new Map<string, string[]>(kinds.map((kind) => [kind, []]));
  const reloadsBefore = await harness.reloads();
  for (let round = 0; round < samples * 2; round++) {
    for (const kind of kinds) {
      await settle();
      mark = harness.mark();
      if (kind === 'endpoint') {
        const file = `churn-endpoint.yaml`;
        if (round % 2 === 0) await harness.write(file, endpointSlice('churn-endpoint', 'web', ports[5]!));
        else await harness.remove(file);
      } else if (kind === 'path') {
        await harness.write('web.yaml', [site('web', 'web.example.com', [['/', 'web'], [`/p${round}`, 'web']]), svc('web', ports[0]!), endpointSlice('web-0', 'web', ports[0]!)].join('---\n'));
      } else if (kind === 'certificate') {
        const [cert, key] = round % 2 === 0 ? [LEAF_CERT, LEAF_KEY] : [SELF_SIGNED_CERT, SELF_SIGNED_KEY];
        await harness.write('tls.yaml', [site('secure', 'secure.example.com', [['/', 'web']], 'tls'), secret(cert, key)].join('---\n'));
      } else {
        await harness.write(`churn-backend-${round}.yaml`, [site(`cb-${round}`, `cb-${round}.example.com`, [['/', `cb-${round}`]]), svc(`cb-${round}`, ports[11]!), endpointSlice(`cb-${round}-0`, `cb-${round}`, ports[11]!)].join('---\n'));
      }
      modes.get(kind)!.push((await harness.next(mark, 'deployed')).result.mode);
    }
  }
  const reloads = (await harness.reloads()) - reloadsBefore;

  const rows = [
    ['path', 'samples', 'median ms', 'min ms', 'max ms'],
    ['runtime (endpoint added)', String(runtimeTimes.length), median(runtimeTimes).toFixed(0), Math.min(...runtimeTimes).toFixed(0), Math.max(...runtimeTimes).toFixed(0)],
    ['reload (new Ingress + Service)', String(reloadTimes.length), median(reloadTimes).toFixed(0), Math.min(...reloadTimes).toFixed(0), Math.max(...reloadTimes).toFixed(0)],
  ];
  const print = (table: string[][]) => {
    const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
    for (const row of table) process.stdout.write(`${row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
  };
  process.stdout.write('\nTime from a manifest change to traffic served (includes the 500 ms debounce):\n');
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
  const all = [...modes.values()].flat();
  const share = (100 * all.filter((m) => m === 'runtime').length) / all.length;
  process.stdout.write(`\nreload-free share of all changes: ${share.toFixed(0)}%; reloads counted on the master socket: ${reloads}\n`);
  process.stdout.write(`target (every endpoint, path and certificate change reload-free): ${target ? 'met' : 'NOT MET'}\n`);
} finally {
  await harness.stop();
}
