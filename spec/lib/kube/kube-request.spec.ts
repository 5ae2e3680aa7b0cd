import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { dump } from 'js-yaml';
import { kubeConnectionFromFile, type KubeConnection } from '../../../lib/kube/kube-connection.ts';
import { KubeRequestError, kubeRequest, kubeWatch, WatchIdleError, type WatchLine } from '../../../lib/kube/kube-request.ts';

/**
 * The requests of the controller's Kubernetes client against a plain
 * node:http server that answers as the API server would: compressed
 * bodies, Status errors, watch streams cut anywhere, a watch gone silent.
 */
describe('kubeRequest and kubeWatch', () => {
  let directory: string;
  let server: Server;
  let handle: (request: IncomingMessage, response: ServerResponse) => void;
  let connection: KubeConnection;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'kube-request-'));
    server = createServer((request, response) => handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const file = join(directory, 'config');
    writeFileSync(
      file,
      dump({
        'current-context': 'c',
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'c' } }],
        clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'c', user: { token: 't' } }],
      }),
    );
    connection = kubeConnectionFromFile(file);
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(directory, { recursive: true, force: true });
  });

  it('asks for gzip and reads a compressed body, with the query and the token', async () => {
    handle = (request, response) => {
      expect(request.headers['accept-encoding']).to.equal('gzip');
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(gzipSync(JSON.stringify({ url: request.url, authorization: request.headers.authorization })));
    };
    const body = await kubeRequest(connection, { method: 'GET', path: '/api/v1/services', query: { limit: '500', continue: undefined } });
    expect(body).to.deep.equal({ url: '/api/v1/services?limit=500', authorization: 'Bearer t' });
  });

  it('turns a Status answer into an error with the code, its reason phrase, the reason and Retry-After', async () => {
    handle = (_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      response.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', message: 'slow down' }));
    };
    const error = await kubeRequest(connection, { method: 'POST', path: '/api/v1/namespaces/a/events', body: {} }).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(KubeRequestError);
    expect(error).to.deep.include({ status: 429, reason: 'TooManyRequests', retryAfterSeconds: 3, message: 'POST /api/v1/namespaces/a/events: 429 Too Many Requests: slow down' });
  });

  it('delivers each line of a watch however the stream cuts it, the last one without a newline too, until the server ends it', async () => {
    handle = (request, response) => {
      expect(new URL(request.url!, 'http://x').searchParams.get('watch')).to.equal('true');
      response.writeHead(200, { 'content-type': 'application/json' });
      const text = `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n\n${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } })}`;
      const cut = text.indexOf('ADDED') + 2;
      response.write(text.slice(0, cut));
      setImmediate(() => response.end(text.slice(cut)));
    };
    const lines: WatchLine[] = [];
    await kubeWatch(connection, '/api/v1/services', { resourceVersion: '5' }, 10_000, (line) => lines.push(line));
    expect(lines.map((line) => line.type)).to.deep.equal(['ADDED', 'BOOKMARK']);
  });

  it('cuts a watch that brings nothing for its idle time', async () => {
    handle = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('\n');
    };
    const error = await kubeWatch(connection, '/api/v1/services', {}, 100, () => undefined).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(WatchIdleError);
  });

  it('refuses a watch the server answers with an error status, as a KubeRequestError', async () => {
    handle = (_request, response) => {
      response.writeHead(410, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ kind: 'Status', reason: 'Expired', message: 'too old resource version' }));
    };
    const error = await kubeWatch(connection, '/api/v1/services', { resourceVersion: '1' }, 10_000, () => undefined).catch((caught: unknown) => caught);
    expect(error).to.deep.include({ status: 410, reason: 'Expired' });
  });
});
