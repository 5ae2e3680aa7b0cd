/**
 * The Data Plane API target under the convergence algorithm, against the
 * emulator with the real API's behaviours (written-back configuration, path
 * patterns, certificates described and written to storage only) in front of
 * a real HAProxy 2.6: the shared deploy target contract, then what only an
 * API in front of HAProxy does (other writers, map keys its paths refuse,
 * releases without runtime certificate endpoints, an instance restarted
 * empty). Reloads are counted on HAProxy's master, requests at the emulator.
 */
import { expect } from 'chai';
import { startBackends } from '../../../examples/backends.ts';
import { DataplaneClient } from '../../../lib/dataplane/client.ts';
import { Converger } from '../../../lib/deploy/converge.ts';
import type { DataplaneState } from '../../../lib/deploy/dataplane-state.ts';
import { DataplaneTarget } from '../../../lib/deploy/dataplane-target.ts';
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../support/dataplane-emulator/index.ts';
import { reservePort } from '../../support/ports.ts';
import { servedSerial, serialOf } from '../../support/tls-handshake.ts';
import { LEAF_CERT } from '../../support/tls-fixture.ts';
import { httpGet, servedBy } from '../../support/traffic.ts';
import { contractFiles, describeTargetContract, FIRST_CERTIFICATE, SECOND_CERTIFICATE, type ContractWorld, type Ports, type Shape } from './target-contract.ts';

interface DataplaneWorld extends ContractWorld {
  readonly emulator: Emulator;
  /** A client of the emulator that is not the controller's: another writer. */
  readonly other: DataplaneClient;
  readonly controller: () => Converger<DataplaneState> & { readonly client: DataplaneClient };
}

async function dataplaneWorld(options: EmulatorOptions = {}): Promise<DataplaneWorld> {
  const emulator = await startEmulator(options);
  const clients: DataplaneClient[] = [];
  const client = () => {
    const created = new DataplaneClient({ url: emulator.url, username: emulator.credentials.user, password: emulator.credentials.password });
    clients.push(created);
    return created;
  };
  const other = client();
  let mark = 0;
  return {
    emulator,
    other,
    baseDir: emulator.baseDir,
    statsSocket: emulator.statsSocket,
    certificatesAtRuntime: emulator.release.runtimeCertificates,
    controller: () => {
      const own = client();
      return Object.assign(new Converger({ target: new DataplaneTarget({ client: own, reloadPollMs: 25 }) }), { client: own });
    },
    reloads: async () => (await emulator.processInfo()).reloads,
    markWrites: async () => {
      mark = emulator.requests.count;
    },
    writesSinceMark: async () => emulator.requests.entries.slice(mark).filter((request) => request.method !== 'GET').length,
    tamper: async (files) => {
      const written = await other.postRawConfiguration(files.config, { version: await other.configurationVersion() });
      const reload = await other.waitForReload(written.reloadId!, { pollMs: 25 });
      expect(reload.status).to.equal('succeeded');
    },
    stop: async () => {
      for (const each of clients) each.close();
      await emulator.stop();
    },
  };
}

describeTargetContract('a HAProxy behind the Data Plane API paired with it (3.2 on HAProxy 3.2, the chart’s)', () => dataplaneWorld());

describe('Data Plane API target: an API in front of HAProxy', function () {
  this.timeout(30_000);
  let world: DataplaneWorld;
  let controller: ReturnType<DataplaneWorld['controller']>;
  let ports: Ports;
  let backends: readonly number[];
  let stopBackends: () => Promise<void>;
  let shape: Shape;
  let hash = 0;

  const files = (next: Shape, extra = ''): RenderedFiles => contractFiles(world, ports, next, extra);
  const deploy = (next: Shape) => controller.deploy(files(next), `h${++hash}`, 'change');
  const served = (host: string, servers: readonly number[]) => servedBy(host, servers, ['127.0.0.1'], ports.http);
  const reloads = async () => (await world.emulator.processInfo()).reloads;

  before(async () => {
    ({ ports: backends, stop: stopBackends } = await startBackends([0, 0, 0]));
  });

  after(async () => {
    await stopBackends();
  });

  async function begin(options: EmulatorOptions = {}): Promise<void> {
    world = await dataplaneWorld(options);
    controller = world.controller();
    ports = { http: await reservePort(), https: await reservePort(), taken: 0 };
    shape = {
      backends: { web: [backends[0]!], api: [backends[1]!] },
      hosts: ['shop.example.com', '*.apps.example.com'],
      routes: { 'shop.example.com/': 'web', '*.apps.example.com/': 'api' },
      certificate: FIRST_CERTIFICATE,
    };
    expect((await deploy(shape)).mode).to.equal('reload');
  }

  afterEach(async () => {
    await world.stop();
  });

  it('costs four requests for a new endpoint: version check, add in maintenance, make ready, persist', async () => {
    await begin();
    const from = world.emulator.requests.count;
    expect((await deploy({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } })).mode).to.equal('runtime');
    expect(world.emulator.requests.entries.slice(from).map((request) => `${request.method} ${request.path}`)).to.deep.equal([
      'GET /v3/services/haproxy/configuration/version',
      'POST /v3/services/haproxy/runtime/backends/web/servers',
      `PUT /v3/services/haproxy/runtime/backends/web/servers/s${backends[2]}`,
      'POST /v3/services/haproxy/configuration/raw',
    ]);
    await served('shop.example.com', [backends[0]!, backends[2]!]);
  });

  it('adds a server with every option of its line, as a reload would have it (maxconn, check interval)', async () => {
    await begin();
    const withOptions = (next: Shape): RenderedFiles => {
      const rendered = files(next);
      return { ...rendered, config: rendered.config.replace(/^(  server s\d+ 127\.0\.0\.1:\d+ check)$/gm, '$1 inter 300 maxconn 7') };
    };
    expect((await controller.deploy(withOptions(shape), `h${++hash}`, 'change')).mode).to.equal('reload');
    const added = { ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } };
    expect((await controller.deploy(withOptions(added), `h${++hash}`, 'change')).mode).to.equal('runtime');
    await served('shop.example.com', [backends[0]!, backends[2]!]);
    // show stat's slim column is the server's maxconn.
    const stat = await runtimeCommand(world.emulator.statsSocket, 'show stat');
    const header = stat.split('\n')[0]!.replace(/^# /, '').split(',');
    const row = stat
      .split('\n')
      .find((line) => line.startsWith(`web,s${backends[2]},`))!
      .split(',');
    expect(row[header.indexOf('slim')]).to.equal('7');
  });

  it('reads and plans again after another writer moved the version, losing neither change', async () => {
    await begin();
    await world.emulator.bumpVersion();
    const result = await deploy({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } });
    expect(result.mode).to.equal('runtime');
    await served('shop.example.com', [backends[0]!, backends[2]!]);
    // The configuration the other writer left was read before writing on top of it: no version conflict at all.
    expect(world.emulator.requests.matching('GET', '/v3/services/haproxy/configuration/raw').length).to.equal(2);
  });

  it('retries a write that loses a race with another writer, replaying its runtime work safely', async () => {
    await begin();
    const original = controller.client.postRawConfiguration.bind(controller.client);
    let bumped = false;
    controller.client.postRawConfiguration = async (...args) => {
      if (!bumped) {
        bumped = true;
        await world.emulator.bumpVersion();
      }
      return original(...args);
    };
    const result = await deploy({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } });
    expect(result.mode).to.equal('runtime');
    expect(world.emulator.requests.matching('POST', '/v3/services/haproxy/configuration/raw').length).to.equal(3);
    await served('shop.example.com', [backends[0]!, backends[2]!]);
  });

  for (const release of ['3.3', '3.4'] as const) {
    it(`${release}: removes a wildcard host, whose keys no runtime path can carry, with the map replaced and one reload, saying why`, async () => {
      await begin({ release });
      const before = await reloads();
      const result = await deploy({ ...shape, hosts: ['shop.example.com'], routes: { 'shop.example.com/': 'web' } });
      expect(result.mode).to.equal('reload');
      expect(result.reloadReason).to.match(/^map (host|path-prefix)\.map: the key \*\.apps\.example\.com\/? cannot be changed or deleted through the Data Plane API/);
      expect(await reloads()).to.equal(before + 1);
      expect(await httpGet('127.0.0.1', ports.http, 'one.apps.example.com')).to.match(/^404 /);
      await served('shop.example.com', [backends[0]!]);
    });
  }

  it('adds a wildcard host at runtime: POST carries the key in the body', async () => {
    await begin();
    const before = await reloads();
    const result = await deploy({
      ...shape,
      hosts: [...shape.hosts, '*.beta.example.com'],
      routes: { ...shape.routes, '*.beta.example.com/': 'web' },
    });
    expect(result.mode).to.equal('runtime');
    await served('x.beta.example.com', [backends[0]!]);
    expect(await reloads()).to.equal(before);
  });

  it('replaces a map the configuration names by a relative path, with one reload, saying why', async () => {
    await begin();
    const relative = (next: Shape) => {
      const rendered = files(next);
      return { ...rendered, config: rendered.config.replaceAll(`${world.emulator.baseDir}/maps/path-prefix.map`, 'maps/path-prefix.map') };
    };
    await controller.deploy(relative(shape), 'relative', 'change');
    const result = await controller.deploy(relative({ ...shape, routes: { ...shape.routes, 'shop.example.com/api/': 'api' } }), 'relative-2', 'change');
    expect(result).to.include({ mode: 'reload' });
    expect(result.reloadReason).to.equal(
      `map path-prefix.map is named maps/path-prefix.map in the configuration; the Data Plane API reaches a runtime map only as ${world.emulator.mapsDir}/path-prefix.map`,
    );
    expect(await httpGet('127.0.0.1', ports.http, 'shop.example.com', '/api/x')).to.equal(`200 backend ${backends[1]} GET /api/x`);
  });

  it('3.1 has no runtime certificate endpoints: a rotation reloads, and the new certificate is served', async () => {
    await begin({ release: '3.1' });
    const result = await deploy({ ...shape, certificate: SECOND_CERTIFICATE });
    expect(result.mode).to.equal('reload');
    expect(result.reloadReason).to.match(/^runtime update failed: the Data Plane API has no runtime certificate endpoints \(they came in 3\.2\)/);
    expect(await servedSerial('127.0.0.1', ports.https, 'shop.example.com')).to.equal(serialOf(LEAF_CERT));
  });

  it('reloads when a runtime action fails after the configuration was written, and serves the desired state', async () => {
    await begin();
    // The server goes away behind the API's back: SetServerWeight then fails with a 500 after the write.
    await runtimeCommand(world.emulator.statsSocket, `set server web/s${backends[0]} state maint`);
    await runtimeCommand(world.emulator.statsSocket, `del server web/s${backends[0]}`);
    const result = await controller.deploy(withWeight(files(shape), backends[0]!), 'weighted', 'change');
    expect(result.mode).to.equal('reload');
    expect(result.reloadReason).to.match(/^runtime update failed: .*cannot execute SetServerWeight/);
    await served('shop.example.com', [backends[0]!]);
  });

  it('gives an instance restarted empty the full configuration', async () => {
    await begin();
    await world.emulator.restartEmpty();
    expect(await httpGet('127.0.0.1', ports.http, 'shop.example.com')).to.not.match(/^200/);
    expect((await controller.deploy(files(shape), 'again', 'change')).mode).to.equal('reload');
    await served('shop.example.com', [backends[0]!]);
  });

  it('reports a failing endpoint with its error and recovers on the next deploy', async () => {
    await begin();
    world.emulator.faults.failNext(1, 500);
    const error = await deploy({ ...shape, backends: { ...shape.backends, web: backends } }).catch((failure: unknown) => failure);
    expect(String(error)).to.match(/500/);
    expect(controller.status).to.include({ consecutiveFailures: 1 });
    expect((await deploy({ ...shape, backends: { ...shape.backends, web: backends } })).mode).to.equal('runtime');
    expect(controller.status).to.include({ consecutiveFailures: 0 });
  });

  it('reports a configuration the API refuses with HAProxy’s message and changes nothing there', async () => {
    await begin();
    const error = await controller.deploy(files(shape, '\nbackend bad\n  bogus-keyword\n'), 'bad', 'change').catch((failure: unknown) => failure);
    expect(String(error))
      .to.match(/validation error/)
      .and.match(/bogus-keyword/);
    await served('shop.example.com', [backends[0]!]);
  });
});

/** The same files with the first server of `web` at weight 2: a weight change, applied as a runtime action. */
function withWeight(files: RenderedFiles, port: number): RenderedFiles {
  return { ...files, config: files.config.replace(`server s${port} 127.0.0.1:${port} check`, `server s${port} 127.0.0.1:${port} check weight 2`) };
}
