import { expect } from 'chai';
import { request } from 'node:http';
import { startBackends } from '../../../examples/backends.ts';
import { DataplaneClient } from '../../../lib/dataplane/client.ts';
import { Synchroniser } from '../../../lib/dataplane/synchroniser.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';
import { startEmulator, type Emulator } from '../../support/dataplane-emulator/index.ts';
import { freePort } from '../../support/local-harness.ts';

/**
 * The synchroniser against an emulated Data Plane API over a real HAProxy:
 * reloads are counted on HAProxy's master socket, traffic is real HTTP.
 */

interface World {
  readonly emulator: Emulator;
  readonly client: DataplaneClient;
  readonly sync: Synchroniser;
  readonly port: number;
  readonly backends: readonly number[];
  readonly stopBackends: () => Promise<void>;
}

function files(world: Pick<World, 'emulator' | 'port'>, backends: Record<string, readonly number[]>, hosts: Record<string, string>): RenderedFiles {
  const sections = Object.entries(backends).map(
    ([name, ports]) => `backend ${name}\n  balance roundrobin\n${ports.map((port) => `  server s${port} 127.0.0.1:${port} check\n`).join('')}`,
  );
  return {
    config: [
      'global',
      `  default-path origin ${world.emulator.baseDir}`,
      `  stats socket ${world.emulator.statsSocket} level admin`,
      'defaults',
      '  mode http',
      '  timeout client 5s',
      '  timeout server 5s',
      '  timeout connect 5s',
      'frontend http',
      `  bind 127.0.0.1:${world.port}`,
      '  http-request set-var(txn.backend) req.hdr(host),field(1,:),map(maps/host.map)',
      '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
      ...sections,
      '',
    ].join('\n'),
    maps: { 'host.map': Object.entries(hosts).map(([host, backend]) => `${host} ${backend}\n`).join('') },
    certificates: {},
    files: {},
  };
}

function get(port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(`${res.statusCode} ${body.trim()}`));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls until `host` is answered by exactly the backends on `ports`. */
async function servedBy(world: World, host: string, ports: readonly number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = new Set<string>();
  while (Date.now() < deadline) {
    seen = new Set<string>();
    for (let i = 0; i < 2 * ports.length + 2; i++) seen.add(await get(world.port, host).catch((error: unknown) => String(error)));
    const expected = new Set(ports.map((port) => `200 backend ${port} GET /`));
    if (seen.size === expected.size && [...seen].every((answer) => expected.has(answer))) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${host} answered ${[...seen].join(' | ')}, expected backends ${ports.join(', ')}`);
}

describe('Data Plane API synchroniser', function () {
  this.timeout(40_000);
  let world: World | undefined;

  beforeEach(async () => {
    const emulator = await startEmulator();
    const client = new DataplaneClient({ url: emulator.url, username: emulator.credentials.user, password: emulator.credentials.password });
    const backends = await Promise.all([freePort(), freePort(), freePort()]);
    world = {
      emulator,
      client,
      sync: new Synchroniser({ client, reloadPollMs: 25 }),
      port: await freePort(),
      backends,
      stopBackends: await startBackends(backends),
    };
  });

  afterEach(async () => {
    world?.client.close();
    await world?.emulator.stop();
    await world?.stopBackends();
    world = undefined;
  });

  const reloads = async () => (await world!.emulator.processInfo()).reloads;

  it('deploys a first configuration with one reload and serves it', async () => {
    const w = world!;
    const [a] = w.backends as [number];
    const before = await reloads();
    const result = await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change');
    expect(result.mode).to.equal('reload');
    expect(await reloads()).to.equal(before + 1);
    await servedBy(w, 'web.example.com', [a]);
    expect(w.sync.status).to.include({ deployedHash: 'h1', lastMode: 'reload', consecutiveFailures: 0 });
  });

  it('scales servers up and down and changes map entries with zero reloads, and a later reload keeps them', async () => {
    const w = world!;
    const [a, b, c] = w.backends as [number, number, number];
    await w.sync.deploy(files(w, { web: [a], api: [c] }, { 'web.example.com': 'web' }), 'h1', 'change');
    const before = await reloads();
    const requestsBefore = w.client.requests;
    expect((await w.sync.deploy(files(w, { web: [a, b], api: [c] }, { 'web.example.com': 'web' }), 'h2', 'change')).mode).to.equal('runtime');
    const runtimeRequests = w.client.requests - requestsBefore;
    await servedBy(w, 'web.example.com', [a, b]);
    expect((await w.sync.deploy(files(w, { web: [b], api: [c] }, { 'web.example.com': 'web', 'api.example.com': 'api' }), 'h3', 'change')).mode).to.equal('runtime');
    await servedBy(w, 'web.example.com', [b]);
    await servedBy(w, 'api.example.com', [c]);
    expect(await reloads()).to.equal(before);
    // Checking the version, adding the server, marking it up and persisting the configuration.
    expect(runtimeRequests).to.equal(4);
    // A reload (a new backend) reads the files on disk: the runtime changes were persisted there.
    const result = await w.sync.deploy(files(w, { web: [b], api: [c], extra: [a] }, { 'web.example.com': 'web', 'api.example.com': 'api' }), 'h4', 'change');
    expect(result.mode).to.equal('reload');
    expect(await reloads()).to.equal(before + 1);
    await servedBy(w, 'web.example.com', [b]);
    await servedBy(w, 'api.example.com', [c]);
  });

  it('handles a version bump by another writer between read and write without losing the change', async () => {
    const w = world!;
    const [a, b] = w.backends as [number, number];
    await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change');
    await w.emulator.bumpVersion();
    const result = await w.sync.deploy(files(w, { web: [a, b] }, { 'web.example.com': 'web' }), 'h2', 'change');
    expect(result.mode).to.equal('runtime');
    await servedBy(w, 'web.example.com', [a, b]);
    // The configuration the other writer left was read again before writing on top of it.
    expect(w.emulator.requests.matching('GET', '/v3/services/haproxy/configuration/raw').length).to.equal(2);
  });

  it('retries a write that loses a race with another writer, replaying its runtime work safely', async () => {
    const w = world!;
    const [a, b] = w.backends as [number, number];
    await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change');
    // The bump lands after the version check and the runtime work, right before the write.
    const bump = w.emulator.bumpVersion.bind(w.emulator);
    let bumped = false;
    const original = w.client.postRawConfiguration.bind(w.client);
    w.client.postRawConfiguration = async (...args) => {
      if (!bumped) {
        bumped = true;
        await bump();
      }
      return original(...args);
    };
    const result = await w.sync.deploy(files(w, { web: [a, b] }, { 'web.example.com': 'web' }), 'h2', 'change');
    expect(result.mode).to.equal('runtime');
    expect(w.emulator.requests.matching('POST', '/v3/services/haproxy/configuration/raw').length).to.equal(3);
    await servedBy(w, 'web.example.com', [a, b]);
  });

  it('gives an instance restarted empty the full configuration', async () => {
    const w = world!;
    const [a] = w.backends as [number];
    const desired = files(w, { web: [a] }, { 'web.example.com': 'web' });
    await w.sync.deploy(desired, 'h1', 'change');
    await w.emulator.restartEmpty();
    expect(await get(w.port, 'web.example.com').catch(() => 'refused')).to.not.match(/^200/);
    const result = await w.sync.deploy(desired, 'h1', 'change');
    expect(result.mode).to.equal('reload');
    await servedBy(w, 'web.example.com', [a]);
  });

  it('repairs a configuration changed behind its back on a drift check', async () => {
    const w = world!;
    const [a, b] = w.backends as [number, number];
    const desired = files(w, { web: [a] }, { 'web.example.com': 'web' });
    await w.sync.deploy(desired, 'h1', 'change');
    const tampered = files(w, { web: [b] }, { 'web.example.com': 'web' });
    const version = await w.client.configurationVersion();
    const written = await w.client.postRawConfiguration(tampered.config, { version });
    if (written.reloadId) await w.client.waitForReload(written.reloadId, { pollMs: 25 });
    await servedBy(w, 'web.example.com', [b]);
    expect((await w.sync.deploy(desired, 'h1', 'drift')).mode).to.not.equal('unchanged');
    await servedBy(w, 'web.example.com', [a]);
    expect((await w.sync.deploy(desired, 'h1', 'drift')).mode).to.equal('unchanged');
  });

  it('reports a failing endpoint with its error and recovers on the next deploy', async () => {
    const w = world!;
    const [a] = w.backends as [number];
    w.emulator.faults.failNext(1, 500);
    let error: unknown;
    await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change').catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/500/);
    expect(w.sync.status.consecutiveFailures).to.equal(1);
    expect(w.sync.status.lastError).to.match(/500/);
    expect((await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change')).mode).to.equal('reload');
    expect(w.sync.status.consecutiveFailures).to.equal(0);
    await servedBy(w, 'web.example.com', [a]);
  });

  it('reports a configuration the endpoint refuses with its message and changes nothing there', async () => {
    const w = world!;
    const [a] = w.backends as [number];
    await w.sync.deploy(files(w, { web: [a] }, { 'web.example.com': 'web' }), 'h1', 'change');
    const broken = files(w, { web: [a], bad: [] }, { 'web.example.com': 'web' });
    const error = await w.sync.deploy({ ...broken, config: broken.config.replace('backend bad', 'backend bad\n  bogus-keyword') }, 'h2', 'change').catch((e: unknown) => e);
    expect(String(error)).to.match(/validation error/).and.match(/bogus-keyword/);
    await servedBy(w, 'web.example.com', [a]);
  });
});
