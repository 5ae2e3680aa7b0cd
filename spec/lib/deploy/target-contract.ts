/**
 * The contract every deploy target meets under the one convergence
 * algorithm (lib/deploy/converge.ts), run against each target by its spec:
 * the local sockets target (local-target.spec.ts) and the Data Plane API
 * target over the emulator with the real API's behaviours
 * (dataplane-target.spec.ts). Real HAProxy (2.6 to 3.4), real HTTP to real backends,
 * real TLS handshakes; reloads counted on HAProxy's master, writes on the
 * target.
 *
 * The scenarios run in order on one HAProxy, each starting from the shape
 * the previous one left.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { startBackends } from '../../../examples/backends.ts';
import type { Converger } from '../../../lib/deploy/converge.ts';
import type { DeployedState } from '../../../lib/deploy/target.ts';

/** What the contract uses of a controller: the convergence of one target. */
export type Controller = Pick<Converger<DeployedState>, 'deploy' | 'status'>;
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';
import { listenAnywhere, reservePort } from '../../support/ports.ts';
import { servedSerial, serialOf } from '../../support/tls-handshake.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';
import { httpGet, servedBy } from '../../support/traffic.ts';

export const FIRST_CERTIFICATE = `${SELF_SIGNED_CERT}${SELF_SIGNED_KEY}`;
export const SECOND_CERTIFICATE = `${LEAF_CERT}${CA_CERT}${LEAF_KEY}`;

export interface ContractWorld {
  /** The configuration's base directory (`default-path origin`; maps are named under it). */
  readonly baseDir: string;
  /** The worker's stats socket the configuration must declare. */
  readonly statsSocket: string;
  /** The target replaces a loaded certificate at runtime (local: always; Data Plane API: 3.2 and later). */
  readonly certificatesAtRuntime: boolean;
  /** A controller on this HAProxy; a second call is a restarted controller, knowing nothing. */
  controller(): Controller;
  /** Reloads HAProxy's master has counted (a first start counts as none). */
  reloads(): Promise<number>;
  /** Starts counting writes to the target (Data Plane API: requests other than GET; local: files written). */
  markWrites(): Promise<void>;
  writesSinceMark(): Promise<number>;
  /** Deploys `files` behind the controller's back, as another writer would, and waits until HAProxy serves them. */
  tamper(files: RenderedFiles): Promise<void>;
  stop(): Promise<void>;
}

/** What the contract's configuration routes: backends with server ports, hosts, path prefixes, one certificate. */
export interface Shape {
  readonly backends: Readonly<Record<string, readonly number[]>>;
  /** host.map keys: exact hosts and `*.<domain>` wildcards (`*` is the no-host fallback). */
  readonly hosts: readonly string[];
  /** path-prefix.map: `<host key><path>` → backend. */
  readonly routes: Readonly<Record<string, string>>;
  readonly certificate: string;
}

export interface Ports {
  readonly http: number;
  readonly https: number;
  /** Held by another listener: a reload binding it fails. */
  readonly taken: number;
}

/**
 * The shape of the shipped template, with maps named by their absolute path
 * under the maps directory (the only name the Data Plane API reaches a
 * runtime map by, docs/dataplane-api-contract.md §6).
 */
export function contractFiles(world: Pick<ContractWorld, 'baseDir' | 'statsSocket'>, ports: Ports, shape: Shape, extra = ''): RenderedFiles {
  const maps = `${world.baseDir}/maps`;
  const backends = Object.entries(shape.backends).flatMap(([name, servers]) => [
    '',
    `backend ${name}`,
    '  balance roundrobin',
    ...servers.map((port) => `  server s${port} 127.0.0.1:${port} check`),
  ]);
  const config = [
    'global',
    `  default-path origin ${world.baseDir}`,
    `  stats socket ${world.statsSocket} mode 600 level admin expose-fd listeners`,
    '  stats timeout 30s',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    '',
    'frontend http',
    `  bind 127.0.0.1:${ports.http}`,
    `  bind 127.0.0.1:${ports.https} ssl crt-list general/crt-list.txt`,
    '  http-request set-var(txn.path) path',
    `  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,map(${maps}/host.map)`,
    `  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,regsub(^[^.]*,*),map(${maps}/host.map) if !{ var(txn.host) -m found }`,
    '  http-request set-var(txn.host) str(*) if !{ var(txn.host) -m found }',
    '  http-request set-var(txn.route) var(txn.host),concat(,txn.path,)',
    `  http-request set-var(txn.backend) var(txn.route),map_beg(${maps}/path-prefix.map)`,
    '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
    '  default_backend default-404',
    '',
    'backend default-404',
    '  http-request deny deny_status 404',
    ...backends,
    extra,
  ].join('\n');
  return {
    config,
    maps: {
      'host.map': shape.hosts.map((host) => `${host} ${host}\n`).join(''),
      'path-prefix.map': Object.entries(shape.routes)
        .map(([key, backend]) => `${key} ${backend}\n`)
        .join(''),
    },
    certificates: { 'site.pem': shape.certificate },
    files: { 'crt-list.txt': 'ssl/site.pem\n' },
  };
}

export function describeTargetContract(name: string, start: () => Promise<ContractWorld>): void {
  describe(`deploy target contract: ${name}`, function () {
    this.timeout(30_000);
    let world: ContractWorld;
    let controller: Controller;
    let ports: Ports;
    let servers: readonly number[];
    let stopBackends: () => Promise<void>;
    let holder: Server;
    let shape: Shape;
    let hash = 0;

    const files = (next: Shape, extra = '') => contractFiles(world, ports, next, extra);
    const deploy = (next: Shape, reason: 'change' | 'drift' = 'change') => controller.deploy(files(next), `h${++hash}`, reason);
    const served = (host: string, backendPorts: readonly number[]) => servedBy(host, backendPorts, ['127.0.0.1'], ports.http);
    const answer = (host: string, path: string) => httpGet('127.0.0.1', ports.http, host, path);

    before(async () => {
      const backends = await startBackends([0, 0, 0, 0]);
      servers = backends.ports;
      stopBackends = backends.stop;
      holder = createServer((socket) => socket.destroy());
      ports = { http: await reservePort(), https: await reservePort(), taken: await listenAnywhere(holder) };
      world = await start();
      controller = world.controller();
      const [a] = servers as [number];
      shape = { backends: { web: [a] }, hosts: ['shop.example.com'], routes: { 'shop.example.com/': 'web' }, certificate: FIRST_CERTIFICATE };
    });

    after(async () => {
      await world?.stop();
      await stopBackends?.();
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    });

    it('deploys a first configuration with a reload and serves it over HTTP and TLS', async () => {
      const result = await deploy(shape);
      expect(result.mode).to.equal('reload');
      await served('shop.example.com', [servers[0]!]);
      expect(await servedSerial('127.0.0.1', ports.https, 'shop.example.com')).to.equal(serialOf(SELF_SIGNED_CERT));
    });

    it('finds nothing to do for the same files, on three drift checks too, and writes nothing', async () => {
      const reloads = await world.reloads();
      await world.markWrites();
      expect(await deploy(shape)).to.deep.equal({ mode: 'unchanged', operations: 0 });
      for (let check = 0; check < 3; check++) expect(await deploy(shape, 'drift')).to.deep.equal({ mode: 'unchanged', operations: 0 });
      expect(await world.writesSinceMark()).to.equal(0);
      expect(await world.reloads()).to.equal(reloads);
    });

    it('adds and removes endpoints without a reload', async () => {
      const [a, b, c] = servers as [number, number, number];
      const reloads = await world.reloads();
      shape = { ...shape, backends: { web: [a, b, c] } };
      expect((await deploy(shape)).mode).to.equal('runtime');
      await served('shop.example.com', [a, b, c]);
      shape = { ...shape, backends: { web: [b, c] } };
      expect((await deploy(shape)).mode).to.equal('runtime');
      await served('shop.example.com', [b, c]);
      expect(await world.reloads()).to.equal(reloads);
    });

    it('routes a new path on an existing host to an existing backend without a reload', async () => {
      const [, b, c, d] = servers as [number, number, number, number];
      shape = { ...shape, backends: { web: [b, c], api: [d] } };
      expect((await deploy(shape)).mode).to.equal('reload');
      const reloads = await world.reloads();
      expect(await answer('shop.example.com', '/api/orders')).to.match(new RegExp(`^200 backend (${b}|${c}) `));
      // Listed after the shorter prefix it extends: map_beg finds the longest prefix wherever it is.
      shape = { ...shape, routes: { ...shape.routes, 'shop.example.com/api/': 'api' } };
      expect((await deploy(shape)).mode).to.equal('runtime');
      expect(await answer('shop.example.com', '/api/orders')).to.equal(`200 backend ${d} GET /api/orders`);
      expect(await world.reloads()).to.equal(reloads);
    });

    it('serves a new wildcard host', async () => {
      const [, b, c, d] = servers as [number, number, number, number];
      shape = { ...shape, hosts: [...shape.hosts, '*.apps.example.com'], routes: { ...shape.routes, '*.apps.example.com/': 'api' } };
      await deploy(shape);
      await served('one.apps.example.com', [d]);
      await served('shop.example.com', [b, c]);
    });

    it('rotates a certificate, without a reload where the target replaces it at runtime: the new serial in the next handshake', async () => {
      const reloads = await world.reloads();
      shape = { ...shape, certificate: SECOND_CERTIFICATE };
      expect((await deploy(shape)).mode).to.equal(world.certificatesAtRuntime ? 'runtime' : 'reload');
      expect(await servedSerial('127.0.0.1', ports.https, 'shop.example.com')).to.equal(serialOf(LEAF_CERT));
      expect(await world.reloads()).to.equal(world.certificatesAtRuntime ? reloads : reloads + 1);
    });

    it('gives a restarted controller nothing to do on the same files: no reload, no write', async () => {
      const reloads = await world.reloads();
      await world.markWrites();
      controller = world.controller();
      expect(await deploy(shape)).to.deep.equal({ mode: 'unchanged', operations: 0 });
      expect(await world.writesSinceMark()).to.equal(0);
      expect(await world.reloads()).to.equal(reloads);
    });

    it('repairs a change made behind its back at the next drift check', async () => {
      const [a, b, c] = servers as [number, number, number];
      await world.tamper(files({ ...shape, backends: { ...shape.backends, web: [a] } }));
      await served('shop.example.com', [a]);
      expect((await deploy(shape, 'drift')).mode).to.not.equal('unchanged');
      await served('shop.example.com', [b, c]);
      expect(await deploy(shape, 'drift')).to.deep.equal({ mode: 'unchanged', operations: 0 });
    });

    it('reports a reload HAProxy refuses with its message, keeps serving, and converges again without a reload', async () => {
      const [, b, c] = servers as [number, number, number];
      const error = await controller.deploy(files(shape, `\nlisten clash\n  bind 127.0.0.1:${ports.taken}\n`), `h${++hash}`, 'change').then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.match(/cannot bind socket|Address already in use/);
      await served('shop.example.com', [b, c]);
      // The refused attempt counts as one on the master.
      const reloads = await world.reloads();
      // The files go back to the last ones HAProxy loaded: the Data Plane API's last-known-good file
      // predates runtime changes written since, which the next deploy writes (and finds applied) again.
      expect((await deploy(shape)).mode).to.be.oneOf(['unchanged', 'runtime']);
      expect(controller.status.consecutiveFailures).to.equal(0);
      await served('shop.example.com', [b, c]);
      expect(await world.reloads()).to.equal(reloads);
    });
  });
}
