import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startLocalMode, type LocalMode } from '../../streams/local-mode.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { reservePort } from '../support/ports.ts';
import { ingress, service, slice } from '../support/manifest-builders.ts';
import { httpGet, OutcomeLog, servedBy } from '../support/traffic.ts';

/**
 * The controller deploying to three emulated Data Plane API instances, each
 * with its own real HAProxy (standing for three pods: same layout, own
 * address), real HTTP through each. Reloads are counted on each HAProxy's
 * master socket.
 */

const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };

const route = (name: string, host: string, serviceName: string) => ingress(name, host, [['/', 'Prefix', serviceName, { number: 80 }]]);
const svc = (name: string, target: number) => service(name, [{ port: 80, targetPort: target }]);
const endpointSlice = (name: string, serviceName: string, port: number) => slice(name, serviceName, undefined, port);

describe('deploying to a fleet of three Data Plane API instances', function () {
  this.timeout(90_000);
  const emulators: Emulator[] = [];
  let log: OutcomeLog;
  let mode: LocalMode | undefined;
  let manifests = '';
  let configPath = '';
  let configText = '';
  let httpPort = 0;
  let backends: readonly number[] = [];
  let stopBackends: () => Promise<void> = async () => undefined;

  const write = (file: string, text: string) => writeFile(join(manifests, file), text);
  const mark = () => log.mark();
  const reloads = () => Promise.all(emulators.map(async (e) => (await e.processInfo()).reloads));
  const deployedOn = (from: number, endpoints: readonly string[], timeoutMs?: number) => log.deployedOn(from, endpoints, timeoutMs);
  const served = (host: string, ports: readonly number[], instances: readonly Emulator[] = emulators) =>
    servedBy(
      host,
      ports,
      instances.map((e) => e.podAddress),
      httpPort,
    );
  const ids = () => mode!.fleet.endpoints.map((endpoint) => endpoint.id);

  before(async () => {
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    httpPort = await reservePort(...addresses);
    const statusPort = await reservePort(...addresses);
    for (const address of addresses) emulators.push(await startEmulator({ pod: { ...pod, address } }));
    ({ ports: backends, stop: stopBackends } = await startBackends([0, 0, 0, 0]));
    const dir = await mkdtemp(join(tmpdir(), 'fleet-e2e-'));
    manifests = join(dir, 'manifests');
    await mkdir(manifests);
    configPath = join(dir, 'config.yaml');
    configText = (await readFile(defaultConfigPath(), 'utf8'))
      .replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${statusPort}\n`)
      .replace('  driftCheckInterval: 60s\n', '  driftCheckInterval: 3s\n');
    await writeFile(configPath, configText);
    const [a] = backends as [number];
    await write('web.yaml', [route('web', 'web.example.com', 'web'), svc('web', a), endpointSlice('web-0', 'web', a)].join('---\n'));
    const { user, password } = emulators[0]!.credentials;
    mode = await startLocalMode({
      manifests,
      config: { path: configPath, watch: true },
      workDir: join(dir, 'work'),
      bindAddress: '127.0.0.1',
      httpPort,
      httpsPort: await reservePort(...addresses),
      statusPort,
      healthPort: 0,
      metricsPort: 0,
      settleMs: 50,
      // A short client timeout, so an instance that hangs is given up on (and retried) quickly.
      dataplane: { urls: emulators.map((e) => e.url), username: user, password, timeoutMs: 2_000 },
      output: { out: () => undefined, err: () => undefined },
    });
    log = new OutcomeLog(mode.outcomes);
  });

  after(async () => {
    await mode?.stop();
    for (const emulator of emulators) await emulator.stop();
    await stopBackends();
  });

  it('reaches all three with the first deployment, and traffic flows through each', async () => {
    const deployed = await deployedOn(0, ids());
    expect([...deployed.values()].map((o) => o.result.mode)).to.deep.equal(['reload', 'reload', 'reload']);
    await served('web.example.com', [backends[0]!]);
  });

  it('scales endpoints up and down with zero reloads on all three, and a later reload keeps them', async () => {
    const [a, b, c] = backends as [number, number, number];
    const before = await reloads();
    let from = mark();
    await write('web-1.yaml', endpointSlice('web-1', 'web', b));
    expect([...(await deployedOn(from, ids())).values()].map((o) => o.result.mode)).to.deep.equal(['runtime', 'runtime', 'runtime']);
    await served('web.example.com', [a, b]);
    from = mark();
    await write('web-2.yaml', endpointSlice('web-2', 'web', c));
    await deployedOn(from, ids());
    await served('web.example.com', [a, b, c]);
    expect(await reloads()).to.deep.equal(before);
    // A new backend reloads each instance once, from the persisted configuration: the servers stay.
    from = mark();
    await write('api.yaml', [route('api', 'api.example.com', 'api'), svc('api', a), endpointSlice('api-0', 'api', a)].join('---\n'));
    const deployed = await deployedOn(from, ids());
    expect([...deployed.values()].map((o) => o.result.mode)).to.deep.equal(['reload', 'reload', 'reload']);
    expect(await reloads()).to.deep.equal(before.map((n) => n + 1));
    await served('web.example.com', [a, b, c]);
    await served('api.example.com', [a]);
  });

  it('deploys the healthy instances on time while one fails, and converges the failing one on the latest config', async () => {
    const [a, b, c, d] = backends as [number, number, number, number];
    const [sick, ...healthy] = emulators as [Emulator, Emulator, Emulator];
    sick.faults.failNext(1_000, 500);
    const from = mark();
    await write('web-3.yaml', endpointSlice('web-3', 'web', d));
    // On time: within 5 s, whatever the failing one does.
    await deployedOn(from, ids().slice(1), 5_000);
    await served('web.example.com', [a, b, c, d], healthy);
    expect(log.since(from).some((outcome) => outcome.type === 'deployFailed' && outcome.endpoint === ids()[0])).to.equal(true);
    sick.faults.reset();
    await served('web.example.com', [a, b, c, d], [sick]);
  });

  it('deploys the others on time while one instance hangs, and converges it once it answers again', async () => {
    const [a, b, c] = backends as [number, number, number];
    const hanging = emulators[1]!;
    hanging.faults.hang(true);
    const from = mark();
    await write('web-3.yaml', '');
    await deployedOn(from, [ids()[0]!, ids()[2]!], 5_000);
    await served('web.example.com', [a, b, c], [emulators[0]!, emulators[2]!]);
    // The hanging instance is given up on at the client timeout (and retried with backoff).
    await log.waitFor(
      from,
      (outcome): outcome is Outcome => outcome.type === 'deployFailed' && outcome.endpoint === ids()[1] && /no answer within \d+ ms/.test(outcome.error),
      'the hanging instance given up on',
      10_000,
    );
    hanging.faults.hang(false);
    await served('web.example.com', [a, b, c], [hanging]);
  });

  it('handles another writer bumping the version, losing no change', async () => {
    const [a, b, c, d] = backends as [number, number, number, number];
    await emulators[1]!.bumpVersion();
    const from = mark();
    await write('web-3.yaml', endpointSlice('web-3', 'web', d));
    await deployedOn(from, ids());
    await served('web.example.com', [a, b, c, d]);
    await write('web-3.yaml', '');
  });

  it('gives an instance restarted empty the full configuration', async () => {
    const [a, b, c] = backends as [number, number, number];
    await served('web.example.com', [a, b, c]);
    const restarted = emulators[2]!;
    await restarted.restartEmpty();
    expect(await httpGet(restarted.podAddress, httpPort, 'web.example.com')).to.not.match(/^200/);
    // No resource changes: the drift check (every 3 s here) finds the instance empty and repairs it.
    await served('web.example.com', [a, b, c], [restarted]);
    await served('api.example.com', [a], [restarted]);
  });

  it('lets an invalid configuration reach no instance', async () => {
    const rawPosts = () => emulators.map((e) => e.requests.matching('POST', '/v3/services/haproxy/configuration/raw').length);
    const before = rawPosts();
    const from = mark();
    await writeFile(configPath, configText.replace('      http-request set-var(txn.path) path', '      http-request set-var(txn.path) path\n      bnd :1'));
    const failed = await log.waitFor(from, (o): o is Extract<typeof o, { type: 'validationFailed' }> => o.type === 'validationFailed', 'validation failure', 15_000);
    expect(failed.error).to.match(/bnd/);
    expect(rawPosts()).to.deep.equal(before);
    await served('web.example.com', [backends[0]!, backends[1]!, backends[2]!]);
    await writeFile(configPath, configText);
  });
});
