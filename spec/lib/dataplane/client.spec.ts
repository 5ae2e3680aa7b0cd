import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { DataplaneClient, type DataplaneClientOptions } from '../../../lib/dataplane/client.ts';
import { DataplaneError, DataplaneTimeout, DataplaneUnavailable, NotFound, Unauthorized, ValidationFailed, VersionConflict } from '../../../lib/dataplane/errors.ts';
import { multipartFile } from '../../../lib/dataplane/multipart.ts';
import { apiPath } from '../../../lib/dataplane/path.ts';
import { ManualClock } from '../../support/clocks.ts';

const PASSWORD = 's3cr3t-Pa55';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/** One request as the stub server saw it, body included. */
interface Seen {
  readonly method: string;
  /** Raw request target: path and query exactly as sent, still percent-encoded. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

interface Stub {
  readonly url: string;
  readonly seen: Seen[];
  readonly server: Server;
  connections(): number;
}

type Handler = (request: Seen, response: ServerResponse, index: number) => void;

const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tiny DPAPI stand-in answering whatever `handler` says; closed after the test. */
async function stub(handler: Handler): Promise<Stub> {
  const seen: Seen[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: Seen = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) };
      seen.push(entry);
      handler(entry, response, seen.length - 1);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, server, connections: () => connections };
}

function client(url: string, options: Partial<DataplaneClientOptions> = {}): DataplaneClient {
  const created = new DataplaneClient({ url, username: 'admin', password: PASSWORD, ...options });
  cleanups.push(() => created.close());
  return created;
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(body === undefined ? '' : JSON.stringify(body));
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('dataplane client', () => {
  describe('connection and authentication', () => {
    it('sends HTTP Basic credentials to <url>/v3 and counts requests', async () => {
      const server = await stub((_request, response) => json(response, 200, { api: { version: 'v3.2.5 abc', build_date: '2025-01-01T00:00:00Z' } }));
      const dataplane = client(server.url);
      expect(dataplane.endpoint).to.equal(`${server.url}/v3`);
      const info = await dataplane.info();
      expect(info.api.version).to.equal('v3.2.5 abc');
      expect(server.seen[0]?.url).to.equal('/v3/info');
      expect(server.seen[0]?.headers.authorization).to.equal(AUTH);
      expect(dataplane.requests).to.equal(1);
    });

    it('appends /v3 once and takes credentials out of the url', async () => {
      expect(new DataplaneClient({ url: 'http://10.0.0.5:5555/' }).endpoint).to.equal('http://10.0.0.5:5555/v3');
      expect(new DataplaneClient({ url: 'http://10.0.0.5:5555/v3/' }).endpoint).to.equal('http://10.0.0.5:5555/v3');
      expect(new DataplaneClient({ url: 'https://dpapi.example/proxy' }).endpoint).to.equal('https://dpapi.example/proxy/v3');
      const server = await stub((_request, response) => json(response, 200, 4));
      const dataplane = new DataplaneClient({ url: server.url.replace('http://', `http://admin:${PASSWORD}@`) });
      cleanups.push(() => dataplane.close());
      expect(dataplane.endpoint).to.equal(`${server.url}/v3`);
      expect(await dataplane.configurationVersion()).to.equal(4);
      expect(server.seen[0]?.headers.authorization).to.equal(AUTH);
      expect(inspect(dataplane)).to.not.include(PASSWORD);
    });

    it('refuses TLS options on an http url and a bad url without echoing its password', () => {
      expect(() => new DataplaneClient({ url: 'http://h:5555', tls: { caFile: '/ca.crt' } })).to.throw(/https:\/\//);
      expect(() => new DataplaneClient({ url: `http://admin:${PASSWORD}@h:bad` }))
        .to.throw(TypeError)
        .that.satisfies((error: Error) => !error.message.includes(PASSWORD));
    });

    it('turns 401 into Unauthorized naming the endpoint, with the password nowhere', async () => {
      const server = await stub((_request, response) =>
        json(response, 401, { code: 401, message: 'unauthorized' }, { 'WWW-Authenticate': 'Basic realm="API"', 'Configuration-Version': '3' }),
      );
      const dataplane = client(server.url);
      const error = await rejection(dataplane.configurationVersion());
      expect(error).to.be.instanceOf(Unauthorized).and.instanceOf(DataplaneError);
      const unauthorized = error as Unauthorized;
      expect(unauthorized.kind).to.equal('unauthorized');
      expect(unauthorized.status).to.equal(401);
      expect(unauthorized.code).to.equal(401);
      expect(unauthorized.message).to.equal(`Data Plane API ${server.url}/v3: GET /services/haproxy/configuration/version failed with 401: unauthorized`);
      const base64 = Buffer.from(`admin:${PASSWORD}`).toString('base64');
      for (const text of [
        unauthorized.message,
        JSON.stringify(unauthorized),
        inspect(unauthorized, { depth: 10 }),
        inspect(dataplane, { depth: 10, showHidden: true }),
        String(dataplane),
        JSON.stringify(dataplane),
      ]) {
        expect(text).to.not.include(PASSWORD);
        expect(text).to.not.include(base64);
      }
      expect(JSON.parse(JSON.stringify(unauthorized))).to.include({ kind: 'unauthorized', status: 401, path: '/services/haproxy/configuration/version', message: unauthorized.message });
      expect(inspect(dataplane)).to.include('<redacted>').and.include(server.url);
    });
  });

  describe('versions and errors', () => {
    it('tracks Configuration-Version from successes and errors', async () => {
      const server = await stub((_request, response, index) => {
        if (index === 0) json(response, 200, 7, { 'Configuration-Version': '7' });
        else json(response, 404, { code: 404, message: 'Reload with ID x does not exist' }, { 'Configuration-Version': '8' });
      });
      const dataplane = client(server.url);
      expect(dataplane.lastVersion).to.equal(undefined);
      await dataplane.configurationVersion();
      expect(dataplane.lastVersion).to.equal(7);
      const error = await rejection(dataplane.reload('x'));
      expect(error).to.be.instanceOf(NotFound);
      expect((error as NotFound).version).to.equal(8);
      expect(dataplane.lastVersion).to.equal(8);
    });

    it('turns a 409 version mismatch into VersionConflict with the current version', async () => {
      const message = 'version mismatch: version in configuration file is 7, given version is 6';
      const server = await stub((_request, response) => json(response, 409, { code: 409, message }, { 'Configuration-Version': '7' }));
      const error = await rejection(client(server.url).postRawConfiguration('global\n', { version: 6 }));
      expect(error).to.be.instanceOf(VersionConflict);
      const conflict = error as VersionConflict;
      expect(conflict.serverMessage).to.equal(message);
      expect(conflict.currentVersion).to.equal(7);
      expect(conflict.message).to.include(`${server.url}/v3`).and.include('POST /services/haproxy/configuration/raw?version=6').and.include(message);
    });

    it('turns a 400 validation error into ValidationFailed carrying HAProxy message, even labelled text/plain', async () => {
      const message = "validation error: exit status 1: msg=\"config parsing [bad.cfg:5] unknown keyword 'foo' in 'backend' section\"";
      const server = await stub((_request, response) => {
        // DPAPI 3.2's raw endpoint sends its JSON error as text/plain.
        response.writeHead(400, { 'Content-Type': 'text/plain', 'Configuration-Version': '2' });
        response.end(JSON.stringify({ code: 400, message }));
      });
      const error = await rejection(client(server.url).postRawConfiguration('backend b\n  foo\n', { version: 2, onlyValidate: true }));
      expect(error).to.be.instanceOf(ValidationFailed);
      expect((error as ValidationFailed).serverMessage).to.equal(message);
      expect((error as ValidationFailed).message).to.include("unknown keyword 'foo'");
    });

    it('classifies other refusals by kind and keeps a non-JSON body as the message', async () => {
      const answers: [number, string][] = [
        [409, JSON.stringify({ code: 409, message: 'object already exists: server s1 already exists in be backend' })],
        [400, JSON.stringify({ code: 400, message: 'Reload failed: exit status 1, [ALERT] ...' })],
        [500, '<html>bad gateway</html>'],
        [422, JSON.stringify({ code: 602, message: 'name in body is required' })],
      ];
      const server = await stub((_request, response, index) => {
        const [status, body] = answers[index] ?? [500, ''];
        response.writeHead(status, { 'Content-Type': 'application/json' });
        response.end(body);
      });
      const dataplane = client(server.url);
      const errors = [];
      for (let i = 0; i < answers.length; i += 1) errors.push((await rejection(dataplane.runtimeServers('be'))) as DataplaneError);
      expect(errors.map((e) => [e.kind, e.status, e.code, e.serverMessage])).to.deep.equal([
        ['conflict', 409, 409, 'object already exists: server s1 already exists in be backend'],
        ['reload-failed', 400, 400, 'Reload failed: exit status 1, [ALERT] ...'],
        ['http', 500, undefined, '<html>bad gateway</html>'],
        ['http', 422, 602, 'name in body is required'],
      ]);
    });

    it('gives up with DataplaneTimeout after timeoutMs when the server never answers', async () => {
      const { promise: arrived, resolve: arrive } = Promise.withResolvers<void>();
      const server = await stub(() => arrive());
      // The timeout on a virtual clock: the request is on the server, then 10 s pass at once.
      const clock = new ManualClock();
      const dataplane = client(server.url, { timeoutMs: 10_000, clock });
      const answered = { yet: false };
      const answer = rejection(dataplane.info()).finally(() => (answered.yet = true));
      await arrived;
      await clock.advance(9_999);
      expect(answered.yet).to.equal(false);
      await clock.advance(1);
      const error = await answer;
      expect(error).to.be.instanceOf(DataplaneTimeout);
      expect((error as DataplaneTimeout).message).to.equal(`Data Plane API ${server.url}/v3: GET /info: no answer within 10000 ms`);
      // A timeout is not retried: one request only.
      expect(server.seen).to.have.length(1);
    });

    it('reports a refused connection as DataplaneUnavailable naming the endpoint', async () => {
      const server = await stub(() => {});
      const url = server.url;
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
      const error = await rejection(client(url).info());
      expect(error).to.be.instanceOf(DataplaneUnavailable);
      const unavailable = error as DataplaneUnavailable;
      expect(unavailable.systemCode).to.equal('ECONNREFUSED');
      expect(unavailable.status).to.equal(undefined);
      expect(unavailable.message).to.match(new RegExp(`^Data Plane API ${url}/v3: GET /info: unreachable: .*ECONNREFUSED`));
    });

    it('retries a GET once on a dropped connection, but never a write', async () => {
      const server = await stub((request, response, index) => {
        if (index === 0 || request.method === 'POST') response.socket?.destroy();
        else json(response, 200, 5);
      });
      const dataplane = client(server.url);
      expect(await dataplane.configurationVersion()).to.equal(5);
      expect(dataplane.requests).to.equal(2);
      const error = await rejection(dataplane.postRawConfiguration('global\n', { version: 5 }));
      expect(error).to.be.instanceOf(DataplaneUnavailable);
      expect((error as DataplaneUnavailable).systemCode).to.equal('ECONNRESET');
      expect(dataplane.requests).to.equal(3);
    });
  });

  describe('raw configuration and reloads', () => {
    it('reads the raw configuration with its version and checksum', async () => {
      const text = '# _md5hash=abc\n# _version=12\nglobal\n  daemon\n';
      const server = await stub((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'text/plain', 'Configuration-Version': '12', 'Configuration-Checksum': 'abc' });
        response.end(text);
      });
      expect(await client(server.url).getRawConfiguration()).to.deep.equal({ text, version: 12, checksum: 'abc' });
      expect(server.seen[0]?.url).to.equal('/v3/services/haproxy/configuration/raw');
    });

    it('posts text/plain with the query parameters and X-Runtime-Actions, and reads Reload-Id in any case', async () => {
      const server = await stub((_request, response, index) => {
        // Go canonicalises the header as Reload-Id; a proxy may lowercase it.
        const reloadHeader = index === 0 ? 'Reload-Id' : 'reload-id';
        response.writeHead(index === 0 ? 202 : 201, {
          'Content-Type': 'text/plain',
          'Configuration-Version': '4',
          'Configuration-Checksum': 'c4',
          [reloadHeader]: `2025-01-01-${index}`,
        });
        response.end('# _version=4\nglobal\n');
      });
      const dataplane = client(server.url);
      const reloaded = await dataplane.postRawConfiguration('global\n  daemon\n', { version: 3 });
      expect(reloaded).to.deep.equal({ status: 202, reloadId: '2025-01-01-0', version: 4, body: '# _version=4\nglobal\n', checksum: 'c4' });
      const live = await dataplane.postRawConfiguration('global\n', {
        skipVersion: true,
        skipReload: true,
        onlyValidate: false,
        forceReload: true,
        runtimeActions: ['SetServerWeight be s1 10', 'SetServerState be s2 maint'],
      });
      expect(live.status).to.equal(201);
      expect(live.reloadId).to.equal('2025-01-01-1');
      const [first, second] = server.seen;
      expect(first?.method).to.equal('POST');
      expect(first?.url).to.equal('/v3/services/haproxy/configuration/raw?version=3');
      expect(first?.headers['content-type']).to.equal('text/plain');
      expect(first?.headers['x-runtime-actions']).to.equal(undefined);
      expect(first?.body.toString()).to.equal('global\n  daemon\n');
      expect(second?.url).to.equal('/v3/services/haproxy/configuration/raw?skip_version=true&skip_reload=true&force_reload=true');
      expect(second?.headers['x-runtime-actions']).to.equal('SetServerWeight be s1 10;SetServerState be s2 maint');
      expect(await rejection(dataplane.postRawConfiguration('global\n', { runtimeActions: ['a;b'] }))).to.be.instanceOf(TypeError);
      expect(server.seen).to.have.length(2);
    });

    it('polls a reload until it succeeds, a poll interval apart', async () => {
      const clock = new ManualClock();
      const asked: number[] = [];
      const server = await stub((_request, response, index) => {
        asked.push(clock.now());
        json(response, 200, { id: '2025-01-01-3', status: index < 2 ? 'in_progress' : 'succeeded', response: '', reload_timestamp: 1 });
      });
      const started = clock.now();
      const reload = await clock.runUntil(client(server.url).waitForReload('2025-01-01-3', { timeoutMs: 2_000, pollMs: 500, clock }));
      expect(reload.status).to.equal('succeeded');
      expect(server.seen.map((s) => s.url)).to.deep.equal(Array(3).fill('/v3/services/haproxy/reloads/2025-01-01-3'));
      expect(asked.map((at) => at - started)).to.deep.equal([0, 500, 1_000]);
    });

    it('resolves a failed reload with HAProxy response, and rejects when it stays in progress', async () => {
      const server = await stub((request, response) => {
        const failed = request.url.endsWith('-1');
        json(response, 200, { id: request.url.split('/').pop(), status: failed ? 'failed' : 'in_progress', response: failed ? '[ALERT] bad' : '' });
      });
      const dataplane = client(server.url);
      const clock = new ManualClock();
      expect(await dataplane.waitForReload('2025-01-01-1', { pollMs: 10, clock })).to.deep.include({ status: 'failed', response: '[ALERT] bad' });
      // A minute of polling every 500 ms, on virtual time: the last poll at the deadline, then the timeout.
      const started = clock.now();
      const error = await clock.runUntil(rejection(dataplane.waitForReload('2025-01-01-2', { timeoutMs: 60_000, pollMs: 500, clock })));
      expect(error).to.be.instanceOf(DataplaneTimeout);
      expect((error as DataplaneTimeout).reloadId).to.equal('2025-01-01-2');
      expect(clock.now() - started).to.equal(60_000);
      expect(server.seen).to.have.length(1 + 121);
    });
  });

  describe('storage', () => {
    it('uploads new files as multipart file_upload named after the file', async () => {
      const server = await stub((_request, response) => json(response, 201, { file: '/etc/haproxy/maps/host.map', storage_name: 'host.map', size: 10 }));
      const dataplane = client(server.url);
      const content = 'a.example.com be_a\n"quoted" key\r\n';
      const created = await dataplane.createStorageFile('maps', 'host.map', content);
      expect(created).to.deep.equal({ status: 201, reloadId: undefined, storageName: 'host.map', file: '/etc/haproxy/maps/host.map' });
      await dataplane.createStorageFile('ssl_certificates', 'site.pem', 'PEM', { skipReload: true });
      const [map, certificate] = server.seen;
      expect(map?.url).to.equal('/v3/services/haproxy/storage/maps');
      // Parsed by an independent implementation (undici's FormData), as DPAPI would.
      const form = await new Response(map?.body, { headers: { 'content-type': map?.headers['content-type'] ?? '' } }).formData();
      const file = form.get('file_upload') as File;
      expect(file.name).to.equal('host.map');
      expect(await file.text()).to.equal(content);
      expect(certificate?.url).to.equal('/v3/services/haproxy/storage/ssl_certificates?skip_reload=true');
    });

    it('replaces maps as text/plain and general files as multipart, and deletes with reload options', async () => {
      const server = await stub((request, response) => {
        if (request.method === 'DELETE') return json(response, 204, undefined);
        response.writeHead(202, { 'Reload-Id': '2025-01-01-9' });
        response.end();
      });
      const dataplane = client(server.url);
      expect(await dataplane.replaceStorageFile('maps', 'host.map', 'k v\n')).to.deep.equal({
        status: 202,
        reloadId: '2025-01-01-9',
        storageName: undefined,
        file: undefined,
      });
      await dataplane.replaceStorageFile('general', 'error page.http', 'HTTP/1.0 503\r\n', { forceReload: true });
      expect(await dataplane.deleteStorageFile('general', 'error page.http', { skipReload: true })).to.deep.include({ status: 204 });
      const [map, general, deleted] = server.seen;
      expect([map?.method, map?.url, map?.headers['content-type'], map?.body.toString()]).to.deep.equal(['PUT', '/v3/services/haproxy/storage/maps/host.map', 'text/plain', 'k v\n']);
      expect(general?.url).to.equal('/v3/services/haproxy/storage/general/error%20page.http?force_reload=true');
      const form = await new Response(general?.body, { headers: { 'content-type': general?.headers['content-type'] ?? '' } }).formData();
      expect(await (form.get('file_upload') as File).text()).to.equal('HTTP/1.0 503\r\n');
      expect([deleted?.method, deleted?.url]).to.deep.equal(['DELETE', '/v3/services/haproxy/storage/general/error%20page.http?skip_reload=true']);
    });

    it('lists and reads stored files', async () => {
      const server = await stub((request, response) => {
        if (request.url.endsWith('/maps')) return json(response, 200, [{ file: '/etc/haproxy/maps/a.map', storage_name: 'a.map', description: 'managed map file' }]);
        response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        response.end('k v\n');
      });
      const dataplane = client(server.url);
      expect((await dataplane.listStorage('maps')).map((f) => f.storage_name)).to.deep.equal(['a.map']);
      expect(await dataplane.getStorageFile('maps', 'a.map')).to.equal('k v\n');
    });
  });

  describe('runtime', () => {
    it('manages runtime servers with the v3 nested paths', async () => {
      const server = await stub((request, response) => {
        if (request.method === 'DELETE') return json(response, 204, undefined);
        if (request.method === 'POST') return json(response, 201, JSON.parse(request.body.toString()));
        if (request.method === 'PUT') return json(response, 200, { name: 's1', admin_state: 'drain', operational_state: 'up' });
        if (request.url.endsWith('/servers')) return json(response, 200, [{ name: 's1', address: '10.0.0.1', port: 80, admin_state: 'ready', operational_state: 'up' }]);
        return json(response, 200, { name: 's1', address: '10.0.0.1', port: 80, admin_state: 'ready', operational_state: 'up' });
      });
      const dataplane = client(server.url);
      const backend = 'default/web:80';
      expect(await dataplane.runtimeServers(backend)).to.have.length(1);
      expect((await dataplane.runtimeServer(backend, 's1')).address).to.equal('10.0.0.1');
      const added = await dataplane.addRuntimeServer(backend, { name: 's2', address: '10.0.0.2', port: 8080, weight: 5, check: 'enabled', maintenance: 'disabled' });
      expect(added.name).to.equal('s2');
      expect((await dataplane.updateRuntimeServer(backend, 's1', { admin_state: 'drain' })).admin_state).to.equal('drain');
      await dataplane.deleteRuntimeServer(backend, 's2');
      const base = '/v3/services/haproxy/runtime/backends/default%2Fweb%3A80/servers';
      expect(server.seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal([`GET ${base}`, `GET ${base}/s1`, `POST ${base}`, `PUT ${base}/s1`, `DELETE ${base}/s2`]);
      expect(JSON.parse(server.seen[2]?.body.toString() ?? '')).to.deep.equal({ name: 's2', address: '10.0.0.2', port: 8080, weight: 5, check: 'enabled', maintenance: 'disabled' });
      expect(server.seen[2]?.headers['content-type']).to.equal('application/json');
      expect(JSON.parse(server.seen[3]?.body.toString() ?? '')).to.deep.equal({ admin_state: 'drain' });
    });

    it('URL-encodes map names and keys with slashes, spaces and #', async () => {
      const server = await stub((request, response) => {
        if (request.method === 'DELETE') return json(response, 204, undefined);
        if (request.method === 'GET' && request.url.endsWith('/maps')) return json(response, 200, [{ id: '3', file: '/etc/haproxy/maps/path.map', storage_name: 'path.map' }]);
        if (request.method === 'GET') return json(response, 200, [{ id: '0x1', key: '/api/v1 x', value: 'be' }]);
        return json(response, request.method === 'POST' ? 201 : 200, { key: '/api/v1 x', value: 'be2' });
      });
      const dataplane = client(server.url);
      expect(await dataplane.runtimeMaps({ includeUnmanaged: true })).to.have.length(1);
      expect(await dataplane.mapEntries('#3')).to.deep.equal([{ id: '0x1', key: '/api/v1 x', value: 'be' }]);
      await dataplane.addMapEntry('path.map', '/api/v1 x', 'be');
      await dataplane.setMapEntry('path.map', '/api/v1 x', 'be2', { forceSync: true });
      await dataplane.deleteMapEntry('#3', 'a?b#c%d');
      expect(server.seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal([
        'GET /v3/services/haproxy/runtime/maps?include_unmanaged=true',
        'GET /v3/services/haproxy/runtime/maps/%233/entries',
        'POST /v3/services/haproxy/runtime/maps/path.map/entries',
        'PUT /v3/services/haproxy/runtime/maps/path.map/entries/%2Fapi%2Fv1%20x?force_sync=true',
        'DELETE /v3/services/haproxy/runtime/maps/%233/entries/a%3Fb%23c%25d',
      ]);
      expect(JSON.parse(server.seen[2]?.body.toString() ?? '')).to.deep.equal({ key: '/api/v1 x', value: 'be' });
      expect(JSON.parse(server.seen[3]?.body.toString() ?? '')).to.deep.equal({ value: 'be2' });
    });

    it('refuses path segments that URL parsing would resolve away', () => {
      expect(() => apiPath`/maps/${'m'}/entries/${'..'}`).to.throw(TypeError);
      expect(() => apiPath`/maps/${'m'}/entries/${'.'}`).to.throw(TypeError);
      expect(() => apiPath`/maps/${''}/entries`).to.throw(TypeError);
      expect(apiPath`/maps/${'m'}/entries/${'...'}`).to.equal('/maps/m/entries/...');
    });
  });

  describe('connections', () => {
    it('reuses one keep-alive connection for consecutive requests', async () => {
      const server = await stub((_request, response) => json(response, 200, 1, { 'Configuration-Version': '1' }));
      const dataplane = client(server.url);
      for (let i = 0; i < 3; i += 1) await dataplane.configurationVersion();
      expect(server.seen).to.have.length(3);
      expect(server.connections()).to.equal(1);
    });
  });

  describe('multipart body', () => {
    it('keeps quotes and line breaks in a file name from breaking the part header', async () => {
      const upload = multipartFile('file_upload', 'a"b\r\nc.map', 'x');
      expect(upload.body.toString()).to.include('; filename="a%22b%0D%0Ac.map"\r\n');
      // The WHATWG form encoding round-trips through a conforming parser.
      const form = await new Response(upload.body, { headers: { 'content-type': upload.contentType } }).formData();
      expect((form.get('file_upload') as File).name).to.equal('a"b\r\nc.map');
    });
  });
});
