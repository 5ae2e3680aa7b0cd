/**
 * Contract tests of the emulator for the behaviours of the real Data Plane API
 * that a client written from notes gets wrong, each taken from the real source
 * (docs/dataplane-api-contract.md §3a, §6a, §7a): the raw configuration as
 * config-parser writes it back, path-parameter patterns as each release answers
 * them, certificates described by metadata and written to storage only, the
 * runtime certificate endpoints, and the smaller points (add-server keywords,
 * SetServerAddr without a port), the wire of the 3.4 rewrite. Real HTTP, a real HAProxy, real TLS.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { DataplaneClient } from '../../lib/dataplane/client.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import type { Emulator, Release } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { servedSerial, serialOf } from '../support/tls-handshake.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';
import { backend, call, clientFor, closeAll, configText, deploy, emulatorFor, errorOf, get, md5, postRaw, RAW, versionOf, waitReload } from './emulator-kit.ts';
import { reservePort } from '../support/ports.ts';

const FIRST = `${SELF_SIGNED_CERT}${SELF_SIGNED_KEY}`;
const SECOND = `${LEAF_CERT}${CA_CERT}${LEAF_KEY}`;
const MAPS = '/services/haproxy/runtime/maps';

/** A map entry POST (the key travels in the body). */
function addEntry(emulator: Emulator, map: string, key: string, value: string) {
  return call(emulator, 'POST', `${MAPS}/${encodeURIComponent(map)}/entries`, {
    body: JSON.stringify({ key, value }),
    contentType: 'application/json',
  });
}

describe('Data Plane API emulator: the real API’s behaviours', function () {
  this.timeout(30_000);

  describe('raw configuration written back by the parser (§3a)', () => {
    after(closeAll);

    let emulator: Emulator;
    let port = 0;
    let app = 0;
    // Sections out of the writer's order, an unnamed defaults, keywords out of the parser's order, comments.
    const posted = (): string => `# posted by a test
global
  stats timeout 30s
  default-path origin ${emulator.baseDir}
  stats socket ${emulator.statsSocket} mode 600 level admin expose-fd listeners

backend zeta
  server s1 127.0.0.1:${app}
  # the rules of one keyword keep their order
  http-request set-header X-First 1
  balance roundrobin
  http-request set-header X-Second 2

frontend web
  http-request set-var(txn.a) str(a)
  stats enable
  bind 127.0.0.1:${port}
  default_backend alpha

backend alpha
  balance roundrobin
  server s1 127.0.0.1:${app}

defaults
  timeout server 30s
  mode http
  timeout connect 5s
  timeout client 30s
`;

    before(async () => {
      emulator = await emulatorFor();
      port = await reservePort();
      app = await backend('app');
    });

    it('stores global, then sections by type with sorted names, lines grouped per keyword in the parser’s order', async () => {
      const reply = await postRaw(emulator, posted(), { version: '1', force_reload: 'true' });
      expect(reply.status, reply.text).to.equal(201);
      const body = reply.text.split('\n').slice(2).join('\n');
      expect(body).to.equal(`# posted by a test

global
  default-path origin ${emulator.baseDir}
  stats socket ${emulator.statsSocket} mode 600 level admin expose-fd listeners
  stats timeout 30s

defaults unnamed_defaults_1
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s

frontend web
  bind 127.0.0.1:${port}
  stats enable
  http-request set-var(txn.a) str(a)
  default_backend alpha

backend alpha
  balance roundrobin
  server s1 127.0.0.1:${app}

backend zeta
  balance roundrobin
  # the rules of one keyword keep their order
  http-request set-header X-First 1
  http-request set-header X-Second 2
  server s1 127.0.0.1:${app}
`);
      // What HAProxy runs is what was written back (client-native validates and saves the parsed text).
      expect((await readFile(emulator.configFile, 'utf8')).split('\n').slice(2).join('\n')).to.equal(body);
      expect(await get(port)).to.deep.equal({ status: 200, body: 'app' });
    });

    it('answers GET and POST with the stored text and its md5 as Configuration-Checksum; writing it back again changes nothing', async () => {
      const read = await call(emulator, 'GET', RAW);
      const checksum = read.headers.get('configuration-checksum');
      expect(checksum).to.equal(md5(read.text.split('\n').slice(1).join('\n')));
      const again = await postRaw(emulator, read.text, { version: String(versionOf(read)), skip_reload: 'true' });
      expect(again.status).to.equal(201);
      expect(again.text.split('\n').slice(2).join('\n')).to.equal(read.text.split('\n').slice(2).join('\n'));
      // Only the version line changed, so the checksum did too: the same text at a new version.
      expect(again.headers.get('configuration-checksum')).to.not.equal(checksum);
      expect((await call(emulator, 'GET', RAW)).headers.get('configuration-checksum')).to.equal(again.headers.get('configuration-checksum'));
    });

    it('names unnamed defaults sections unnamed_defaults_<n> in their order, and adds no `from` to proxies', async () => {
      const text = configText(emulator, `\nfrontend f\n  bind 127.0.0.1:${port}\n  default_backend b\n\ndefaults\n  mode http\n\nbackend b\n  server s1 127.0.0.1:${app}\n`);
      const version = JSON.parse((await call(emulator, 'GET', '/services/haproxy/configuration/version')).text) as number;
      const reply = await postRaw(emulator, text, { version: String(version), skip_reload: 'true' });
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.text).to.include('\ndefaults unnamed_defaults_1\n').and.include('\ndefaults unnamed_defaults_2\n');
      expect(reply.text).to.include('\nfrontend f\n').and.include('\nbackend b\n');
    });
  });

  describe('path-parameter patterns (§6a)', () => {
    after(closeAll);

    const cases: readonly { release: Release; status: number; code: number; message: RegExp }[] = [
      { release: '3.0', status: 422, code: 605, message: /^parent_name in path should match / },
      { release: '3.2', status: 422, code: 605, message: /^parent_name in path should match '\^\[\^\\r\\n<>\*;\$#&\{\}"\]\+\$'$/ },
      { release: '3.3', status: 422, code: 605, message: /^parent_name in path should match / },
      { release: '3.4', status: 400, code: 400, message: /^parent_name in path: string doesn't match the regular expression / },
    ];
    for (const { release, status, code, message } of cases) {
      it(`${release}: a %23<id> map and a key with * cannot be addressed by path (${status}); POST carries the key in the body`, async () => {
        const emulator = await emulatorFor({ release });
        const client = clientFor(emulator);
        await client.createStorageFile('maps', 'host.map', 'a.example.com a\n', { skipReload: true });
        await deploy(
          emulator,
          configText(
            emulator,
            `\nfrontend web\n  bind 127.0.0.1:${await reservePort()}\n  http-request return status 200 content-type text/plain lf-string "%[req.hdr(host),map(${emulator.mapsDir}/host.map,none)]"\n`,
          ),
        );
        const id = (await client.runtimeMaps())[0]!.id!;
        const byId = await call(emulator, 'GET', `${MAPS}/%23${id}/entries`);
        expect(byId.status).to.equal(status);
        expect(errorOf(byId)).to.deep.include({ code });
        expect(errorOf(byId).message).to.match(message);

        // A key with `*` goes in by POST (the body has no pattern)...
        expect((await addEntry(emulator, 'host.map', '*.example.com', 'wild')).status).to.equal(201);
        // ...but is neither changed nor deleted by path: the entry id is refused like the map name.
        const changed = await call(emulator, 'PUT', `${MAPS}/host.map/entries/${encodeURIComponent('*.example.com')}`, {
          body: JSON.stringify({ value: 'other' }),
          contentType: 'application/json',
        });
        expect(changed.status).to.equal(status);
        expect(errorOf(changed).message).to.match(/^id in path/);
        const deleted = await call(emulator, 'DELETE', `${MAPS}/host.map/entries/${encodeURIComponent('*.example.com')}`);
        expect(deleted.status).to.equal(status);
        expect((await client.mapEntries('host.map')).map((entry) => entry.key)).to.deep.equal(['a.example.com', '*.example.com']);
        // A key the pattern admits is addressed by path, through the storage name.
        expect((await call(emulator, 'DELETE', `${MAPS}/host.map/entries/a.example.com`)).status).to.equal(204);
      });
    }

    it('3.1 has no pattern: %23<id> reaches a map the configuration names by a relative path', async () => {
      const emulator = await emulatorFor({ release: '3.1' });
      const client = clientFor(emulator);
      await client.createStorageFile('maps', 'rel.map', '/r0 rel-0\n', { skipReload: true });
      const port = await reservePort();
      await deploy(
        emulator,
        configText(emulator, `\nfrontend web\n  bind 127.0.0.1:${port}\n  http-request return status 200 content-type text/plain lf-string "%[path,map(maps/rel.map,none)]"\n`),
      );
      const relative = (await client.runtimeMaps({ includeUnmanaged: true })).find((map) => map.file === 'maps/rel.map')!;
      expect((await addEntry(emulator, `#${relative.id!}`, '/r1', 'rel-1')).status).to.equal(201);
      expect((await get(port, '/r1')).body).to.equal('rel-1');
      // The storage name resolves to <maps_dir>/rel.map, which HAProxy does not know under that name.
      expect((await addEntry(emulator, 'rel.map', '/r2', 'rel-2')).status).to.equal(404);
    });
  });

  describe('certificates (§7a)', () => {
    after(closeAll);

    /** An emulator serving TLS with the certificate stored as site.pem, named ssl/site.pem by a crt-list. */
    async function tlsInstance(release: Release): Promise<{ emulator: Emulator; client: DataplaneClient; port: number }> {
      const emulator = await emulatorFor({ release });
      const client = clientFor(emulator);
      const port = await reservePort();
      await client.createStorageFile('ssl_certificates', 'site.pem', FIRST, { skipReload: true });
      await client.createStorageFile('general', 'crt-list.txt', 'ssl/site.pem\n', { skipReload: true });
      await deploy(emulator, configText(emulator, `\nfrontend tls\n  bind 127.0.0.1:${port} ssl crt-list general/crt-list.txt\n  http-request return status 200\n`));
      return { emulator, client, port };
    }
    const reloads = async (emulator: Emulator) => (await emulator.processInfo()).reloads;

    it('GET describes the stored certificate with metadata (decimal serial, dates, names), never the PEM', async () => {
      const { emulator } = await tlsInstance('3.3');
      const reply = await call(emulator, 'GET', '/services/haproxy/storage/ssl_certificates/site.pem');
      expect(reply.status).to.equal(200);
      expect(reply.headers.get('content-type')).to.equal('application/json');
      expect(reply.text).to.not.include('BEGIN');
      const model = JSON.parse(reply.text) as Record<string, unknown>;
      expect(model).to.deep.include({
        storage_name: 'site.pem',
        file: `${emulator.sslDir}/site.pem`,
        description: 'managed SSL file',
        size: Buffer.byteLength(FIRST),
        serial: BigInt(`0x${serialOf(SELF_SIGNED_CERT)}`).toString(10),
        subject: 'example.com',
        issuers: 'example.com',
        not_before: '2026-11-21T08:17:16.000Z',
        not_after: '2036-11-18T08:17:16.000Z',
      });
      // A self-signed certificate is a CA: its names are no domains (cert-info.go counts non-CA certificates only).
      expect(model).to.not.have.property('domains');
      // A chain: the leaf's serial, the earliest notAfter, every issuer.
      await call(emulator, 'PUT', '/services/haproxy/storage/ssl_certificates/site.pem', { body: SECOND, contentType: 'text/plain', query: { skip_reload: 'true' } });
      const chain = JSON.parse((await call(emulator, 'GET', '/services/haproxy/storage/ssl_certificates/site.pem')).text) as Record<string, unknown>;
      expect(chain).to.deep.include({
        serial: BigInt(`0x${serialOf(LEAF_CERT)}`).toString(10),
        subject: 'shop.example.com',
        issuers: 'Fixture-CA',
        domains: 'shop.example.com',
      });
    });

    it('PUT with skip_reload only writes the file: HAProxy keeps serving the old certificate, no reload', async () => {
      const { emulator, port } = await tlsInstance('3.3');
      const before = await reloads(emulator);
      const reply = await call(emulator, 'PUT', '/services/haproxy/storage/ssl_certificates/site.pem', { body: SECOND, contentType: 'text/plain', query: { skip_reload: 'true' } });
      expect(reply.status).to.equal(200);
      expect(reply.headers.get('reload-id')).to.equal(null);
      expect(await readFile(`${emulator.sslDir}/site.pem`, 'utf8')).to.equal(SECOND);
      expect(await servedSerial('127.0.0.1', port, 'shop.example.com')).to.equal(serialOf(SELF_SIGNED_CERT));
      expect(await reloads(emulator)).to.equal(before);
    });

    it('PUT without skip_reload pushes by the stored path, which HAProxy does not know by a relative name: a reload', async () => {
      const { emulator, port } = await tlsInstance('3.3');
      const reply = await call(emulator, 'PUT', '/services/haproxy/storage/ssl_certificates/site.pem', { body: SECOND, contentType: 'text/plain' });
      expect(reply.status).to.equal(202);
      expect(reply.headers.get('reload-id')).to.match(/^\d{4}-\d{2}-\d{2}-\d+$/);
      expect((await waitReload(emulator, reply.headers.get('reload-id')!)).status).to.equal('succeeded');
      expect(await servedSerial('127.0.0.1', port, 'shop.example.com')).to.equal(serialOf(LEAF_CERT));
    });

    it('the runtime endpoints list certificates as HAProxy names them and replace one live: the new serial at once, no reload', async () => {
      const { emulator, client, port } = await tlsInstance('3.3');
      const before = await reloads(emulator);
      const listed = JSON.parse((await call(emulator, 'GET', '/services/haproxy/runtime/ssl_certs')).text) as unknown[];
      expect(listed).to.deep.equal([{ storage_name: 'ssl/site.pem', description: 'site.pem' }]);
      const reply = await client.replaceRuntimeCertificate('ssl/site.pem', SECOND);
      expect(reply).to.equal(undefined);
      expect(await servedSerial('127.0.0.1', port, 'shop.example.com')).to.equal(serialOf(LEAF_CERT));
      expect(await reloads(emulator)).to.equal(before);
      const shown = JSON.parse((await call(emulator, 'GET', `/services/haproxy/runtime/ssl_certs/${encodeURIComponent('ssl/site.pem')}`)).text) as Record<string, unknown>;
      expect(shown).to.deep.include({ storage_name: 'ssl/site.pem', serial: serialOf(LEAF_CERT) });
      // A name HAProxy does not know: 500, HAProxy's words in the message.
      const unknown = await call(emulator, 'PUT', `/services/haproxy/runtime/ssl_certs/${encodeURIComponent('ssl/other.pem')}`, {
        body: '--b\r\nContent-Disposition: form-data; name="file_upload"; filename="x"\r\n\r\nx\r\n--b--\r\n',
        contentType: 'multipart/form-data; boundary=b',
      });
      expect(unknown.status).to.equal(500);
    });

    it('3.1 has no runtime certificate endpoints and reloads for a storage write without skip_reload', async () => {
      const { emulator } = await tlsInstance('3.1');
      expect((await call(emulator, 'GET', '/services/haproxy/runtime/ssl_certs')).status).to.equal(404);
      const reply = await call(emulator, 'PUT', '/services/haproxy/storage/ssl_certificates/site.pem', { body: SECOND, contentType: 'text/plain' });
      expect(reply.status).to.equal(202);
    });
  });

  describe('the wire of the chi server (3.4) against go-swagger’s (3.0 to 3.3.5)', () => {
    after(closeAll);

    for (const release of ['3.2', '3.4'] as const) {
      const chi = release === '3.4';
      it(`${release}: ${chi ? '401 before 404, codes equal to statuses, JSON raw errors, text/plain raw bodies only' : '404 before 401, 6xx codes, raw errors as text/plain, a JSON string raw body taken'}`, async () => {
        const emulator = await emulatorFor({ release });
        const unknown = await call(emulator, 'GET', '/nowhere', { authorization: null });
        expect(unknown.status).to.equal(chi ? 401 : 404);

        const oneLine = await call(emulator, 'POST', RAW, { query: { skip_version: 'true' }, body: 'global', contentType: 'text/plain' });
        expect(oneLine.status).to.equal(400);
        expect(oneLine.headers.get('content-type')).to.equal(chi ? 'application/json' : 'text/plain');

        const text = (await clientFor(emulator).getRawConfiguration()).text;
        const asJson = await call(emulator, 'POST', RAW, { query: { skip_version: 'true', skip_reload: 'true' }, body: JSON.stringify(text), contentType: 'application/json' });
        expect(asJson.status).to.equal(chi ? 415 : 201);

        const boolean = await call(emulator, 'POST', RAW, { query: { skip_version: 'maybe' }, body: text, contentType: 'text/plain' });
        expect(boolean.status).to.equal(422);
        expect(errorOf(boolean).code).to.equal(chi ? 422 : 601);
      });

      it(`${release}: a certificate HAProxy loaded at runtime only is deleted with 202 and a reload${chi ? ' (the runtime delete names it as HAProxy does not)' : ''}`, async () => {
        const emulator = await emulatorFor({ release });
        const client = clientFor(emulator);
        await client.createStorageFile('ssl_certificates', 'spare.pem', FIRST);
        expect(await runtimeCommand(emulator.statsSocket, 'show ssl cert')).to.include(`${emulator.sslDir}/spare.pem`);
        const reply = await call(emulator, 'DELETE', '/services/haproxy/storage/ssl_certificates/spare.pem');
        expect(reply.status).to.equal(202);
        expect(reply.headers.get('reload-id')).to.match(/^\d{4}-\d{2}-\d{2}-\d+$/);
      });
    }
  });

  describe('servers (§6a)', () => {
    after(closeAll);

    let emulator: Emulator;
    let client: DataplaneClient;
    let port = 0;
    let app = 0;
    before(async () => {
      emulator = await emulatorFor();
      client = clientFor(emulator);
      port = await reservePort();
      app = await backend('app');
      await deploy(emulator, configText(emulator, `\nfrontend web\n  bind 127.0.0.1:${port}\n  default_backend dyn\n\nbackend dyn\n  balance roundrobin\n  server s1 127.0.0.1:1\n`));
    });

    it('adds a server with maintenance "enabled" as the `disabled` keyword: in maintenance until made ready', async () => {
      await client.addRuntimeServer('dyn', { name: 'd1', address: '127.0.0.1', port: app, maintenance: 'enabled' });
      const added = (await client.runtimeServers('dyn')).find((server) => server.name === 'd1');
      expect(added).to.deep.include({ admin_state: 'maint' });
      await client.updateRuntimeServer('dyn', 's1', { admin_state: 'maint' });
      await client.updateRuntimeServer('dyn', 'd1', { admin_state: 'ready', operational_state: 'up' });
      expect(await get(port)).to.deep.equal({ status: 200, body: 'app' });
    });

    it('SetServerAddr with port 0 sets the address alone (client-native leaves the port out)', async () => {
      const text = (await client.getRawConfiguration()).text;
      const reply = await postRaw(emulator, text, { version: String(await client.configurationVersion()), skip_reload: 'true' }, { 'X-Runtime-Actions': 'SetServerAddr dyn s1 127.0.0.2 0' });
      expect(reply.status, reply.text).to.equal(201);
      // From 3.0 HAProxy applies a new address in a task of its own after answering (src/server.c
      // server_atomic_sync): a read right after the command may still see the old one.
      const server = await eventually(
        () => client.runtimeServer('dyn', 's1'),
        (read) => read.address === '127.0.0.2',
        'the address HAProxy applies',
      );
      expect(server).to.deep.include({ address: '127.0.0.2', port: 1 });
    });

    it('3.2 ignores weight, address and port in a runtime server PUT (they came in 3.3.4)', async () => {
      const old = await emulatorFor({ release: '3.2' });
      await deploy(old, configText(old, `\nbackend dyn\n  balance roundrobin\n  server s1 127.0.0.1:1\n`));
      const updated = await clientFor(old).updateRuntimeServer('dyn', 's1', { address: '127.0.0.3', port: 2 });
      expect(updated).to.deep.include({ address: '127.0.0.1', port: 1 });
    });
  });
});
