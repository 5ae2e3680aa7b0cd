/**
 * Admission webhook benchmark: AdmissionReviews over real HTTPS to the
 * webhook (its server, handler and `haproxy -c` as `run` serves them) with
 * the shipped configuration over the world of bench/render.ts (1k and 10k
 * Ingresses, each with a Service and an EndpointSlice of 3 endpoints), from
 * 20 clients at once, each sending its next review when the last is
 * answered. Every review proposes a distinct Ingress (an update of a
 * stored one with another path, or a new one), so no verdict of `haproxy -c`
 * is reused: the worst case for the check.
 *
 * Prints p50 and p99 of the answer time next to one bare `haproxy -c` of
 * the configuration made for one Ingress (the reference in the same run:
 * machines are shared and noisy). Target: p99 below 100 ms at 10k
 * Ingresses (informational; only errors exit non-zero).
 *
 * Run with `npm run bench`. BENCH_SIZES=1000 picks other sizes,
 * BENCH_REVIEWS the reviews timed per size, BENCH_CHECKS the runs of
 * `haproxy -c` at once (default: as `run` picks, half the CPUs).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { AdmissionHandler } from '../lib/webhook/admission-handler.ts';
import { checkSmallConfiguration } from '../lib/webhook/haproxy-check.ts';
import { generateCertificate } from '../lib/webhook/serving-certificate.ts';
import { renderWorld } from '../lib/webhook/small-world.ts';
import { WebhookServer } from '../lib/webhook/webhook-server.ts';
import { endpointSliceObject, ingressObject, serviceObject } from './world.ts';

const SIZES = process.env['BENCH_SIZES']?.split(',').map(Number) ?? [1_000, 10_000];
const CLIENTS = 20;
const REVIEWS = Number(process.env['BENCH_REVIEWS'] ?? 600);
const WARMUP = 60;
const REFERENCE_RUNS = 9;

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

function percentile(values: readonly number[], p: number): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

let uid = 0;
/** The n-th proposed Ingress of a run: even n update stored Ingress n/2 with a path of their own, odd n create new ones. */
function proposal(size: number, n: number, round: number): { object: KubeObject; operation: 'CREATE' | 'UPDATE'; old: KubeObject | null } {
  if (n % 2 === 0) {
    const i = (n / 2) % size;
    const stored = ingressObject(i);
    const spec = stored['spec'] as { rules: { http: { paths: unknown[] } }[] };
    const path = { path: `/r${round}-${n}`, pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { name: 'http' } } } };
    const object = { ...stored, spec: { ...spec, rules: [{ ...spec.rules[0]!, http: { paths: [...spec.rules[0]!.http.paths, path] } }] } };
    return { object, operation: 'UPDATE', old: stored };
  }
  const created = ingressObject(size + round * 100_000 + n);
  return { object: { ...created, metadata: { ...created.metadata, resourceVersion: undefined } } as KubeObject, operation: 'CREATE', old: null };
}

function review(proposed: ReturnType<typeof proposal>): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `bench-${++uid}`,
      kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      namespace: proposed.object.metadata.namespace,
      name: proposed.object.metadata.name,
      operation: proposed.operation,
      object: proposed.object,
      oldObject: proposed.old,
      dryRun: false,
    },
  });
}

function post(agent: Agent, port: number, ca: string, body: string): Promise<{ status: number; allowed: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/validate?timeout=5s', method: 'POST', agent, ca, servername: 'hti.bench.svc', headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response?: { allowed: boolean } };
          resolve({ status: response.statusCode ?? 0, allowed: answer.response?.allowed === true });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Row {
  readonly size: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly perSecond: number;
  readonly referenceMs: number;
  readonly checks: number;
}

async function measure(size: number, round: number): Promise<Row> {
  const range = Array.from({ length: size }, (_, i) => i);
  const stores = buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', range.map((i) => ingressObject(i))],
      ['services', range.map(serviceObject)],
      ['endpointslices', range.map((i) => endpointSliceObject(i))],
      ['secrets', []],
    ]),
    config.ignoreFields,
  );
  const certificate = generateCertificate({ dnsNames: ['hti.bench.svc'] });
  const handler = new AdmissionHandler({ state: () => ({ config, stores }), ...(process.env['BENCH_CHECKS'] ? { checkConcurrency: Number(process.env['BENCH_CHECKS']) } : {}) });
  let checks = 0;
  const server = await WebhookServer.start({
    host: '127.0.0.1',
    port: 0,
    certificate,
    notReady: () => undefined,
    review: async (body, deadline) => {
      const reply = await handler.review(body, deadline);
      if (reply.record.check === 'ran') checks++;
      return reply;
    },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    // The reference: one haproxy -c of the configuration made for one Ingress, alone on the machine.
    const references: number[] = [];
    const world = new Map([
      ['ingresses', [ingressObject(0)]],
      ['services', [serviceObject(0)]],
      ['endpointslices', [endpointSliceObject(0)]],
      ['secrets', []],
    ]);
    for (let run = 0; run < REFERENCE_RUNS; run++) {
      const start = performance.now();
      await checkSmallConfiguration((baseDir) => renderWorld(config, world, baseDir), { allowDirectives: config.allowDirectives, dirs: config.dataplane });
      references.push(performance.now() - start);
    }
    const drive = async (count: number, offset: number) => {
      const times: number[] = [];
      let next = 0;
      const client = async () => {
        while (next < count) {
          const n = offset + next++;
          const body = review(proposal(size, n, round));
          const start = performance.now();
          const answer = await post(agent, server.port, certificate.ca, body);
          times.push(performance.now() - start);
          if (answer.status !== 200 || !answer.allowed) throw new Error(`${size} Ingresses: review ${n} answered ${answer.status}, allowed ${answer.allowed}`);
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: CLIENTS }, client));
      return { times, seconds: (performance.now() - started) / 1000 };
    };
    await drive(WARMUP, 0);
    checks = 0;
    const { times, seconds } = await drive(REVIEWS, WARMUP);
    return {
      size,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: Math.max(...times),
      perSecond: times.length / seconds,
      referenceMs: percentile(references, 50),
      checks,
    };
  } finally {
    agent.destroy();
    await server.close();
  }
}

function table(rows: readonly Row[]): string {
  const header = ['ingresses', 'reviews', 'clients', 'p50 ms', 'p99 ms', 'max ms', 'reviews/s', 'checked by haproxy -c', 'one haproxy -c ms', 'p99 / one haproxy -c'];
  const cells = rows.map((row) => [
    String(row.size),
    String(REVIEWS),
    String(CLIENTS),
    row.p50.toFixed(1),
    row.p99.toFixed(1),
    row.max.toFixed(1),
    row.perSecond.toFixed(0),
    String(row.checks),
    row.referenceMs.toFixed(1),
    (row.p99 / row.referenceMs).toFixed(2),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) => row.map((cell, i) => cell.padStart(widths[i]!)).join('  ');
  return [line(header), ...cells.map(line)].join('\n');
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const [round, size] of SIZES.entries()) rows.push(await measure(size, round + 1));
  process.stdout.write(`\nadmission webhook: AdmissionReviews over HTTPS, ${CLIENTS} clients at once, each review a distinct Ingress\n${table(rows)}\n`);
  const largest = rows.at(-1)!;
  process.stdout.write(`target: p99 below 100 ms at ${largest.size} Ingresses: ${largest.p99 < 100 ? 'met' : 'MISSED'} (${largest.p99.toFixed(1)} ms)\n`);
}

await main();
