import { expect } from 'chai';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, createSecureServer, type Http2SecureServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice } from '../support/manifest-builders.ts';
import { base64, CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT } from '../support/tls-fixture.ts';

/**
 * Backend settings end to end, one row per host on one controller and one
 * real HAProxy: annotations (haproxy.org/*) on an Ingress set how HAProxy
 * speaks to its Service's servers, checked with real HTTP(S) against real
 * servers on loopback that report what they saw (the HTTP version, how many
 * requests they held at once) or misbehave on purpose (slow, unhealthy).
 */

/** What the handlers use of a request and a response, HTTP/1.1 or HTTP/2 alike. */
interface Asked {
  readonly url?: string | undefined;
  readonly httpVersion: string;
}
interface Answer {
  writeHead(status: number, headers?: Record<string, string>): unknown;
  end(text?: string): unknown;
  on(event: 'close', listener: () => void): unknown;
}
type Handler = (loopback: Loopback, request: Asked, response: Answer) => boolean;

/** A loopback server answering "backend <port> <HTTP version> <path>" unless `handler` answers first. */
class Loopback {
  /** Requests held at once, at most. */
  most = 0;
  #open = 0;
  readonly #held: (() => void)[] = [];
  /** Open connections, which close() waits for: HTTP/2 sessions and TLS checks without ALPN linger. */
  readonly #sockets = new Set<Socket>();
  readonly server: Server | Http2Server | Http2SecureServer;

  constructor(kind: 'http' | 'h2c' | 'h2', handler?: Handler) {
    const answer = (request: Asked, response: Answer) => {
      this.#open++;
      this.most = Math.max(this.most, this.#open);
      response.on('close', () => this.#open--);
      if (handler?.(this, request, response)) return;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(`backend ${this.port} HTTP/${request.httpVersion} ${request.url}\n`);
    };
    const listener = (request: IncomingMessage | Http2ServerRequest, response: ServerResponse | Http2ServerResponse) => answer(request, response as Answer);
    this.server = kind === 'http' ? createServer(listener) : kind === 'h2c' ? createH2cServer(listener) : createSecureServer({ cert: LEAF_CERT, key: LEAF_KEY, allowHTTP1: false }, listener);
    this.server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Answers `response` once `release` is called. */
  hold(respond: () => void): void {
    this.#held.push(respond);
  }

  release(): void {
    for (const respond of this.#held.splice(0)) respond();
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  stop(): Promise<void> {
    this.release();
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Holds requests for /hold until released; answers the rest at once. */
const holding = (loopback: Loopback, request: Asked, response: Answer): boolean => {
  if (request.url !== '/hold') return false;
  loopback.hold(() => response.end(`backend ${loopback.port} held\n`));
  return true;
};

/** Answers /slow only after 3 s, far past the 300 ms server timeout its Ingress asks for. */
const slow = (_loopback: Loopback, request: Asked, response: Answer): boolean => {
  if (request.url !== '/slow') return false;
  const timer = setTimeout(() => response.end('too late\n'), 3_000);
  response.on('close', () => clearTimeout(timer));
  return true;
};

/** Every request held 150 ms: concurrent requests overlap unless HAProxy queues them. */
const lingering = (loopback: Loopback, _request: Asked, response: Answer): boolean => {
  const timer = setTimeout(() => response.end(`backend ${loopback.port} lingered\n`), 150);
  response.on('close', () => clearTimeout(timer));
  return true;
};

/** Fails its health check path. */
const unhealthy = (_loopback: Loopback, request: Asked, response: Answer): boolean => {
  if (request.url !== '/healthz') return false;
  response.writeHead(500);
  response.end('unwell\n');
  return true;
};

/** One Ingress for `host`, routing / to a Service of its own whose endpoints are `ports` on loopback, with these annotations. */
function row(host: string, annotations: Record<string, string>, ports: readonly number[], created?: string): string {
  const name = host.split('.')[0]!;
  return docs(
    ingress(name, host, [['/', 'Prefix', name, { number: 80 }]], undefined, { annotations, ...(created === undefined ? {} : { created }) }),
    service(name, [{ name: 'http', port: 80, targetPort: 'http' }]),
    ...ports.map((port, index) => slice(`${name}-${index}`, name, 'http', port)),
  );
}

function caSecret(name: string, ca: string): string {
  // A kubernetes.io/tls Secret with ca.crt, as cert-manager writes them: the shipped configuration watches that type.
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: kubernetes.io/tls\ndata: { tls.crt: ${base64(LEAF_CERT)}, tls.key: ${base64(LEAF_KEY)}, ca.crt: ${base64(ca)} }\n`;
}

describe('backend settings end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  const servers: Record<string, Loopback[]> = {};

  before(async () => {
    const start = async (name: string, count: number, kind: 'http' | 'h2c' | 'h2', handler?: Handler) => {
      servers[name] = await Promise.all(Array.from({ length: count }, () => new Loopback(kind, handler).start()));
    };
    await start('h2c', 1, 'h2c');
    await start('h2tls', 1, 'h2');
    await start('verified', 1, 'h2');
    await start('unverified', 1, 'h2');
    await start('slow', 1, 'http', slow);
    await start('tunnel', 1, 'http');
    // Upgraded connections echo what they get, and are never ended by the server: only a tunnel timeout ends them.
    (servers['tunnel']![0]!.server as Server).on('upgrade', (_request: IncomingMessage, socket: Socket) => {
      socket.on('error', () => undefined);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.pipe(socket);
    });
    await start('leastconn', 2, 'http', holding);
    await start('source', 2, 'http');
    await start('by-header', 2, 'http');
    await start('by-param', 2, 'http');
    await start('maxconn', 1, 'http', lingering);
    await start('healthy', 1, 'http');
    await start('unhealthy', 1, 'http', unhealthy);
    await start('sticky', 2, 'http');
    await start('grow', 2, 'h2');
    const ports = (name: string) => servers[name]!.map((loopback) => loopback.port);
    harness = await LocalHarness.start({
      backends: 0,
      manifests: {
        'h2c.yaml': row('h2c.example.com', { 'haproxy.org/server-proto': 'h2' }, ports('h2c')),
        'h2tls.yaml': row('h2tls.example.com', { 'haproxy.org/server-proto': 'h2', 'haproxy.org/server-ssl': 'true' }, ports('h2tls')),
        'verified.yaml': docs(
          row('verified.example.com', { 'haproxy.org/server-proto': 'h2', 'haproxy.org/server-ca': 'default/backend-ca' }, ports('verified')),
          caSecret('backend-ca', CA_CERT),
        ),
        'unverified.yaml': docs(
          row('unverified.example.com', { 'haproxy.org/server-proto': 'h2', 'haproxy.org/server-ca': 'default/other-ca' }, ports('unverified')),
          caSecret('other-ca', SELF_SIGNED_CERT),
        ),
        'slow.yaml': row('slow.example.com', { 'haproxy.org/timeout-server': '300ms' }, ports('slow')),
        'tunnel.yaml': row('tunnel.example.com', { 'haproxy.org/timeout-tunnel': '300ms' }, ports('tunnel')),
        'leastconn.yaml': row('leastconn.example.com', { 'haproxy.org/load-balance': 'leastconn' }, ports('leastconn')),
        'source.yaml': row('source.example.com', { 'haproxy.org/load-balance': 'source' }, ports('source')),
        'by-header.yaml': row('by-header.example.com', { 'haproxy.org/load-balance': 'hdr(X-User)' }, ports('by-header')),
        'by-param.yaml': row('by-param.example.com', { 'nginx.ingress.kubernetes.io/upstream-hash-by': '$arg_user' }, ports('by-param')),
        'maxconn.yaml': row('maxconn.example.com', { 'haproxy.org/pod-maxconn': '1' }, ports('maxconn')),
        'health.yaml': row('health.example.com', { 'haproxy.org/check-http': '/healthz', 'haproxy.org/check-interval': '100ms' }, [...ports('healthy'), ...ports('unhealthy')]),
        'sticky.yaml': row('sticky.example.com', { 'haproxy.org/cookie-persistence': 'SRVID' }, ports('sticky'), '2024-01-01T00:00:00Z'),
        'grow.yaml': row(
          'grow.example.com',
          { 'haproxy.org/server-ssl': 'true', 'haproxy.org/server-proto': 'h2', 'haproxy.org/pod-maxconn': '50', 'haproxy.org/check-interval': '1s', 'haproxy.org/timeout-server': '5s' },
          ports('grow').slice(0, 1),
        ),
      },
    });
    await harness.next(0, 'deployed');
  });

  after(async () => {
    await harness?.stop();
    for (const list of Object.values(servers)) for (const loopback of list) await loopback.stop();
  });

  const body = async (host: string, path = '/') => {
    const response = await harness.get(host, path);
    return `${response.status} ${response.body.trim()}`;
  };

  it('speaks HTTP/2 in clear text (h2c) to a backend asking for server-proto h2', async () => {
    const [h2c] = servers['h2c']!;
    expect(await body('h2c.example.com', '/x')).to.equal(`200 backend ${h2c!.port} HTTP/2.0 /x`);
  });

  it('speaks HTTP/2 over TLS, chosen by ALPN, to a backend asking for server-ssl and server-proto h2', async () => {
    const [h2] = servers['h2tls']!;
    expect(await body('h2tls.example.com', '/y')).to.equal(`200 backend ${h2!.port} HTTP/2.0 /y`);
  });

  it('verifies the servers against the CA of the Secret server-ca names: served when it signed them, 503 when it did not', async () => {
    const [verified] = servers['verified']!;
    expect(await body('verified.example.com')).to.equal(`200 backend ${verified!.port} HTTP/2.0 /`);
    expect((await harness.get('unverified.example.com', '/')).status).to.equal(503);
  });

  it('answers 504 once the server timeout passes on a slow backend, and serves its quick paths', async () => {
    const [server] = servers['slow']!;
    expect((await harness.get('slow.example.com', '/slow')).status).to.equal(504);
    expect(await body('slow.example.com', '/quick')).to.equal(`200 backend ${server!.port} HTTP/1.1 /quick`);
  });

  it('closes an idle upgraded connection once the tunnel timeout passes, where the 30 s server timeout would keep it', async () => {
    const socket = await upgrade(harness, 'tunnel.example.com');
    // HAProxy may end the tunnel with a reset: an error, then the close.
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // The tunnel carries data while in use...
    const echoed = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    socket.write('ping');
    expect(await echoed).to.equal('ping');
    // ...and is closed once idle for the tunnel timeout.
    const late = new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5 s'), 5_000).unref());
    expect(await Promise.race([closed.then(() => 'closed'), late])).to.equal('closed');
  });

  it('sends requests to the server with the fewest connections under leastconn', async () => {
    const [first, second] = servers['leastconn']!;
    // One request held open on one server: every other request goes to the other.
    const held = harness.get('leastconn.example.com', '/hold');
    const busy = await eventuallyHeld(first!, second!);
    const idle = busy === first ? second! : first!;
    expect(await harness.answering('leastconn.example.com', '/', 6)).to.deep.equal([idle.port]);
    busy.release();
    expect((await held).status).to.equal(200);
  });

  it('keeps one client on one server under source hashing, where round robin would spread it', async () => {
    expect(await harness.answering('source.example.com', '/', 8)).to.have.length(1);
  });

  it('hashes a request header (hdr) or query parameter (url_param) to a server: one value, one server; many values, both servers', async () => {
    const portOf = (text: string) => Number(/^backend (\d+)/.exec(text)?.[1]);
    for (const [name, ask] of [
      ['by-header', (user: string) => ({ path: '/', headers: { 'x-user': user } })],
      ['by-param', (user: string) => ({ path: `/?user=${user}`, headers: {} })],
    ] as const) {
      const host = `${name}.example.com`;
      const ports = servers[name]!.map((loopback) => loopback.port).sort((a, b) => a - b);
      const serverOf = async (user: string) => {
        const { path, headers } = ask(user);
        return portOf((await getWith(harness, host, path, headers)).body);
      };
      const first = await serverOf('alice');
      for (let i = 0; i < 4; i++) expect(await serverOf('alice'), host).to.equal(first);
      const spread = new Set<number>();
      for (let user = 0; user < 16; user++) spread.add(await serverOf(`user-${user}`));
      expect(
        [...spread].sort((a, b) => a - b),
        host,
      ).to.deep.equal(ports);
    }
  });

  it('holds a server to its maxconn: concurrent requests queue in HAProxy and all succeed', async () => {
    const [server] = servers['maxconn']!;
    const responses = await Promise.all(Array.from({ length: 4 }, () => harness.get('maxconn.example.com', '/')));
    expect(responses.map((response) => response.status)).to.deep.equal([200, 200, 200, 200]);
    expect(server!.most).to.equal(1);
  });

  it('keeps a client on the server its affinity cookie names, where others are spread', async () => {
    const ports = servers['sticky']!.map((loopback) => loopback.port);
    // Without the cookie, round robin spreads requests over both servers.
    expect(await harness.answering('sticky.example.com', '/', 8)).to.deep.equal([...ports].sort((a, b) => a - b));
    const first = await harness.get('sticky.example.com', '/');
    const cookie = String(first.headers['set-cookie'] ?? '').split(';')[0]!;
    expect(cookie).to.match(/^SRVID=[0-9a-f]+$/);
    const chosen = Number(/^backend (\d+)/.exec(first.body)![1]);
    const seen = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const response = await getWith(harness, 'sticky.example.com', '/', { cookie });
      seen.add(Number(/^backend (\d+)/.exec(response.body)![1]));
      // indirect: the cookie the client already has is not set again.
      expect(response.headers['set-cookie']).to.equal(undefined);
    }
    expect([...seen]).to.deep.equal([chosen]);
  });

  it('serves a backend two Ingresses share with the older one’s settings, and warns the newer one naming the backend, the winner and the settings', async () => {
    const ports = servers['sticky']!.map((loopback) => loopback.port);
    const mark = harness.mark();
    await harness.write(
      'sticky-newer.yaml',
      ingress('sticky-newer', 'sticky-newer.example.com', [['/', 'Prefix', 'sticky', { number: 80 }]], undefined, {
        created: '2025-01-01T00:00:00Z',
        annotations: { 'haproxy.org/load-balance': 'source', 'haproxy.org/cookie-persistence': 'OTHER' },
      }),
    );
    const rendered = await harness.next(mark, 'rendered');
    expect(rendered.warnings.filter((problem) => problem.object === 'Ingress default/sticky-newer')).to.deep.equal([
      {
        object: 'Ingress default/sticky-newer',
        field: 'metadata.annotations',
        message: 'backend default_sticky_80 is served with the settings of older Ingress default/sticky, which differ from these in affinity, balance',
      },
    ]);
    await harness.next(mark, 'deployed');
    // The newer Ingress's host reaches the backend as the older Ingress set it: round robin with its cookie.
    expect(await harness.answering('sticky-newer.example.com', '/', 8)).to.deep.equal([...ports].sort((a, b) => a - b));
    expect(String((await harness.get('sticky-newer.example.com', '/')).headers['set-cookie'])).to.match(/^SRVID=/);
  });

  it('drains a server failing its health check path while the other keeps serving', async () => {
    const [healthy] = servers['healthy']!;
    await harness.until('health.example.com', '/', [healthy!.port]);
    expect(await harness.answering('health.example.com', '/', 8)).to.deep.equal([healthy!.port]);
  });

  it('adds an endpoint to a backend with settings through the Runtime API, without a reload, spoken to as its line says (h2 over TLS)', async () => {
    const [first, second] = servers['grow']!;
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('grow-more.yaml', slice('grow-9', 'grow', 'http', second!.port));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    await harness.until('grow.example.com', '/', [first!.port, second!.port]);
    // The added server only speaks HTTP/2 over TLS: it answers only because add server gave it `ssl verify none sni str("") alpn h2`.
    const answers = new Set<string>();
    for (let i = 0; i < 6; i++) answers.add(await body('grow.example.com', '/z'));
    expect([...answers].sort()).to.deep.equal([`200 backend ${first!.port} HTTP/2.0 /z`, `200 backend ${second!.port} HTTP/2.0 /z`].sort());
    expect(await harness.reloads()).to.equal(reloads);
  });
});

/** The one of two servers that holds a request, once one does. */
async function eventuallyHeld(first: Loopback, second: Loopback): Promise<Loopback> {
  const found = await eventually(
    async () => (first.most > 0 ? first : second.most > 0 ? second : undefined),
    (loopback) => loopback !== undefined,
    'a server to hold the request',
  );
  return found!;
}

/** A GET through HAProxy with these headers. */
function getWith(harness: LocalHarness, host: string, path: string, headers: Record<string, string>): Promise<{ readonly body: string; readonly headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: harness.ports.http, path, headers: { host, ...headers }, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ body, headers: response.headers }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** An upgraded connection through HAProxy: the socket once the server switched protocols. */
function upgrade(harness: LocalHarness, host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: harness.ports.http, path: '/', headers: { host, connection: 'Upgrade', upgrade: 'echo' }, agent: false });
    request.on('upgrade', (_response, socket: Socket) => resolve(socket));
    request.on('response', (response) => reject(new Error(`no upgrade: ${response.statusCode}`)));
    request.on('error', reject);
    request.end();
  });
}
