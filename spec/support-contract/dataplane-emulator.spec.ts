/**
 * Contract tests of the Data Plane API v3 emulator (spec/support/dataplane-emulator)
 * against the contract in docs/dataplane-api-contract.md (§ numbers below refer to
 * it): real HTTP to the emulator, a real HAProxy (2.6 to 3.4, HAPROXY_BIN) behind it, real traffic through
 * HAProxy to small node:http backends that answer their own name. The behaviours
 * that differ between releases, and the raw configuration as the real API writes it
 * back, are in dataplane-emulator-releases.spec.ts.
 *
 * One emulator serves most blocks in order (each block deploys the
 * configuration it needs with a synchronous force_reload first); the fault
 * block ends with restartEmpty, and pod isolation runs two instances of its own.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { DataplaneClient } from '../../lib/dataplane/client.ts';
import { DataplaneTimeout } from '../../lib/dataplane/errors.ts';
import { readCapabilities } from '../../lib/haproxy/capabilities.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import type { Emulator, Exchange } from '../support/dataplane-emulator/index.ts';
import { stripHeader, withHeader } from '../support/dataplane-emulator/config-store.ts';
import { writeBack } from '../support/dataplane-emulator/config-writer.ts';
import { PodMapping } from '../support/dataplane-emulator/pod.ts';
import { pairedRelease, releaseFeatures } from '../support/dataplane-emulator/release.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';
import { eventually } from '../support/eventually.ts';
import {
  backend,
  call,
  clientFor,
  closeAll,
  configText,
  currentVersion,
  deploy,
  emulatorFor,
  errorOf,
  get,
  liveWeight,
  md5,
  portHolder,
  postRaw,
  RAW,
  versionOf,
  waitReload,
} from './emulator-kit.ts';
import { reservePort } from '../support/ports.ts';

const RELOAD_ID = /^\d{4}-\d{2}-\d{2}-\d+$/;

// --- the shared instance ----------------------------------------------------------

describe('Data Plane API emulator: contract against a real HAProxy', function () {
  this.timeout(20_000);

  let emulator: Emulator;
  let client: DataplaneClient;
  const ports = { web: 0, dynamic: 0, mapped: 0 };
  let appA = 0;
  let appB = 0;
  const exchanges: Exchange[] = [];

  /** frontend web → backend app (s1 → appA, weight `weight`); frontend dynamic → backend dyn (no server). */
  const base = (weight = 10, extra = ''): string =>
    configText(
      emulator,
      `
frontend web
  bind 127.0.0.1:${ports.web}
  default_backend app

frontend dynamic
  bind 127.0.0.1:${ports.dynamic}
  default_backend dyn

backend app
  balance roundrobin
  server s1 127.0.0.1:${appA} weight ${weight}

backend dyn
  balance roundrobin

# For DPAPI's \`enabled\` add, which leaves a 2.6 backend's balancing broken (see its test).
backend quirk
  balance roundrobin
${extra}`,
    );

  before(async () => {
    // Long enough for two writes (each runs haproxy -c) to land inside one reload delay, even on a busy machine.
    emulator = await emulatorFor({ reloadDelayMs: 400, onExchange: (exchange) => exchanges.push(exchange) });
    client = clientFor(emulator);
    appA = await backend('app-a');
    appB = await backend('app-b');
    ports.web = await reservePort();
    ports.dynamic = await reservePort();
    ports.mapped = await reservePort();
  });

  after(closeAll);

  afterEach(() => emulator?.faults.reset());

  describe('authentication and common headers (§1, §2, §8)', () => {
    it('answers 401 with WWW-Authenticate and go-swagger’s message without credentials', async () => {
      const reply = await call(emulator, 'GET', '/info', { authorization: null });
      expect(reply.status).to.equal(401);
      expect(reply.headers.get('www-authenticate')).to.equal('Basic realm="API"');
      expect(errorOf(reply)).to.deep.equal({ code: 401, message: 'unauthenticated for invalid credentials' });
      expect(versionOf(reply)).to.equal(1);
    });

    it('answers 401 "unauthorized" to a wrong password', async () => {
      const wrong = `Basic ${Buffer.from(`${emulator.credentials.user}:nope`).toString('base64')}`;
      const reply = await call(emulator, 'GET', '/services/haproxy/configuration/version', { authorization: wrong });
      expect(reply.status).to.equal(401);
      expect(reply.headers.get('www-authenticate')).to.equal('Basic realm="API"');
      expect(errorOf(reply)).to.deep.equal({ code: 401, message: 'unauthorized' });
      expect(versionOf(reply)).to.equal(1);
    });

    it('sets Configuration-Version on successes, errors and unknown paths', async () => {
      const info = await call(emulator, 'GET', '/info');
      expect(info.status).to.equal(200);
      expect(versionOf(info)).to.equal(1);
      expect(info.headers.get('access-control-expose-headers')).to.match(/Reload-ID/);

      const missing = await call(emulator, 'GET', '/services/haproxy/nothing-here');
      expect(missing.status).to.equal(404);
      expect(versionOf(missing)).to.equal(1);
      expect(errorOf(missing).code).to.equal(404);

      const unknownReload = await call(emulator, 'GET', '/services/haproxy/reloads/1999-01-01-7');
      expect(unknownReload.status).to.equal(404);
      expect(versionOf(unknownReload)).to.equal(1);

      const badWrite = await postRaw(emulator, 'global\n', {});
      expect(badWrite.status).to.equal(400);
      expect(versionOf(badWrite)).to.equal(1);
    });

    it('serves the version as a bare integer, /health `unknown` without a status command, /info', async () => {
      expect(await client.configurationVersion()).to.equal(1);
      // The chart's DPAPI has no status_cmd: its /health never says whether HAProxy runs.
      expect(await client.health()).to.deep.equal({ haproxy: 'unknown' });
      // The release paired with the HAProxy in use (release.ts pairedRelease): 3.2.15 with HAProxy 3.2.
      const paired = releaseFeatures(pairedRelease((await readCapabilities()).version));
      expect((await client.info()).api.version).to.equal(paired.version);
    });

    it('answers /health from HAProxy’s master when DPAPI has a status command', async () => {
      const other = await emulatorFor({ statusCommand: true });
      expect(await clientFor(other).health()).to.deep.equal({ haproxy: 'up' });
    });
  });

  describe('raw configuration (§3)', () => {
    it('GET returns the file with DPAPI’s header lines and Configuration-Checksum', async () => {
      const reply = await call(emulator, 'GET', RAW);
      expect(reply.status).to.equal(200);
      expect(reply.headers.get('content-type')).to.match(/^text\/plain/);
      expect(versionOf(reply)).to.equal(1);
      const lines = reply.text.split('\n');
      expect(lines[0]).to.match(/^# _md5hash=[0-9a-f]{32}$/);
      expect(lines.slice(1, 4)).to.deep.equal(['# _version=1', '# Dataplaneapi managed File', '# changing file directly can cause a conflict if dataplaneapi is running']);
      const checksum = reply.headers.get('configuration-checksum');
      expect(checksum).to.equal(lines[0]!.slice('# _md5hash='.length));
      expect(checksum).to.equal(md5(lines.slice(1).join('\n')));
      expect(reply.text).to.equal(await readFile(emulator.configFile, 'utf8'));
      // The bootstrap configuration: 503 to everything until a configuration is deployed.
      expect(reply.text).to.include(`bind 127.0.0.1:${emulator.bootstrapPort}`);
      expect((await get(emulator.bootstrapPort)).status).to.equal(503);
    });

    it('POST: 400 for a body without a newline', async () => {
      const reply = await postRaw(emulator, 'global', { version: '1' });
      expect(reply.status).to.equal(400);
      expect(errorOf(reply)).to.deep.equal({ code: 400, message: 'invalid configuration: no newline character found' });
    });

    it('POST: 400 without version (nor skip_version)', async () => {
      const reply = await postRaw(emulator, base(), {});
      expect(reply.status).to.equal(400);
      expect(errorOf(reply).message).to.equal('version or transaction not specified: version or transaction not specified, specify only one');
    });

    it('POST: 409 on a stale version, with the current Configuration-Version', async () => {
      const reply = await postRaw(emulator, base(), { version: '7' });
      expect(reply.status).to.equal(409);
      expect(errorOf(reply)).to.deep.equal({
        code: 409,
        message: 'version mismatch: version in configuration file is 1, given version is 7',
      });
      expect(versionOf(reply)).to.equal(1);
    });

    it('POST skip_version: neither checked nor incremented', async () => {
      const current = await readFile(emulator.configFile, 'utf8');
      const reply = await postRaw(emulator, current, { skip_version: 'true', skip_reload: 'true' });
      expect(reply.status, reply.text).to.equal(201);
      expect(versionOf(reply)).to.equal(1);
      expect(await currentVersion(emulator)).to.equal(1);
      // Written back by the parser (§3a) under the same version.
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(withHeader(writeBack(stripHeader(current)), 1));
    });

    it('POST only_validate: 202 with the configuration on disk, nothing written, no Reload-ID', async () => {
      const before = await readFile(emulator.configFile, 'utf8');
      const reply = await postRaw(emulator, base(), { only_validate: 'true' });
      expect(reply.status, reply.text).to.equal(202);
      expect(reply.text).to.equal(before);
      expect(reply.headers.get('reload-id')).to.equal(null);
      expect(versionOf(reply)).to.equal(1);
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(before);

      const invalid = await postRaw(emulator, `${base()}  bogus_keyword here\n`, { only_validate: 'true' });
      expect(invalid.status).to.equal(400);
      expect(errorOf(invalid).message).to.match(/^validation error: exit status 1: msg="/);
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(before);
    });

    it('POST: 400 `validation error: exit status 1: msg="..."` for an invalid configuration, the file unchanged', async () => {
      const before = await readFile(emulator.configFile, 'utf8');
      const broken = base().replace('server s1 127.0.0.1', 'server s1 127.0.0.1').concat('  foo bar\n');
      const reply = await postRaw(emulator, broken, { version: '1' });
      expect(reply.status).to.equal(400);
      const { code, message } = errorOf(reply);
      expect(code).to.equal(400);
      expect(message).to.match(/^validation error: exit status 1: msg="config parsing \[[^\]]+:\d+\] unknown keyword 'foo' in 'backend' section/);
      // 2.6's capitalised summary lines slip through DPAPI's case-sensitive filters (§3).
      expect(message).to.include('\nmsg="config Fatal errors found in configuration."');
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(before);
      expect(await currentVersion(emulator)).to.equal(1);
    });

    it('POST default: 202 + Reload-ID, version + 1, the reload in_progress then succeeded, HAProxy serving it', async () => {
      const reloadsBefore = (await emulator.processInfo()).reloads;
      const reply = await postRaw(emulator, base(), { version: '1' });
      expect(reply.status, reply.text).to.equal(202);
      const id = reply.headers.get('reload-id');
      expect(id).to.match(RELOAD_ID);
      expect(versionOf(reply)).to.equal(2);
      expect(reply.text).to.match(/^# _md5hash=[0-9a-f]{32}\n# _version=2\n/);
      expect(reply.headers.get('configuration-checksum')).to.equal(/^# _md5hash=(\w+)/.exec(reply.text)?.[1]);
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(reply.text);

      // Pending until reloadDelayMs has passed (§2).
      const pending = await call(emulator, 'GET', `/services/haproxy/reloads/${id!}`);
      expect(pending.status).to.equal(200);
      expect(JSON.parse(pending.text)).to.deep.include({ id, status: 'in_progress' });
      const listed = JSON.parse((await call(emulator, 'GET', '/services/haproxy/reloads')).text) as { id: string; status: string }[];
      expect(listed).to.deep.include({ id, status: 'in_progress' });

      const done = await waitReload(emulator, id!);
      expect(done.status).to.equal('succeeded');
      const full = JSON.parse((await call(emulator, 'GET', `/services/haproxy/reloads/${id!}`)).text) as Record<string, unknown>;
      expect(full['reload_timestamp']).to.be.a('number');
      expect(full['response']).to.be.a('string');
      expect((await emulator.processInfo()).reloads).to.equal(reloadsBefore + 1);
      expect(await get(ports.web)).to.deep.equal({ status: 200, body: 'app-a' });
    });

    it('404 "Reload with ID <id> does not exist" for an unknown or future reload id', async () => {
      for (const id of ['nonsense', '2999-12-31-5']) {
        const reply = await call(emulator, 'GET', `/services/haproxy/reloads/${id}`);
        expect(reply.status).to.equal(404);
        expect(errorOf(reply)).to.deep.equal({ code: 404, message: `Reload with ID ${id} does not exist` });
      }
    });

    it('coalesces writes inside the reload delay: one Reload-ID, one HAProxy reload', async () => {
      const before = await emulator.processInfo();
      const version = await currentVersion(emulator);
      const first = await postRaw(emulator, base(20), { version: String(version) });
      const second = await postRaw(emulator, base(30), { version: String(version + 1) });
      expect([first.status, second.status]).to.deep.equal([202, 202]);
      const id = first.headers.get('reload-id');
      expect(id).to.match(RELOAD_ID);
      expect(second.headers.get('reload-id')).to.equal(id);
      expect((await waitReload(emulator, id!)).status).to.equal('succeeded');
      const after = await emulator.processInfo();
      expect(after.reloads).to.equal(before.reloads + 1);
      expect(await liveWeight(emulator, 'app/s1')).to.match(/^30 \(initial 30\)/);
    });

    it('POST skip_reload: 201, no reload, X-Runtime-Actions applied live (weight, address)', async () => {
      const before = await emulator.processInfo();
      const version = await currentVersion(emulator);
      const reply = await postRaw(
        emulator,
        base(30, '# skip_reload variant\n'),
        { version: String(version), skip_reload: 'true' },
        {
          'X-Runtime-Actions': `SetServerWeight app s1 42;NoSuchAction a b;SetServerAddr app s1 127.0.0.1 ${appB}`,
        },
      );
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.headers.get('reload-id')).to.equal(null);
      expect(versionOf(reply)).to.equal(version + 1);
      expect(await readFile(emulator.configFile, 'utf8')).to.include('# skip_reload variant');
      expect(await liveWeight(emulator, 'app/s1')).to.match(/^42 \(initial 30\)/);
      const server = await client.runtimeServer('app', 's1');
      expect(server).to.deep.include({ name: 's1', address: '127.0.0.1', port: appB });
      expect(await get(ports.web)).to.deep.equal({ status: 200, body: 'app-b' });
      const after = await emulator.processInfo();
      expect(after.reloads).to.equal(before.reloads);
      expect(after.workers.map((worker) => worker.pid)).to.deep.equal(before.workers.map((worker) => worker.pid));
    });

    it('POST skip_reload: SetServerState applied live', async () => {
      const version = await currentVersion(emulator);
      const reply = await postRaw(
        emulator,
        base(30),
        { version: String(version), skip_reload: 'true' },
        {
          'X-Runtime-Actions': 'SetServerState app s1 maint',
        },
      );
      expect(reply.status, reply.text).to.equal(201);
      expect(await client.runtimeServer('app', 's1')).to.deep.include({ admin_state: 'maint' });
      expect((await get(ports.web)).status).to.equal(503);
    });

    it('POST force_reload: 201 after a synchronous reload, no Reload-ID', async () => {
      const before = await emulator.processInfo();
      const version = await currentVersion(emulator);
      const reply = await postRaw(emulator, base(10), { version: String(version), force_reload: 'true' });
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.headers.get('reload-id')).to.equal(null);
      expect(versionOf(reply)).to.equal(version + 1);
      const after = await emulator.processInfo();
      expect(after.reloads).to.equal(before.reloads + 1);
      // The reload dropped the runtime changes of the skip_reload tests (§9).
      expect(await get(ports.web)).to.deep.equal({ status: 200, body: 'app-a' });
      expect(await liveWeight(emulator, 'app/s1')).to.match(/^10 \(initial 10\)/);
    });

    it('a reload HAProxy refuses (port taken) is `failed` with HAProxy’s message; the .lkg comes back, the old worker serves', async () => {
      const busy = await portHolder();
      const good = await readFile(emulator.configFile, 'utf8');
      expect(await readFile(`${emulator.configFile}.lkg`, 'utf8')).to.equal(good);
      const before = await emulator.processInfo();
      const version = await currentVersion(emulator);
      const clash = base(10, `\nfrontend clash\n  bind 127.0.0.1:${busy}\n  http-request return status 200\n`);
      // haproxy -c never binds: the configuration is valid and written (§3).
      const reply = await postRaw(emulator, clash, { version: String(version) });
      expect(reply.status, reply.text).to.equal(202);
      const id = reply.headers.get('reload-id')!;
      const reload = await waitReload(emulator, id);
      expect(reload.status).to.equal('failed');
      expect(reload.response).to.match(/\[ALERT\].*cannot bind socket.*127\.0\.0\.1:\d+/);
      expect(reload.response).to.include(String(busy));

      // DPAPI copies the last-known-good file back (§2); its parser keeps the new version (§10.2).
      expect(await readFile(emulator.configFile, 'utf8')).to.equal(good);
      expect(await readFile(`${emulator.configFile}.lkg`, 'utf8')).to.equal(good);
      expect(await currentVersion(emulator)).to.equal(version + 1);
      const raw = await call(emulator, 'GET', RAW);
      expect(raw.text).to.equal(good);
      expect(versionOf(raw)).to.equal(version + 1);

      const after = await emulator.processInfo();
      expect(after.reloads).to.equal(before.reloads + 1);
      expect(after.failed).to.be.greaterThan(before.failed);
      expect(after.workers.map((worker) => worker.pid)).to.deep.equal(before.workers.map((worker) => worker.pid));
      expect(await get(ports.web)).to.deep.equal({ status: 200, body: 'app-a' });

      const listed = JSON.parse((await call(emulator, 'GET', '/services/haproxy/reloads')).text) as { id: string; status: string }[];
      expect(listed.find((entry) => entry.id === id)).to.include({ status: 'failed' });

      // The instance recovers: the next good write reloads.
      await deploy(emulator, base(11));
      expect(await liveWeight(emulator, 'app/s1')).to.match(/^11 \(initial 11\)/);
    });

    it('force_reload of a configuration HAProxy refuses: 400 "Reload failed: ..."', async () => {
      const busy = await portHolder();
      const version = await currentVersion(emulator);
      const clash = base(11, `\nfrontend clash\n  bind 127.0.0.1:${busy}\n  http-request return status 200\n`);
      const reply = await postRaw(emulator, clash, { version: String(version), force_reload: 'true' });
      expect(reply.status).to.equal(400);
      expect(errorOf(reply).message).to.match(/^Reload failed: .*cannot bind socket/s);
      expect(await get(ports.web)).to.deep.equal({ status: 200, body: 'app-a' });
      expect(await readFile(emulator.configFile, 'utf8')).to.not.include('frontend clash');
    });
  });

  describe('runtime servers (§6)', () => {
    const SERVERS = '/services/haproxy/runtime/backends';

    before(async () => {
      await deploy(emulator, base());
    });

    it('adds a server in maintenance that takes traffic once made ready, and lists it', async () => {
      expect((await get(ports.dynamic)).status).to.equal(503);
      const reply = await call(emulator, 'POST', `${SERVERS}/dyn/servers`, {
        body: JSON.stringify({ name: 'd1', address: '127.0.0.1', port: appB, maintenance: 'enabled' }),
        contentType: 'application/json',
      });
      expect(reply.status, reply.text).to.equal(201);
      expect(JSON.parse(reply.text)).to.deep.equal({ name: 'd1', address: '127.0.0.1', port: appB, maintenance: 'enabled' });
      expect((await get(ports.dynamic)).status).to.equal(503);
      await client.updateRuntimeServer('dyn', 'd1', { admin_state: 'ready', operational_state: 'up' });
      expect(await get(ports.dynamic)).to.deep.equal({ status: 200, body: 'app-b' });
      const listed = await client.runtimeServers('dyn');
      expect(listed).to.have.length(1);
      expect(listed[0]).to.deep.include({ name: 'd1', address: '127.0.0.1', port: appB, admin_state: 'ready', operational_state: 'up' });
    });

    it('sends `enabled` for maintenance "disabled" where HAProxy takes it (before 3.0), as DPAPI does (§6)', async () => {
      // On 2.6.12 such a server is ready at once but never enters the load-balancing tree, and the
      // backend balances nothing afterwards: it is added to a backend no test sends traffic to. From
      // 3.0 DPAPI leaves the keyword out, and the server starts in maintenance as any dynamic one.
      const { dynamicServerEnabledKeyword } = await readCapabilities();
      const appC = await backend('app-c');
      await client.addRuntimeServer('quirk', { name: 'q1', address: '127.0.0.1', port: appC, maintenance: 'disabled' });
      expect(await client.runtimeServer('quirk', 'q1')).to.deep.include({ admin_state: dynamicServerEnabledKeyword ? 'ready' : 'maint' });
      await client.deleteRuntimeServer('quirk', 'q1');
    });

    it('starts a server in maintenance unless told otherwise (§9)', async () => {
      await client.addRuntimeServer('dyn', { name: 'd2', address: '127.0.0.1', port: appA });
      expect(await client.runtimeServer('dyn', 'd2')).to.deep.include({ admin_state: 'maint' });
      for (let index = 0; index < 4; index++) expect((await get(ports.dynamic)).body).to.equal('app-b');
    });

    it('changes admin and operational state', async () => {
      const ready = await client.updateRuntimeServer('dyn', 'd2', { admin_state: 'ready' });
      expect(ready).to.deep.include({ name: 'd2', admin_state: 'ready' });
      const seen = new Set<string>();
      for (let index = 0; index < 6; index++) seen.add((await get(ports.dynamic)).body);
      expect([...seen].sort()).to.deep.equal(['app-a', 'app-b']);

      const reply = await call(emulator, 'PUT', `${SERVERS}/dyn/servers/d1`, {
        body: JSON.stringify({ admin_state: 'maint' }),
        contentType: 'application/json',
      });
      expect(reply.status).to.equal(200);
      expect(JSON.parse(reply.text)).to.deep.include({ name: 'd1', admin_state: 'maint' });
      for (let index = 0; index < 4; index++) expect((await get(ports.dynamic)).body).to.equal('app-a');

      const down = await client.updateRuntimeServer('dyn', 'd2', { operational_state: 'down' });
      expect(down).to.deep.include({ operational_state: 'down' });
      expect((await get(ports.dynamic)).status).to.equal(503);
      await client.updateRuntimeServer('dyn', 'd2', { operational_state: 'up' });
    });

    it('maps HAProxy’s answers: 404 unknown backend or server, 409 duplicate', async () => {
      const duplicate = await call(emulator, 'POST', `${SERVERS}/dyn/servers`, {
        body: JSON.stringify({ name: 'd1', address: '127.0.0.1', port: appA }),
        contentType: 'application/json',
      });
      expect(duplicate.status).to.equal(409);
      expect(errorOf(duplicate).message).to.match(/Already exists a server with the same name/);

      const noBackend = await call(emulator, 'POST', `${SERVERS}/nope/servers`, {
        body: JSON.stringify({ name: 'x', address: '127.0.0.1', port: appA }),
        contentType: 'application/json',
      });
      expect(noBackend.status).to.equal(404);
      expect(errorOf(noBackend).message).to.match(/No such backend/);

      const noServer = await call(emulator, 'GET', `${SERVERS}/dyn/servers/ghost`);
      expect(noServer.status).to.equal(404);
      expect(errorOf(noServer).message).to.equal('Runtime server ghost not found in backend dyn');
      expect((await call(emulator, 'GET', `${SERVERS}/nope/servers`)).status).to.equal(404);
      expect((await call(emulator, 'PUT', `${SERVERS}/dyn/servers/ghost`, { body: '{"admin_state":"ready"}', contentType: 'application/json' })).status).to.equal(404);
      expect((await call(emulator, 'DELETE', `${SERVERS}/dyn/servers/ghost`)).status).to.equal(404);

      const nameless = await call(emulator, 'POST', `${SERVERS}/dyn/servers`, { body: '{"address":"127.0.0.1"}', contentType: 'application/json' });
      expect(nameless.status).to.equal(400);
    });

    it('deletes a server (in maintenance or not)', async () => {
      const reply = await call(emulator, 'DELETE', `${SERVERS}/dyn/servers/d2`);
      expect(reply.status).to.equal(204);
      expect(reply.text).to.equal('');
      expect((await call(emulator, 'GET', `${SERVERS}/dyn/servers/d2`)).status).to.equal(404);
      expect((await client.runtimeServers('dyn')).map((server) => server.name)).to.deep.equal(['d1']);
      expect((await get(ports.dynamic)).status).to.equal(503);
    });

    it('loses runtime servers on the next reload (§9)', async () => {
      await client.addRuntimeServer('dyn', { name: 'd3', address: '127.0.0.1', port: appA, maintenance: 'enabled' });
      await client.updateRuntimeServer('dyn', 'd3', { admin_state: 'ready' });
      expect((await get(ports.dynamic)).body).to.equal('app-a');
      await deploy(emulator, base());
      expect(await client.runtimeServers('dyn')).to.deep.equal([]);
      expect((await call(emulator, 'GET', `${SERVERS}/dyn/servers/d3`)).status).to.equal(404);
      expect((await get(ports.dynamic)).status).to.equal(503);
    });
  });

  describe('runtime maps (§6)', () => {
    const MAPS = '/services/haproxy/runtime/maps';
    let relativeId = '';

    before(async () => {
      await client.createStorageFile('maps', 'routes.map', '/a route-a\n', { skipReload: true });
      await client.createStorageFile('maps', 'rel.map', '/r0 rel-0\n', { skipReload: true });
      // routes.map by its absolute path under maps_dir (managed); rel.map relative to default-path (unmanaged).
      await deploy(
        emulator,
        base(
          10,
          `
frontend mapped
  bind 127.0.0.1:${ports.mapped}
  http-request return status 200 content-type text/plain lf-string "%[path,map_beg(${emulator.mapsDir}/routes.map,none)] %[path,map(maps/rel.map,none)]"
`,
        ),
      );
    });

    it('lists managed maps, and unmanaged ones with include_unmanaged=true, each with its id', async () => {
      const managed = JSON.parse((await call(emulator, 'GET', MAPS)).text) as Record<string, string>[];
      expect(managed).to.have.length(1);
      expect(managed[0]).to.include({ file: `${emulator.mapsDir}/routes.map`, storage_name: 'routes.map' });
      expect(managed[0]!['id']).to.match(/^\d+$/);

      const all = await client.runtimeMaps({ includeUnmanaged: true });
      const relative = all.find((map) => map.file === 'maps/rel.map');
      expect(relative, JSON.stringify(all)).to.not.equal(undefined);
      expect(relative!.storage_name).to.equal(undefined);
      expect(relative!.id).to.match(/^\d+$/);
      relativeId = relative!.id!;

      const one = await call(emulator, 'GET', `${MAPS}/routes.map`);
      expect(one.status).to.equal(200);
      expect(JSON.parse(one.text)).to.include({ storage_name: 'routes.map' });
      expect((await call(emulator, 'GET', `${MAPS}/nope.map`)).status).to.equal(404);
    });

    it('adds, sets and deletes entries with real effect on traffic', async () => {
      expect(await get(ports.mapped, '/a/x')).to.deep.equal({ status: 200, body: 'route-a none' });
      const entries = await client.mapEntries('routes.map');
      expect(entries).to.have.length(1);
      expect(entries[0]).to.deep.include({ key: '/a', value: 'route-a' });
      expect(entries[0]!.id).to.match(/^0x[0-9a-f]+$/);

      const added = await call(emulator, 'POST', `${MAPS}/routes.map/entries`, {
        body: JSON.stringify({ key: '/b', value: 'route-b' }),
        contentType: 'application/json',
      });
      expect(added.status).to.equal(201);
      expect(JSON.parse(added.text)).to.deep.equal({ key: '/b', value: 'route-b' });
      expect((await get(ports.mapped, '/b/y')).body).to.equal('route-b none');

      const duplicate = await call(emulator, 'POST', `${MAPS}/routes.map/entries`, {
        body: JSON.stringify({ key: '/b', value: 'other' }),
        contentType: 'application/json',
      });
      expect(duplicate.status).to.equal(409);
      // `get map` on a map_beg map finds `/b` for `/b/deeper`: only an exact key is a duplicate (client-native).
      const deeper = await call(emulator, 'POST', `${MAPS}/routes.map/entries`, {
        body: JSON.stringify({ key: '/b/deeper', value: 'route-deeper' }),
        contentType: 'application/json',
      });
      expect(deeper.status, deeper.text).to.equal(201);
      expect((await call(emulator, 'GET', `${MAPS}/routes.map/entries/${encodeURIComponent('/b/other')}`)).status).to.equal(404);
      expect((await call(emulator, 'DELETE', `${MAPS}/routes.map/entries/${encodeURIComponent('/b/deeper')}`)).status).to.equal(204);

      const set = await call(emulator, 'PUT', `${MAPS}/routes.map/entries/${encodeURIComponent('/b')}`, {
        body: JSON.stringify({ value: 'route-b2' }),
        contentType: 'application/json',
      });
      expect(set.status).to.equal(200);
      expect((await get(ports.mapped, '/b/y')).body).to.equal('route-b2 none');
      expect(await client.mapEntries('routes.map')).to.have.length(2);

      const one = await call(emulator, 'GET', `${MAPS}/routes.map/entries/${encodeURIComponent('/b')}`);
      expect(JSON.parse(one.text)).to.deep.include({ key: '/b', value: 'route-b2' });

      const deleted = await call(emulator, 'DELETE', `${MAPS}/routes.map/entries/${encodeURIComponent('/b')}`);
      expect(deleted.status).to.equal(204);
      expect((await get(ports.mapped, '/b/y')).body).to.equal('none none');

      expect((await call(emulator, 'GET', `${MAPS}/routes.map/entries/${encodeURIComponent('/b')}`)).status).to.equal(404);
      expect((await call(emulator, 'DELETE', `${MAPS}/routes.map/entries/${encodeURIComponent('/b')}`)).status).to.equal(404);
      expect(
        (
          await call(emulator, 'PUT', `${MAPS}/routes.map/entries/${encodeURIComponent('/zz')}`, {
            body: '{"value":"v"}',
            contentType: 'application/json',
          })
        ).status,
      ).to.equal(404);
      expect((await call(emulator, 'GET', `${MAPS}/nope.map/entries`)).status).to.equal(404);
      // Runtime only: the file is untouched without force_sync (§6).
      expect(await readFile(`${emulator.mapsDir}/routes.map`, 'utf8')).to.equal('/a route-a\n');
    });

    it('refuses a map outside maps_dir as %23<id>: the only name it has is refused by the path pattern (3.0.19+)', async () => {
      expect(relativeId).to.not.equal('');
      const reply = await call(emulator, 'POST', `${MAPS}/%23${relativeId}/entries`, {
        body: JSON.stringify({ key: '/r1', value: 'rel-1' }),
        contentType: 'application/json',
      });
      // go-swagger (up to 3.3.5) answers 422 with code 605, the chi server of 3.4 400 (release.ts).
      const { chiWire } = releaseFeatures(pairedRelease((await readCapabilities()).version));
      expect(reply.status).to.equal(chiWire ? 400 : 422);
      expect(errorOf(reply).code).to.equal(chiWire ? 400 : 605);
      expect((await get(ports.mapped, '/r1')).body).to.equal('none none');
    });

    it('force_sync writes the runtime entries to the file, sorted by key', async () => {
      await client.addMapEntry('routes.map', '/0', 'first', { forceSync: true });
      expect(await readFile(`${emulator.mapsDir}/routes.map`, 'utf8')).to.equal('/0 first\n/a route-a\n');
    });

    it('loses runtime entries on the next reload', async () => {
      await client.addMapEntry('routes.map', '/c', 'route-c');
      expect((await get(ports.mapped, '/c')).body).to.equal('route-c none');
      const text = (await client.getRawConfiguration()).text;
      await deploy(emulator, text);
      expect((await get(ports.mapped, '/c')).body).to.equal('none none');
    });
  });

  describe('storage (§7)', () => {
    const STORAGE = '/services/haproxy/storage';

    before(async () => {
      // A configuration naming a stored map by its absolute path, for the 409 on delete.
      await client.createStorageFile('maps', 'ref.map', '/ ref\n', { skipReload: true });
      await deploy(
        emulator,
        base(
          10,
          `\nfrontend referencing\n  bind 127.0.0.1:${ports.mapped}\n  http-request return status 200 content-type text/plain lf-string "%[path,map_beg(${emulator.mapsDir}/ref.map,none)]"\n`,
        ),
      );
    });

    it('map files: upload (multipart), 409 on a second upload, read, replace, delete', async () => {
      const created = await client.createStorageFile('maps', 'extra', 'k v\n');
      expect(created.status).to.equal(201);
      expect(created.storageName).to.equal('extra.map');
      // The answer names the stored file (v3.3.5 handlers/map_storage.go): <maps_dir>/<name>, where runtime maps resolve.
      expect(created.file).to.equal(`${emulator.mapsDir}/extra.map`);
      expect(await readFile(`${emulator.mapsDir}/extra.map`, 'utf8')).to.equal('k v\n');
      const listed = await client.listStorage('maps');
      expect(listed.map((file) => file.storage_name)).to.include('extra.map');
      expect(listed.find((file) => file.storage_name === 'extra.map')).to.include({
        file: `${emulator.mapsDir}/extra.map`,
        description: 'managed map file',
      });

      const again = await client.createStorageFile('maps', 'extra.map', 'k v\n').then(
        () => 0,
        (error: { status?: number }) => error.status,
      );
      expect(again).to.equal(409);

      const read = await call(emulator, 'GET', `${STORAGE}/maps/extra.map`);
      expect(read.status).to.equal(200);
      expect(read.headers.get('content-type')).to.equal('application/octet-stream');
      expect(read.text).to.equal('k v\n');

      const replaced = await call(emulator, 'PUT', `${STORAGE}/maps/extra.map`, { body: 'k v2\n', contentType: 'text/plain' });
      expect(replaced.status).to.equal(202);
      expect(replaced.headers.get('reload-id')).to.match(RELOAD_ID);
      const quiet = await call(emulator, 'PUT', `${STORAGE}/maps/extra.map`, {
        body: 'k v3\n',
        contentType: 'text/plain',
        query: { skip_reload: 'true' },
      });
      expect(quiet.status).to.equal(204);
      expect(await client.getStorageFile('maps', 'extra.map')).to.equal('k v3\n');

      const deleted = await call(emulator, 'DELETE', `${STORAGE}/maps/extra.map`);
      expect(deleted.status).to.equal(204);
      expect((await call(emulator, 'GET', `${STORAGE}/maps/extra.map`)).status).to.equal(404);
      expect((await call(emulator, 'PUT', `${STORAGE}/maps/extra.map`, { body: 'x y\n', contentType: 'text/plain' })).status).to.equal(404);
      await waitReload(emulator, replaced.headers.get('reload-id')!);
    });

    it('sanitises names: a.b.map is stored as a_b.map, a run of other characters as one "_"', async () => {
      const created = await client.createStorageFile('maps', 'a.b.map', 'x y\n', { skipReload: true });
      expect(created.storageName).to.equal('a_b.map');
      expect((await client.deleteStorageFile('maps', 'a_b.map')).status).to.equal(204);
      const run = await client.createStorageFile('maps', 'c..d!e.map', 'x y\n', { skipReload: true });
      expect(run.storageName).to.equal('c_d_e.map');
      expect((await client.deleteStorageFile('maps', 'c_d_e.map')).status).to.equal(204);
    });

    it('409 when deleting a file the configuration references', async () => {
      const reply = await call(emulator, 'DELETE', `${STORAGE}/maps/ref.map`);
      expect(reply.status).to.equal(409);
      expect(errorOf(reply).message).to.match(new RegExp(`^rejecting attempt to delete file ${emulator.mapsDir}/ref\\.map referenced in haproxy conf at line \\d+: http-request return`));
      expect(await readFile(`${emulator.mapsDir}/ref.map`, 'utf8')).to.equal('/ ref\n');
      expect((await get(ports.mapped, '/x')).body).to.equal('ref');
    });

    it('general files: multipart upload and replace, delete', async () => {
      const created = await client.createStorageFile('general', '503.http', 'HTTP/1.0 503\r\n\r\n');
      expect(created).to.deep.include({ status: 201, storageName: '503.http' });
      const replaced = await client.replaceStorageFile('general', '503.http', 'HTTP/1.0 503 x\r\n\r\n');
      expect(replaced.status).to.equal(202);
      expect(replaced.reloadId).to.match(RELOAD_ID);
      const quiet = await client.replaceStorageFile('general', '503.http', 'HTTP/1.0 503 y\r\n\r\n', { skipReload: true });
      expect(quiet.status).to.equal(204);
      expect(await readFile(`${emulator.generalDir}/503.http`, 'utf8')).to.equal('HTTP/1.0 503 y\r\n\r\n');
      expect((await client.listStorage('general')).map((file) => file.storage_name)).to.deep.equal(['503.http']);
      expect((await client.deleteStorageFile('general', '503.http')).status).to.equal(204);
      expect(await client.listStorage('general')).to.deep.equal([]);
      await waitReload(emulator, replaced.reloadId!);
    });

    it('certificates: upload, replace, delete; a PEM without its key is a 500', async () => {
      const pem = `${SELF_SIGNED_CERT}${SELF_SIGNED_KEY}`;
      const created = await client.createStorageFile('ssl_certificates', 'site.pem', pem, { skipReload: true });
      expect(created).to.deep.include({ status: 201, storageName: 'site.pem' });
      const model = JSON.parse((await call(emulator, 'GET', `${STORAGE}/ssl_certificates/site.pem`)).text) as Record<string, unknown>;
      expect(model).to.include({ storage_name: 'site.pem', file: `${emulator.sslDir}/site.pem` });

      const replaced = await client.replaceStorageFile('ssl_certificates', 'site.pem', pem, { skipReload: true });
      expect(replaced.status).to.equal(200);
      // Without skip_reload: loaded into HAProxy's certificate store at runtime (new/set/commit ssl cert), no
      // reload, from release 3.2; 3.0 schedules a reload (release.ts).
      const live = await client.createStorageFile('ssl_certificates', 'live.pem', pem);
      if (emulator.release.runtimeCertificates) {
        expect(live).to.deep.include({ status: 201, reloadId: undefined });
        expect(await runtimeCommand(emulator.statsSocket, 'show ssl cert')).to.include(`${emulator.sslDir}/live.pem`);
      } else {
        expect(live.status).to.equal(202);
        expect(live.reloadId).to.be.a('string');
      }
      expect((await client.deleteStorageFile('ssl_certificates', 'live.pem', { skipReload: true })).status).to.equal(204);

      const keyless = await client.createStorageFile('ssl_certificates', 'nokey.pem', SELF_SIGNED_CERT).then(
        () => ({ status: 0, message: '' }),
        (error: { status?: number; message: string }) => ({ status: error.status, message: error.message }),
      );
      expect(keyless.status).to.equal(500);
      expect(keyless.message).to.include('file should contain both certificate and private key');
      expect((await client.listStorage('ssl_certificates')).map((file) => file.storage_name)).to.deep.equal(['site.pem']);

      // 3.2 answers a certificate delete 202 + Reload-ID (§7).
      const deleted = await call(emulator, 'DELETE', `${STORAGE}/ssl_certificates/site.pem`);
      expect(deleted.status).to.equal(202);
      expect(deleted.headers.get('reload-id')).to.match(RELOAD_ID);
      await waitReload(emulator, deleted.headers.get('reload-id')!);
    });
  });

  describe('exchanges (a hook for benchmarks, not a DPAPI feature)', () => {
    it('reports each answered request with its body, the answer as sent, and how long it took', async () => {
      exchanges.length = 0;
      const text = (await client.getRawConfiguration()).text;
      const version = await currentVersion(emulator);
      const reply = await postRaw(emulator, text, { version: String(version), only_validate: 'true' });
      expect(reply.status, reply.text).to.equal(202);
      const missing = await call(emulator, 'GET', '/services/haproxy/nothing-here');
      expect(exchanges.map((exchange) => `${exchange.method} ${exchange.path} ${exchange.query} ${exchange.status}`)).to.deep.equal([
        `GET /v3${RAW}  200`,
        'GET /v3/services/haproxy/configuration/version  200',
        `POST /v3${RAW} version=${version}&only_validate=true 202`,
        'GET /v3/services/haproxy/nothing-here  404',
      ]);
      const [, , validated, notFound] = exchanges;
      expect(validated!.requestBody.toString('utf8')).to.equal(text);
      expect(validated!.requestHeaders['content-type']).to.equal('text/plain');
      expect(String(validated!.responseBody)).to.equal(reply.text);
      expect(validated!.responseHeaders['configuration-version']).to.equal(String(version));
      // Validation runs haproxy -c: measurably longer than answering a 404.
      expect(validated!.answeredAt - validated!.receivedAt).to.be.greaterThan(notFound!.answeredAt - notFound!.receivedAt);
      expect(errorOf(missing)).to.deep.equal(JSON.parse(String(notFound!.responseBody)));
    });

    it('never reports a request left hanging', async () => {
      exchanges.length = 0;
      const received = emulator.requests.count;
      emulator.faults.hang(true);
      const impatient = clientFor(emulator, 200);
      const error = await impatient.configurationVersion().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      emulator.faults.hang(false);
      expect(error).to.be.instanceOf(DataplaneTimeout);
      expect(emulator.requests.count).to.equal(received + 1);
      expect(exchanges).to.deep.equal([]);
    });
  });

  describe('faults', () => {
    it('failNext: the next request answers 500 JSON and is not handled', async () => {
      emulator.faults.failNext(1);
      const failed = await call(emulator, 'GET', '/services/haproxy/configuration/version');
      expect(failed.status).to.equal(500);
      expect(failed.headers.get('content-type')).to.match(/^application\/json/);
      expect(errorOf(failed).code).to.equal(500);
      expect(errorOf(failed).message).to.match(/emulated fault/);
      expect(versionOf(failed)).to.be.a('number');
      expect((await call(emulator, 'GET', '/services/haproxy/configuration/version')).status).to.equal(200);
    });

    it('hang: a client sees its own timeout', async () => {
      const impatient = clientFor(emulator, 300);
      emulator.faults.hang(true);
      const started = Date.now();
      const error = await impatient.configurationVersion().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).to.be.instanceOf(DataplaneTimeout);
      expect(Date.now() - started).to.be.within(250, 3_000);
      emulator.faults.hang(false);
      expect(await impatient.configurationVersion()).to.be.a('number');
    });

    it('delayResponses: every answer comes later', async () => {
      const quick = await call(emulator, 'GET', '/info');
      emulator.faults.delayResponses(300);
      const slow = await call(emulator, 'GET', '/info');
      expect(slow.status).to.equal(200);
      expect(slow.ms).to.be.at.least(300);
      expect(slow.ms).to.be.greaterThan(quick.ms);
    });

    it('bumpVersion: another writer, so a write with the old version is a 409', async () => {
      const version = await currentVersion(emulator);
      const text = (await client.getRawConfiguration()).text;
      expect(await emulator.bumpVersion()).to.equal(version + 1);
      expect(await currentVersion(emulator)).to.equal(version + 1);
      expect(await readFile(emulator.configFile, 'utf8')).to.include(`# _version=${version + 1}\n`);
      const reply = await postRaw(emulator, text, { version: String(version) });
      expect(reply.status).to.equal(409);
      expect(errorOf(reply).message).to.equal(`version mismatch: version in configuration file is ${version + 1}, given version is ${version}`);
      expect(versionOf(reply)).to.equal(version + 1);
    });

    it('restartEmpty: version 1, the bootstrap configuration, empty storage, Reload-IDs from 0', async () => {
      await emulator.restartEmpty();
      expect(await currentVersion(emulator)).to.equal(1);
      const raw = await client.getRawConfiguration();
      expect(raw.version).to.equal(1);
      expect(raw.text).to.include('frontend bootstrap');
      expect(raw.text).to.not.include('frontend web');
      for (const kind of ['maps', 'general', 'ssl_certificates'] as const) expect(await client.listStorage(kind)).to.deep.equal([]);
      expect((await get(emulator.bootstrapPort)).status).to.equal(503);
      await eventually(
        () =>
          get(ports.web).then(
            () => 'open',
            () => 'closed',
          ),
        (state) => state === 'closed',
        'the old frontend to be gone',
      );
      const reply = await postRaw(emulator, base(), { version: '1' });
      expect(reply.status, reply.text).to.equal(202);
      expect(reply.headers.get('reload-id')).to.match(/-0$/);
      expect((await waitReload(emulator, reply.headers.get('reload-id')!)).status).to.equal('succeeded');
      expect((await get(ports.web)).body).to.equal('app-a');
    });
  });
});

// --- pod isolation ----------------------------------------------------------------

describe('Data Plane API emulator: pod isolation (a test-environment stand-in, not a DPAPI feature)', function () {
  this.timeout(20_000);

  const layout = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };

  describe('PodMapping', () => {
    const mapping = new PodMapping({ ...layout, address: '127.0.0.9' }, { baseDir: '/tmp/own', statsSocket: '/tmp/own/stats.sock' });

    it('narrows wildcard binds to the pod address and leaves other binds alone', () => {
      const cases: [string, string][] = [
        ['  bind *:80', '  bind 127.0.0.9:80'],
        ['  bind :81 ssl crt ssl/a.pem alpn h2', '  bind 127.0.0.9:81 ssl crt ssl/a.pem alpn h2'],
        ['  bind 0.0.0.0:82', '  bind 127.0.0.9:82'],
        ['  bind [::]:83 v4v6', '  bind 127.0.0.9:83 v4v6'],
        ['  bind :::84', '  bind 127.0.0.9:84'],
        ['  bind ipv4@*:85,*:86', '  bind 127.0.0.9:85,127.0.0.9:86'],
        ['  bind *:8000-8010', '  bind 127.0.0.9:8000-8010'],
        ['  bind 10.0.0.1:87', '  bind 10.0.0.1:87'],
        ['  bind 127.0.0.1:88', '  bind 127.0.0.1:88'],
        ['  bind-process 1', '  bind-process 1'],
        ['  # bind *:89', '  # bind *:89'],
      ];
      for (const [input, output] of cases) expect(mapping.toHAProxy(input), input).to.equal(output);
    });

    it('maps the pod base directory as a path prefix and the stats socket exactly', () => {
      const cases: [string, string][] = [
        ['  default-path origin /etc/haproxy', '  default-path origin /tmp/own'],
        ['  default-path origin /etc/haproxy/', '  default-path origin /tmp/own/'],
        ['  stats socket /var/run/haproxy/admin.sock mode 600 level admin', '  stats socket /tmp/own/stats.sock mode 600 level admin'],
        ['  stats socket unix@/var/run/haproxy/admin.sock', '  stats socket unix@/tmp/own/stats.sock'],
        ['  http-request set-var(txn.b) path,map_beg(/etc/haproxy/maps/a.map,x)', '  http-request set-var(txn.b) path,map_beg(/tmp/own/maps/a.map,x)'],
        ['  bind *:443 ssl crt "/etc/haproxy/ssl/a.pem"', '  bind 127.0.0.9:443 ssl crt "/tmp/own/ssl/a.pem"'],
        ['  errorfile 503 /etc/haproxy2/503.http', '  errorfile 503 /etc/haproxy2/503.http'],
        ['  errorfile 503 /opt/etc/haproxy/503.http', '  errorfile 503 /opt/etc/haproxy/503.http'],
        ['  stats socket /var/run/haproxy/admin.sock.old', '  stats socket /var/run/haproxy/admin.sock.old'],
      ];
      for (const [input, output] of cases) expect(mapping.toHAProxy(input), input).to.equal(output);
    });

    it('names the instance’s files by the pod’s paths', () => {
      expect(mapping.toClient('/tmp/own/maps/a.map')).to.equal('/etc/haproxy/maps/a.map');
      expect(mapping.toClient('/tmp/own/stats.sock')).to.equal('/var/run/haproxy/admin.sock');
      expect(mapping.toClient('maps/a.map')).to.equal('maps/a.map');
      expect(mapping.toClient('/elsewhere/a.map')).to.equal('/elsewhere/a.map');
    });
  });

  describe('two instances with one pod layout', () => {
    let a: Emulator;
    let b: Emulator;
    let clientA: DataplaneClient;
    let port = 0;
    let posted = '';

    /** The configuration the controller would render once for every pod. */
    const podConfig = (extra = ''): string => `global
  default-path origin /etc/haproxy
  stats socket /var/run/haproxy/admin.sock mode 600 level admin expose-fd listeners
  stats timeout 30s

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s

frontend web
  bind *:${port}
  http-request return status 200 content-type text/plain lf-string "%[path,map_beg(/etc/haproxy/maps/who.map,unknown)] %[path,map(maps/who.map,-)]"
${extra}`;

    before(async () => {
      a = await emulatorFor({ pod: { ...layout, address: '127.0.0.2' }, reloadDelayMs: 50 });
      b = await emulatorFor({ pod: { ...layout, address: '127.0.0.3' }, reloadDelayMs: 50 });
      clientA = clientFor(a);
      port = await reservePort('127.0.0.2', '127.0.0.3', '127.0.0.1');
      posted = podConfig();
    });

    after(closeAll);

    it('starts on a bootstrap configuration written for the pod layout, listening on the pod address', async () => {
      expect(a.podAddress).to.equal('127.0.0.2');
      expect(b.podAddress).to.equal('127.0.0.3');
      expect(a.pod).to.deep.equal({ ...layout, address: '127.0.0.2' });
      expect((await get(a.bootstrapPort, '/', '127.0.0.2')).status).to.equal(503);
      expect((await get(b.bootstrapPort, '/', '127.0.0.3')).status).to.equal(503);
      const raw = (await clientA.getRawConfiguration()).text;
      expect(raw).to.include('default-path origin /etc/haproxy\n');
      expect(raw).to.include('stats socket /var/run/haproxy/admin.sock ');
      expect(raw).to.include(`bind *:${a.bootstrapPort}\n`);
      const disk = await readFile(a.configFile, 'utf8');
      expect(disk).to.include(`default-path origin ${a.baseDir}\n`);
      expect(disk).to.include(`stats socket ${a.statsSocket} `);
      expect(disk).to.include(`bind 127.0.0.2:${a.bootstrapPort}\n`);
      expect(disk).to.not.include('/etc/haproxy');
    });

    it('both take the same posted configuration with `bind *:P` and serve it on their own address', async () => {
      for (const [emulator, who] of [
        [a, 'pod-a'],
        [b, 'pod-b'],
      ] as const) {
        const client = clientFor(emulator);
        await client.createStorageFile('maps', 'who.map', `/ ${who}\n`, { skipReload: true });
        const written = await client.postRawConfiguration(posted, { version: 1 });
        expect(written.status).to.equal(202);
        expect((await client.waitForReload(written.reloadId!, { pollMs: 20, timeoutMs: 8_000 })).status).to.equal('succeeded');
      }
      expect(await get(port, '/x', '127.0.0.2')).to.deep.equal({ status: 200, body: 'pod-a -' });
      expect(await get(port, '/x', '127.0.0.3')).to.deep.equal({ status: 200, body: 'pod-b -' });
      // Narrowed, not widened: nothing listens on the port elsewhere on loopback.
      const elsewhere = await get(port, '/', '127.0.0.1').then(
        () => 'answered',
        (error: NodeJS.ErrnoException) => error.code,
      );
      expect(elsewhere).to.equal('ECONNREFUSED');
    });

    it('raw GET, the raw POST answer and Configuration-Checksum give back the text as posted, written back', async () => {
      const reply = await call(a, 'GET', RAW);
      const lines = reply.text.split('\n');
      expect(lines.slice(1, 4)).to.deep.equal(['# _version=2', '# Dataplaneapi managed File', '# changing file directly can cause a conflict if dataplaneapi is running']);
      expect(lines.slice(4).join('\n')).to.equal(writeBack(posted));
      expect(reply.headers.get('configuration-checksum')).to.equal(md5(lines.slice(1).join('\n')));
      expect(lines[0]).to.equal(`# _md5hash=${md5(lines.slice(1).join('\n'))}`);

      const disk = await readFile(a.configFile, 'utf8');
      expect(disk).to.include(`bind 127.0.0.2:${port}\n`);
      expect(disk).to.include(`map_beg(${a.mapsDir}/who.map,unknown)`);
      expect(disk).to.not.include('/etc/haproxy');
      expect(disk).to.not.include('/var/run/haproxy');

      // A GET-edit-POST cycle keeps one header and the written-back text.
      const again = await postRaw(a, reply.text, { version: '2', skip_reload: 'true' });
      expect(again.status).to.equal(201);
      expect(again.text.split('\n').slice(4).join('\n')).to.equal(writeBack(posted));
      expect(again.headers.get('configuration-checksum')).to.equal(/^# _md5hash=(\w+)/.exec(again.text)?.[1]);
      const validated = await postRaw(a, posted, { only_validate: 'true' });
      expect(validated.status, validated.text).to.equal(202);
      expect(validated.text).to.equal(again.text);
    });

    it('validates the mapped text: a map missing from this instance is a validation error', async () => {
      const missing = podConfig('  http-request set-var(txn.x) path,map(/etc/haproxy/maps/absent.map)\n');
      const reply = await postRaw(a, missing, { only_validate: 'true' });
      expect(reply.status).to.equal(400);
      expect(errorOf(reply).message).to.match(/^validation error: exit status 1: .*absent\.map/s);
    });

    it('runtime and storage endpoints work on the instance and name files by the pod’s paths', async () => {
      const maps = await clientA.runtimeMaps({ includeUnmanaged: true });
      expect(maps.map((map) => map.file).sort()).to.deep.equal(['/etc/haproxy/maps/who.map', 'maps/who.map']);
      expect(maps.find((map) => map.file === '/etc/haproxy/maps/who.map')).to.include({ storage_name: 'who.map' });
      await clientA.addMapEntry('who.map', '/live', 'pod-a-live');
      expect((await get(port, '/live', '127.0.0.2')).body).to.equal('pod-a-live -');
      expect((await get(port, '/live', '127.0.0.3')).body).to.equal('pod-b -');

      expect(await clientA.listStorage('maps')).to.deep.equal([{ file: '/etc/haproxy/maps/who.map', storage_name: 'who.map', description: 'managed map file' }]);
      const info = JSON.parse((await call(a, 'GET', '/services/haproxy/runtime/info')).text) as Record<string, unknown>;
      expect(info['runtimeAPI']).to.equal('/var/run/haproxy/admin.sock');

      const refused = await call(a, 'DELETE', '/services/haproxy/storage/maps/who.map');
      expect(refused.status).to.equal(409);
      expect(errorOf(refused).message).to.match(
        /^rejecting attempt to delete file \/etc\/haproxy\/maps\/who\.map referenced in haproxy conf at line \d+: http-request return .*map_beg\(\/etc\/haproxy\/maps\/who\.map,unknown\)/,
      );
    });

    it('a failed reload brings back the last-known-good file and its posted text', async () => {
      const busy = await portHolder('127.0.0.2');
      // The last configuration HAProxy loaded is version 2: version 3 was written with skip_reload.
      const good = await readFile(`${a.configFile}.lkg`, 'utf8');
      expect(good).to.include('# _version=2\n');
      const version = await clientA.configurationVersion();
      const clash = podConfig(`\nfrontend clash\n  bind *:${busy}\n  http-request return status 200\n`);
      const written = await clientA.postRawConfiguration(clash, { version });
      expect((await clientA.getRawConfiguration()).text).to.include('frontend clash');
      const reload = await clientA.waitForReload(written.reloadId!, { pollMs: 20, timeoutMs: 8_000 });
      expect(reload.status).to.equal('failed');
      expect(reload.response).to.include(`127.0.0.2:${busy}`);
      expect(await readFile(a.configFile, 'utf8')).to.equal(good);
      const restored = (await clientA.getRawConfiguration()).text.split('\n');
      expect(restored[1]).to.equal('# _version=2');
      expect(restored.slice(4).join('\n')).to.equal(writeBack(posted));
      expect((await get(port, '/x', '127.0.0.2')).body).to.equal('pod-a -');
    });

    it('restartEmpty comes back on the pod’s bootstrap configuration', async () => {
      await b.restartEmpty();
      const raw = await call(b, 'GET', RAW);
      expect(raw.text).to.include(`bind *:${b.bootstrapPort}\n`);
      expect((await get(b.bootstrapPort, '/', '127.0.0.3')).status).to.equal(503);
    });
  });
});
