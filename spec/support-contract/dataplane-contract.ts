/**
 * The Data Plane API contract (docs/dataplane-api-contract.md; § numbers
 * below refer to it), run against any Data Plane API in front of a real
 * HAProxy: the emulator (dataplane-emulator.spec.ts, in `npm test`) and a
 * real dataplaneapi of each pinned release
 * (spec/real-peers/dataplane-contract.real.ts), so that every case the
 * emulator passes is one the real API passes too. Real HTTP, real traffic
 * through HAProxy to small node:http backends that answer their own name.
 *
 * One instance serves the blocks in order (each block deploys the
 * configuration it needs with a synchronous force_reload first); `more`
 * adds blocks that run on the same instance after them.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { DataplaneClient } from '../../lib/dataplane/client.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import { stripHeader, withHeader } from '../support/dataplane-emulator/config-store.ts';
import { writeBack } from '../support/dataplane-emulator/config-writer.ts';
import type { DataplanePeer } from '../support/dataplane-peer.ts';
import { eventually } from '../support/eventually.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';
import {
  backend,
  call,
  clientFor,
  closeAll,
  closers,
  configText,
  currentVersion,
  deploy,
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

/** What the contract needs of an instance beyond DataplanePeer. */
export interface ContractPeer extends DataplanePeer {
  readonly authorization: string;
  readonly configFile: string;
  readonly sslDir: string;
  readonly generalDir: string;
  /** The listener of the configuration the instance started on (answers 503). */
  readonly bootstrapPort: number;
  /** Where the last-known-good copy of the configuration is kept (DPAPI: `<backups_dir>/<name>.lkg`, else `<config>.lkg`). */
  readonly lkgFile: string;
  /** How long a write waits for its reload. */
  readonly reloadDelayMs: number;
}

/** What blocks added with `more` use of the shared instance. */
export interface SharedContract {
  peer(): ContractPeer;
  client(): DataplaneClient;
  /** The configuration the blocks deploy (see `base` below). */
  base(weight?: number, extra?: string): string;
  readonly ports: { readonly web: number; readonly dynamic: number; readonly mapped: number };
}

export function describeDataplaneContract(name: string, start: () => Promise<ContractPeer>, more?: (shared: SharedContract) => void): void {
  describe(`Data Plane API contract: ${name}`, function () {
    this.timeout(20_000);

    let emulator: ContractPeer;
    let client: DataplaneClient;
    const ports = { web: 0, dynamic: 0, mapped: 0 };
    let appA = 0;
    let appB = 0;

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
      emulator = await start();
      closers.push(() => emulator.stop());
      client = clientFor(emulator);
      appA = await backend('app-a');
      appB = await backend('app-b');
      ports.web = await reservePort();
      ports.dynamic = await reservePort();
      ports.mapped = await reservePort();
    });

    after(closeAll);

    describe('authentication and common headers (§1, §2, §8)', () => {
      it('answers 401 with WWW-Authenticate and its release’s message without credentials', async () => {
        const reply = await call(emulator, 'GET', '/info', { authorization: null });
        expect(reply.status).to.equal(401);
        expect(reply.headers.get('www-authenticate')).to.equal('Basic realm="API"');
        // go-openapi's words up to 3.3, the chi middleware's in 3.4.
        const message = emulator.release.chiWire ? 'missing or invalid authorization' : 'unauthenticated for invalid credentials';
        expect(errorOf(reply)).to.deep.equal({ code: 401, message });
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
        // CORS headers answer a request with an Origin only (rs/cors, configure_data_plane.go).
        expect(info.headers.get('access-control-expose-headers')).to.equal(null);
        const fromPage = await call(emulator, 'GET', '/info', { headers: { origin: 'http://console.example' } });
        expect(fromPage.headers.get('access-control-expose-headers')).to.equal('Reload-Id, Configuration-Version');

        const missing = await call(emulator, 'GET', '/services/haproxy/nothing-here');
        expect(missing.status).to.equal(404);
        expect(versionOf(missing)).to.equal(1);
        expect(errorOf(missing).code).to.equal(404);

        const unknownReload = await call(emulator, 'GET', '/services/haproxy/reloads/2999-01-01-7');
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
        expect((await client.info()).api.version).to.match(new RegExp(`^v${emulator.release.release.replace('.', '\\.')}\\.\\d+ \\w+$`));
      });
    });

    describe('raw configuration (§3)', () => {
      it('GET returns a file DPAPI has not written yet as it is, version 1, without header or Configuration-Checksum', async () => {
        const reply = await call(emulator, 'GET', RAW);
        expect(reply.status).to.equal(200);
        expect(reply.headers.get('content-type')).to.match(/^text\/plain/);
        expect(versionOf(reply)).to.equal(1);
        expect(reply.text).to.match(/^global\n/);
        expect(reply.headers.get('configuration-checksum')).to.equal(null);
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

      it('POST: 400 `validation error: exit status 1: err transactionId=<id> msg="..."` for an invalid configuration, the file unchanged', async () => {
        const before = await readFile(emulator.configFile, 'utf8');
        const broken = base().replace('server s1 127.0.0.1', 'server s1 127.0.0.1').concat('  foo bar\n');
        const reply = await postRaw(emulator, broken, { version: '1' });
        expect(reply.status).to.equal(400);
        const { code, message } = errorOf(reply);
        expect(code).to.equal(400);
        expect(message).to.match(/^validation error: exit status 1: err transactionId=[0-9a-f-]{36} \nmsg="config parsing \[[^\]]+:\d+\] unknown keyword 'foo' in 'backend' section/);
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
        // The header DPAPI writes: the md5 of everything after its own line, then the version; nothing else.
        expect(reply.text).to.match(/^# _md5hash=[0-9a-f]{32}\n# _version=2\n\nglobal\n/);
        const lines = reply.text.split('\n');
        expect(reply.headers.get('configuration-checksum')).to.equal(lines[0]!.slice('# _md5hash='.length));
        expect(reply.headers.get('configuration-checksum')).to.equal(md5(lines.slice(1).join('\n')));
        expect(await readFile(emulator.configFile, 'utf8')).to.equal(reply.text);

        // Pending until the reload delay has passed (§2): answered with the id of the reload under way,
        // none here (reload_agent.go GetReload).
        const pending = await call(emulator, 'GET', `/services/haproxy/reloads/${id!}`);
        expect(pending.status).to.equal(200);
        expect(JSON.parse(pending.text)).to.deep.equal({ status: 'in_progress' });
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

      it('404 "Reload with ID <id> does not exist" for a future reload id; an id of no such form refused by its pattern', async () => {
        const future = await call(emulator, 'GET', '/services/haproxy/reloads/2999-12-31-5');
        expect(future.status).to.equal(404);
        expect(errorOf(future)).to.deep.equal({ code: 404, message: 'Reload with ID 2999-12-31-5 does not exist' });
        // An id before the last success is reported succeeded, whether it ever existed or not (GetReload).
        expect(JSON.parse((await call(emulator, 'GET', '/services/haproxy/reloads/1999-01-01-7')).text)).to.deep.equal({ id: '1999-01-01-7', status: 'succeeded' });
        const nonsense = await call(emulator, 'GET', '/services/haproxy/reloads/nonsense');
        const pattern = String.raw`^\d{4}-\d{2}-\d{2}-\d+$`;
        if (emulator.release.chiWire) {
          expect(nonsense.status).to.equal(400);
          expect(errorOf(nonsense)).to.deep.equal({ code: 400, message: `id in path: string doesn't match the regular expression "${pattern}"` });
        } else {
          expect(nonsense.status).to.equal(422);
          expect(errorOf(nonsense)).to.deep.equal({ code: 605, message: `id in path should match '${pattern}'` });
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
        // The worker keeps serving; HAProxy 3.x lists it as an old one once its master re-executed (2.6 does not).
        expect([...after.workers, ...after.oldWorkers].map((worker) => worker.pid)).to.include.members(before.workers.map((worker) => worker.pid));
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
        expect(await readFile(emulator.lkgFile, 'utf8')).to.equal(good);
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
        expect(await readFile(emulator.lkgFile, 'utf8')).to.equal(good);
        expect(await currentVersion(emulator)).to.equal(version + 1);
        const raw = await call(emulator, 'GET', RAW);
        expect(raw.text).to.equal(good);
        expect(versionOf(raw)).to.equal(version + 1);

        const after = await emulator.processInfo();
        expect(after.reloads).to.equal(before.reloads + 1);
        expect(after.failed).to.be.greaterThan(before.failed);
        // The worker keeps serving; HAProxy 3.x lists it as an old one once its master re-executed (2.6 does not).
        expect([...after.workers, ...after.oldWorkers].map((worker) => worker.pid)).to.include.members(before.workers.map((worker) => worker.pid));
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
        expect(errorOf(noServer).message).to.equal('no data for dyn/ghost: not found');
        expect((await call(emulator, 'GET', `${SERVERS}/nope/servers`)).status).to.equal(404);
        expect((await call(emulator, 'PUT', `${SERVERS}/dyn/servers/ghost`, { body: '{"admin_state":"ready"}', contentType: 'application/json' })).status).to.equal(404);
        expect((await call(emulator, 'DELETE', `${SERVERS}/dyn/servers/ghost`)).status).to.equal(404);

        const nameless = await call(emulator, 'POST', `${SERVERS}/dyn/servers`, { body: '{"address":"127.0.0.1"}', contentType: 'application/json' });
        expect(nameless.status).to.equal(400);
      });

      it('deletes a server (in maintenance or not), once HAProxy counts no connection to it', async () => {
        // d2 served requests above: HAProxy refuses `del server` while it keeps a connection to it,
        // an idle one included (src/server.c srv_check_for_deletion), and DPAPI answers 500 then.
        const reply = await eventually(
          async () => {
            const answer = await call(emulator, 'DELETE', `${SERVERS}/dyn/servers/d2`);
            if (answer.status !== 204) {
              expect(answer.status, answer.text).to.equal(500);
              expect(errorOf(answer).message).to.match(/Server still has connections attached to it, cannot remove it/);
            }
            return answer;
          },
          (answer) => answer.status === 204,
          'HAProxy to delete d2',
        );
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
        // Only the list names the storage file (handlers/map.go).
        expect(JSON.parse(one.text))
          .to.include({ file: `${emulator.mapsDir}/routes.map` })
          .and.not.have.property('storage_name');
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
        // go-swagger's 422 up to 3.3, 3.4's 400 (§6a).
        expect(reply.status).to.equal(emulator.release.chiWire ? 400 : 422);
        expect(errorOf(reply).code).to.equal(emulator.release.chiWire ? 400 : 605);
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

    more?.({
      peer: () => emulator,
      client: () => client,
      base: (weight, extra) => base(weight, extra),
      ports,
    });
  });
}
