/**
 * Contract tests of the Data Plane API v3 emulator (spec/support/dataplane-emulator):
 * the contract every Data Plane API peer passes (dataplane-contract.ts, which a real
 * dataplaneapi runs too), then what only the emulator does, in front of a real
 * HAProxy (2.6 to 3.4, HAPROXY_BIN: the release paired with it, the `enabled`
 * keyword DPAPI sends before HAProxy 3.0, a status command, the exchanges hook,
 * injected faults), and its pod isolation. The
 * behaviours that differ between releases, and the raw configuration as the real
 * API writes it back, are in dataplane-emulator-releases.spec.ts.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { DataplaneTimeout } from '../../lib/dataplane/errors.ts';
import { readCapabilities } from '../../lib/haproxy/capabilities.ts';
import { startEmulator } from '../support/dataplane-emulator/index.ts';
import type { Emulator, Exchange } from '../support/dataplane-emulator/index.ts';
import { writeBack } from '../support/dataplane-emulator/config-writer.ts';
import { PodMapping } from '../support/dataplane-emulator/pod.ts';
import { pairedRelease, releaseFeatures } from '../support/dataplane-emulator/release.ts';
import { eventually } from '../support/eventually.ts';
import { backend, call, clientFor, closeAll, currentVersion, emulatorFor, errorOf, get, md5, portHolder, postRaw, RAW, versionOf, waitReload } from './emulator-kit.ts';
import type { DataplaneClient } from '../../lib/dataplane/client.ts';
import { describeDataplaneContract } from './dataplane-contract.ts';
import { reservePort } from '../support/ports.ts';

// --- the contract, then what only the emulator does, on the same instance ----------

const exchanges: Exchange[] = [];
let emulator: Emulator;

describeDataplaneContract(
  'the emulator (paired with HAProxy) in front of a real HAProxy',
  async () => {
    // Long enough for two writes (each runs haproxy -c) to land inside one reload delay, even on a busy machine.
    emulator = await startEmulator({ reloadDelayMs: 400, onExchange: (exchange) => exchanges.push(exchange) });
    return emulator;
  },
  (shared) => {
    afterEach(() => emulator?.faults.reset());

    describe('what only the emulator does', () => {
      it('stands for the Data Plane API release paired with the HAProxy in use (3.2.15 with HAProxy 3.2)', async () => {
        const paired = releaseFeatures(pairedRelease((await readCapabilities()).version));
        expect((await shared.client().info()).api.version).to.equal(paired.version);
        expect(emulator.release.release).to.equal(paired.release);
      });

      it('answers /health from HAProxy’s master when DPAPI has a status command', async () => {
        const other = await emulatorFor({ statusCommand: true });
        expect(await clientFor(other).health()).to.deep.equal({ haproxy: 'up' });
      });

      it('sends `enabled` for maintenance "disabled" where HAProxy takes it (before 3.0), as DPAPI does (§6)', async () => {
        // On 2.6.12 such a server is ready at once but never enters the load-balancing tree, and the
        // backend balances nothing afterwards: it is added to a backend no test sends traffic to. From
        // 3.0 DPAPI leaves the keyword out, and the server starts in maintenance as any dynamic one.
        const { dynamicServerEnabledKeyword } = await readCapabilities();
        const appC = await backend('app-c');
        await shared.client().addRuntimeServer('quirk', { name: 'q1', address: '127.0.0.1', port: appC, maintenance: 'disabled' });
        expect(await shared.client().runtimeServer('quirk', 'q1')).to.deep.include({ admin_state: dynamicServerEnabledKeyword ? 'ready' : 'maint' });
        await shared.client().deleteRuntimeServer('quirk', 'q1');
      });
    });

    describe('exchanges (a hook for benchmarks, not a DPAPI feature)', () => {
      it('reports each answered request with its body, the answer as sent, and how long it took', async () => {
        exchanges.length = 0;
        const text = (await shared.client().getRawConfiguration()).text;
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
        const text = (await shared.client().getRawConfiguration()).text;
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
        const raw = await shared.client().getRawConfiguration();
        expect(raw.version).to.equal(1);
        expect(raw.text).to.include('frontend bootstrap');
        expect(raw.text).to.not.include('frontend web');
        for (const kind of ['maps', 'general', 'ssl_certificates'] as const) expect(await shared.client().listStorage(kind)).to.deep.equal([]);
        expect((await get(emulator.bootstrapPort)).status).to.equal(503);
        await eventually(
          () =>
            get(shared.ports.web).then(
              () => 'open',
              () => 'closed',
            ),
          (state) => state === 'closed',
          'the old frontend to be gone',
        );
        const reply = await postRaw(emulator, shared.base(), { version: '1' });
        expect(reply.status, reply.text).to.equal(202);
        expect(reply.headers.get('reload-id')).to.match(/-0$/);
        expect((await waitReload(emulator, reply.headers.get('reload-id')!)).status).to.equal('succeeded');
        expect((await get(shared.ports.web)).body).to.equal('app-a');
      });
    });
  },
);

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
      for (const [instance, who] of [
        [a, 'pod-a'],
        [b, 'pod-b'],
      ] as const) {
        const client = clientFor(instance);
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
      expect(lines[1]).to.equal('# _version=2');
      expect(lines.slice(2).join('\n')).to.equal(writeBack(posted));
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
      expect(again.text.split('\n').slice(2).join('\n')).to.equal(writeBack(posted));
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
      expect(restored.slice(2).join('\n')).to.equal(writeBack(posted));
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
