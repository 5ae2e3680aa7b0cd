/**
 * Per-request cost of HTTPRoute header, query parameter and method matches
 * (candidate lists, docs/adr/0012-header-query-method-matches.md) and of
 * route policies, through a real HAProxy. Both are reached through map
 * lookups (docs/adr/0025-requests-cost-the-same-with-many-policies.md): a
 * list's candidates by one lookup per shape of conditions, keyed by the
 * request's own values, and a policy's header changes by one rule per
 * header slot, their values looked up by the request's policy key; what a
 * request pays grows with the shapes and slots of the world, not with its
 * condition sets and policies.
 *
 * Two worlds of BENCH_REQUEST_ROUTES HTTPRoutes (10k), rendered with the
 * shipped configuration, each served by its own HAProxy on loopback:
 *   - bare: every route a host and a path to a Service, and 50 Ingresses
 *     with external authentication (nginx auth-url, one policy): each
 *     request first asks an auth service through the controller's Lua
 *     action (lib/lua/external-auth.ts), which answers 200 with the X-Route
 *     header the backend then gets (auth-response-headers);
 *   - full: the same, but one route in BENCH_REQUEST_EVERY (10) also has a
 *     match with its own header (half of them) or its own query parameter
 *     and method (the other half) before its plain rule, and another one in
 *     BENCH_REQUEST_EVERY sets its own request header (a policy each):
 *     1,000 distinct condition sets and 1,000 more policies at 10k routes.
 * Services' endpoints are a third HAProxy that answers every request itself
 * with the port it was reached on and the X-Route header it got, so every
 * response proves where the request was routed and what the policy did.
 *
 * Each round sends, over BENCH_REQUEST_CONNECTIONS keep-alive connections
 * for BENCH_REQUEST_SECONDS, requests to plain and external-auth routes of
 * the bare world, then plain, header-matched, query-and-method-matched,
 * policy and external-auth routes of the full world (the order rotates each
 * round); it records requests per second, and the CPU time the serving
 * HAProxy's threads spent per request (from /proc: the load generator's own
 * cost is not in it). Medians of BENCH_REQUEST_ROUNDS rounds are printed as
 * ratios to the bare world's plain routes, and to the same kind of route in
 * the bare world (its plain routes, but external auth to its own, which asks
 * the auth service besides), in the same run: informational, never a pass or
 * fail.
 *
 * Run with `node bench/request-cost.ts` (part of `npm run bench`).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ControllerConfig } from '../lib/config/types.ts';
import { readCapabilities } from '../lib/haproxy/capabilities.ts';
import { checkConfig, haproxyBinary } from '../lib/haproxy/check.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { writeRenderedFiles } from '../lib/render/write-files.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { HAProxyProcess } from '../spec/support/dataplane-emulator/haproxy-process.ts';
import { reservePort } from '../spec/support/ports.ts';
import { gatewayClassObject } from './world.ts';
import { median } from './timing.ts';

const ROUTES = Number(process.env['BENCH_REQUEST_ROUTES'] ?? 10_000);
const EVERY = Number(process.env['BENCH_REQUEST_EVERY'] ?? 10);
const SECONDS = Number(process.env['BENCH_REQUEST_SECONDS'] ?? 1.5);
const ROUNDS = Number(process.env['BENCH_REQUEST_ROUNDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_REQUEST_CONNECTIONS'] ?? 8);
/** Requests of one kind go to this many routes of that kind, in turn. */
const HOSTS_PER_KIND = 50;
const NAMESPACE = 'apps';
const LOOPBACK = '127.0.0.1';

type Kind = 'plain' | 'header' | 'query' | 'policy' | 'auth';

/** Route i's kind in the full world (every route is plain in the bare one). */
function kindOf(i: number): Kind {
  if (i % EVERY === 1) return Math.floor(i / EVERY) % 2 === 0 ? 'header' : 'query';
  if (i % EVERY === 2) return 'policy';
  return 'plain';
}

/** The Services: ten plain ones, one behind matched conditions, one behind policies; each reached on its own port of the answering HAProxy. */
const SERVICES = [...Array.from({ length: 10 }, (_, n) => `plain-${n}`), 'matched', 'policy', 'authed'] as const;
/** The answering HAProxy's port for auth requests, beside the Services' ones. */
const AUTH = 'auth-service';
/** The X-Route value the auth service answers with, which the backend of an auth'd route must get. */
const AUTH_USER = 'auth-user';
const plainService = (i: number) => `plain-${i % 10}`;

interface Ports {
  readonly http: number;
  readonly status: number;
  readonly https: number;
}

function httpRoute(i: number, full: boolean): KubeObject {
  const kind = full ? kindOf(i) : 'plain';
  const to = (name: string) => [{ name, port: 80 }];
  const prefix = { path: { type: 'PathPrefix', value: '/' } };
  const plain = { matches: [prefix], backendRefs: to(kind === 'policy' ? 'policy' : plainService(i)) };
  const rules =
    kind === 'header'
      ? [{ matches: [{ ...prefix, headers: [{ name: 'X-Tenant', value: `tenant-${i}` }] }], backendRefs: to('matched') }, plain]
      : kind === 'query'
        ? [{ matches: [{ ...prefix, method: 'POST', queryParams: [{ name: 'version', value: `v${i}` }] }], backendRefs: to('matched') }, plain]
        : kind === 'policy'
          ? [{ ...plain, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Route', value: `team-${i}` }] } }] }]
          : [plain];
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: `route-${i}`,
      namespace: NAMESPACE,
      uid: `uid-route-${i}`,
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    },
    spec: { parentRefs: [{ name: 'web' }], hostnames: [`route-${i}.example.com`], rules },
  };
}

/** An Ingress whose requests ask the auth service first and pass its X-Route on to the backend. */
function authedIngress(n: number, authPort: number): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: `auth-${n}`,
      namespace: NAMESPACE,
      uid: `uid-auth-${n}`,
      resourceVersion: '1',
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(),
      annotations: { 'nginx.ingress.kubernetes.io/auth-url': `http://${LOOPBACK}:${authPort}/auth`, 'nginx.ingress.kubernetes.io/auth-response-headers': 'X-Route' },
    },
    spec: {
      ingressClassName: 'haproxy',
      rules: [{ host: `auth-${n}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'authed', port: { number: 80 } } } }] } }],
    },
  };
}

function world(full: boolean, ports: Ports, backendPorts: ReadonlyMap<string, number>): Map<string, KubeObject[]> {
  const meta = (name: string) => ({ name, namespace: NAMESPACE, uid: `uid-${name}`, resourceVersion: '1' });
  return new Map([
    ['ingresses', Array.from({ length: HOSTS_PER_KIND }, (_, n) => authedIngress(n, backendPorts.get(AUTH)!))],
    ['services', SERVICES.map((name) => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec: { ports: [{ name: 'http', port: 80, targetPort: backendPorts.get(name) }] } }))],
    [
      'endpointslices',
      SERVICES.map((name) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { ...meta(`${name}-1`), labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: backendPorts.get(name), protocol: 'TCP' }],
        endpoints: [{ addresses: [LOOPBACK], conditions: { ready: true } }],
      })),
    ],
    ['secrets', []],
    ['gatewayclasses', [gatewayClassObject()]],
    [
      'gateways',
      [
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          metadata: { ...meta('web'), generation: 1 },
          // The port clients reach HAProxy on (gatewayApi.httpPort, 80 by default), not the loopback port it binds here.
          spec: { gatewayClassName: 'haproxy', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
        },
      ],
    ],
    ['httproutes', Array.from({ length: ROUTES }, (_, i) => httpRoute(i, full))],
    ['referencegrants', []],
    ['namespaces', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, uid: 'uid-ns', resourceVersion: '1' } }]],
  ]);
}

/** A started HAProxy and the files it runs on. */
interface Served {
  readonly process: HAProxyProcess;
  readonly workerPid: number;
}

async function serve(dir: string, configFile: string): Promise<Served> {
  const check = await checkConfig(configFile);
  if (!check.valid) throw new Error(`haproxy -c refuses ${configFile}:\n${check.output}`);
  const haproxy = new HAProxyProcess({
    binary: haproxyBinary(),
    capabilities: await readCapabilities(),
    baseDir: dir,
    configFile,
    masterSocket: join(dir, 'master.sock'),
    pidFile: join(dir, 'haproxy.pid'),
    // The shipped configuration logs every request to stdout: kept off the disk, as a container runtime would take it.
    logFile: '/dev/null',
    timeoutMs: 30_000,
  });
  const info = await haproxy.start();
  return { process: haproxy, workerPid: info.workers[0]!.pid };
}

/** Renders a world into `dir` and serves it; returns the HAProxy and how many condition sets and policies the configuration has. */
async function serveWorld(config: ControllerConfig, dir: string, objects: Map<string, KubeObject[]>): Promise<Served & { readonly conditionSets: number; readonly policies: number }> {
  const stores = buildStores(config.watchedResources, objects, config.ignoreFields);
  const output = createRenderer(config, routingViews)({ stores, baseDir: dir });
  const problems = [...output.excluded, ...output.warnings];
  if (problems.length > 0) throw new Error(`the generated world has ${problems.length} problems, e.g. ${JSON.stringify(problems[0])}`);
  const configFile = await writeRenderedFiles(dir, output.files, config.dataplane);
  const served = await serve(dir, configFile);
  // A condition set is a candidates.map key after its list id (a fallback has none); a policy, the key after ':' in a path map line.
  const candidateKeys = [...(output.files.maps['candidates.map'] ?? '').matchAll(/^l[0-9a-f]{16}\/(\S+) /gm)].map((match) => match[1]);
  const conditionSets = new Set(candidateKeys).size;
  const pathLines = ['path-exact.map', 'path-prefix.map', 'path-regex.map', 'candidates.map'].map((map) => output.files.maps[map] ?? '').join('\n');
  const policies = new Set([...pathLines.matchAll(/:(p[0-9a-f]{16})$/gm)].map((match) => match[1])).size;
  return { ...served, conditionSets, policies };
}

/** CPU time of all of a process's threads, in ns (first field of each thread's schedstat). */
async function cpuNs(pid: number): Promise<number> {
  let total = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  }
  return total;
}

/** One request to send and the body that proves it was routed right. */
interface Probe {
  readonly request: string;
  readonly body: string;
}

function probes(kind: Kind, ports: ReadonlyMap<string, number>): Probe[] {
  if (kind === 'auth') {
    return Array.from({ length: HOSTS_PER_KIND }, (_, n) => ({ request: `GET /a HTTP/1.1\r\nHost: auth-${n}.example.com\r\n\r\n`, body: `${ports.get('authed')} ${AUTH_USER}` }));
  }
  const indices = Array.from({ length: ROUTES }, (_, i) => i).filter((i) => kindOf(i) === kind);
  const step = Math.max(1, Math.floor(indices.length / HOSTS_PER_KIND));
  return indices
    .filter((_, n) => n % step === 0)
    .slice(0, HOSTS_PER_KIND)
    .map((i) => {
      const host = `Host: route-${i}.example.com\r\n`;
      if (kind === 'header') return { request: `GET /a HTTP/1.1\r\n${host}X-Tenant: tenant-${i}\r\n\r\n`, body: `${ports.get('matched')} ` };
      if (kind === 'query') return { request: `POST /a?version=v${i} HTTP/1.1\r\n${host}Content-Length: 0\r\n\r\n`, body: `${ports.get('matched')} ` };
      if (kind === 'policy') return { request: `GET /a HTTP/1.1\r\n${host}\r\n`, body: `${ports.get('policy')} team-${i}` };
      return { request: `GET /a HTTP/1.1\r\n${host}\r\n`, body: `${ports.get(plainService(i))} ` };
    });
}

/**
 * Sends the probes in turn over `connections` keep-alive connections for
 * `seconds`, each connection one request at a time; every response must be
 * a 200 with the probe's body. Resolves with the responses counted.
 */
function load(port: number, list: readonly Probe[], seconds: number, connections: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let next = 0;
  let count = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, LOOPBACK);
      socket.setNoDelay(true);
      socket.setEncoding('latin1');
      let buffer = '';
      let current: Probe;
      let done = false;
      const send = () => {
        current = list[next++ % list.length]!;
        socket.write(current.request);
      };
      const fail = (message: string) => {
        done = true;
        socket.destroy();
        reject(new Error(message));
      };
      socket.on('connect', send);
      socket.on('error', (error) => fail(`request to port ${port}: ${error.message}`));
      socket.on('close', () => {
        if (!done) fail(`port ${port} closed the connection before answering ${current.request.split('\r\n')[0]}`);
      });
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        const head = buffer.indexOf('\r\n\r\n');
        if (head < 0) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffer.slice(0, head))?.[1] ?? Number.NaN);
        if (!(buffer.length >= head + 4 + length)) return;
        const status = buffer.slice(9, 12);
        const body = buffer.slice(head + 4, head + 4 + length);
        if (status !== '200' || body !== current.body) {
          fail(`${current.request.split('\r\n').slice(0, 2).join(' ')}: expected 200 "${current.body}", got ${status} "${body}"`);
          return;
        }
        buffer = buffer.slice(head + 4 + length);
        count++;
        if (performance.now() < end) send();
        else {
          done = true;
          socket.end();
          resolve();
        }
      });
    });
  return Promise.all(Array.from({ length: connections }, one)).then(() => count);
}

/** The answering HAProxy: one port per Service, each answering with its port and the X-Route header it got; and the auth service, answering 200 with an X-Route. */
function answeringConfig(ports: ReadonlyMap<string, number>): string {
  const services = [...ports].filter(([name]) => name !== AUTH);
  return [
    'global',
    '  maxconn 4000',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend answer',
    ...services.map(([, port]) => `  bind ${LOOPBACK}:${port}`),
    '  http-request return status 200 content-type text/plain lf-string "%[dst_port] %[req.hdr(x-route)]"',
    'frontend auth',
    `  bind ${LOOPBACK}:${ports.get(AUTH)}`,
    `  http-request return status 200 hdr X-Route ${AUTH_USER}`,
    '',
  ].join('\n');
}

interface Case {
  readonly name: string;
  readonly served: Served;
  readonly port: number;
  readonly probes: readonly Probe[];
}

interface Sample {
  readonly perSecond: number;
  readonly cpuUsPerRequest: number;
}

async function measure(one: Case): Promise<Sample> {
  const cpuBefore = await cpuNs(one.served.workerPid);
  const start = performance.now();
  const count = await load(one.port, one.probes, SECONDS, CONNECTIONS);
  const seconds = (performance.now() - start) / 1000;
  const cpu = (await cpuNs(one.served.workerPid)) - cpuBefore;
  return { perSecond: count / seconds, cpuUsPerRequest: cpu / 1000 / count };
}

async function main(): Promise<void> {
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const dirs: string[] = [];
  const running: HAProxyProcess[] = [];
  try {
    const backendPorts = new Map<string, number>();
    for (const name of [...SERVICES, AUTH]) backendPorts.set(name, await reservePort(LOOPBACK));
    const answerDir = await mkdtemp(join(tmpdir(), 'haproxy-request-cost-answer-'));
    dirs.push(answerDir);
    await writeFile(join(answerDir, 'haproxy.cfg'), answeringConfig(backendPorts));
    running.push((await serve(answerDir, join(answerDir, 'haproxy.cfg'))).process);

    const worlds: { full: boolean; ports: Ports; served: Awaited<ReturnType<typeof serveWorld>> }[] = [];
    for (const full of [false, true]) {
      const ports: Ports = { http: await reservePort(LOOPBACK), status: await reservePort(LOOPBACK), https: await reservePort(LOOPBACK) };
      const dir = await mkdtemp(join(tmpdir(), `haproxy-request-cost-${full ? 'full' : 'bare'}-`));
      dirs.push(dir);
      const config: ControllerConfig = {
        ...loaded.config,
        templateValues: {
          ...loaded.config.templateValues,
          bindAddress: LOOPBACK,
          httpPort: ports.http,
          httpsPort: ports.https,
          statusPort: ports.status,
          runtimeSocket: join(dir, 'admin.sock'),
        },
      };
      const served = await serveWorld(config, dir, world(full, ports, backendPorts));
      running.push(served.process);
      worlds.push({ full, ports, served });
    }
    const [bare, full] = worlds as [(typeof worlds)[number], (typeof worlds)[number]];
    const cases: Case[] = [
      { name: 'bare world: plain routes', served: bare.served, port: bare.ports.http, probes: probes('plain', backendPorts) },
      { name: 'bare world: external auth', served: bare.served, port: bare.ports.http, probes: probes('auth', backendPorts) },
      { name: 'full world: plain routes', served: full.served, port: full.ports.http, probes: probes('plain', backendPorts) },
      { name: 'full world: header match', served: full.served, port: full.ports.http, probes: probes('header', backendPorts) },
      { name: 'full world: query + method match', served: full.served, port: full.ports.http, probes: probes('query', backendPorts) },
      { name: 'full world: route policy', served: full.served, port: full.ports.http, probes: probes('policy', backendPorts) },
      { name: 'full world: external auth', served: full.served, port: full.ports.http, probes: probes('auth', backendPorts) },
    ];
    // Warm-up: connections, caches and the answering HAProxy, before anything is timed.
    for (const one of cases) await load(one.port, one.probes, 0.2, CONNECTIONS);
    const samples = new Map<string, Sample[]>(cases.map((one) => [one.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let n = 0; n < cases.length; n++) {
        const one = cases[(n + round) % cases.length]!;
        samples.get(one.name)!.push(await measure(one));
      }
    }
    const cpuOf = (name: string) => median(samples.get(name)!.map((s) => s.cpuUsPerRequest));
    const reference = samples.get(cases[0]!.name)!;
    const [referenceRate, referenceCpu] = [median(reference.map((s) => s.perSecond)), median(reference.map((s) => s.cpuUsPerRequest))];
    /** The same kind of route in the bare world: its plain routes, but its own external-auth routes for those. */
    const sameKind = (name: string) => cpuOf(name.endsWith('external auth') ? cases[1]!.name : cases[0]!.name);
    out(
      `${ROUTES} HTTPRoutes in each world; the full world has ${full.served.conditionSets} condition sets and ${full.served.policies} route policies, the bare one ` +
        `${bare.served.conditionSets} and ${bare.served.policies}; ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per case`,
    );
    out('');
    out(
      '| requests to | req/s (median) | req/s range | HAProxy CPU µs/request (median) | req/s vs bare plain | CPU/request vs bare plain | CPU/request vs the same kind in the bare world |',
    );
    out('|---|---|---|---|---|---|---|');
    for (const one of cases) {
      const list = samples.get(one.name)!;
      const rates = list.map((s) => s.perSecond);
      const [rate, cpu] = [median(rates), median(list.map((s) => s.cpuUsPerRequest))];
      out(
        `| ${one.name} | ${rate.toFixed(0)} | ${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)} | ${cpu.toFixed(1)} | ${(rate / referenceRate).toFixed(2)} | ${(cpu / referenceCpu).toFixed(2)} | ${(cpu / sameKind(one.name)).toFixed(2)} |`,
      );
    }
  } finally {
    // HAProxyProcess leaves its child unreferenced (it is made for mocha, which keeps the process alive):
    // a referenced timer keeps this script alive until every HAProxy has been waited for.
    const alive = setInterval(() => undefined, 1_000);
    try {
      for (const haproxy of running) await haproxy.stop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    } finally {
      clearInterval(alive);
    }
  }
}

await main();
