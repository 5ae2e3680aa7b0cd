import { expect } from 'chai';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { LocalHarness } from './local-harness.ts';
import { ingress } from './manifest-builders.ts';

/**
 * A backend that answers with what it saw of each request, and the client
 * side of the route e2e: requests through the harness's HAProxy over HTTP
 * or HTTPS, and Ingresses routing to the echo Service.
 */

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the echo backend saw of a request. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** Bytes of the body it read. */
  readonly bodyLength: number;
}

/** A backend answering with what it saw, as JSON; requests for /hold/... wait until released. */
export class EchoBackend {
  readonly #server: Server;
  #held: (() => void)[] = [];
  #waiting: (() => void)[] = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<EchoBackend> {
    const server = createServer();
    const echo = new EchoBackend(server);
    server.on('request', (req, res) => {
      let bodyLength = 0;
      const answer = () => {
        const what: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyLength };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(what));
      };
      req.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
      req.on('end', () => {
        if (!req.url?.startsWith('/hold/')) return answer();
        echo.#held.push(answer);
        for (const waiter of echo.#waiting.splice(0)) waiter();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return echo;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Resolves once a request is being held. */
  holding(): Promise<void> {
    return this.#held.length > 0 ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    for (const answer of this.#held.splice(0)) answer();
  }

  stop(): Promise<void> {
    this.release();
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

export interface Ask {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Sent with Transfer-Encoding: chunked, without a Content-Length. */
  readonly chunked?: boolean;
  readonly tls?: boolean;
  /** With tls: a client certificate (PEM) and its key. */
  readonly cert?: string;
  readonly key?: string;
  /** With tls: the SNI name, when it is not the host's. */
  readonly servername?: string;
}

export function ask(harness: LocalHarness, host: string, path: string, options: Ask = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const common = {
      host: '127.0.0.1',
      path,
      method: options.method ?? 'GET',
      headers: { host, ...(options.chunked ? { 'transfer-encoding': 'chunked' } : {}), ...options.headers },
      agent: false as const,
    };
    const done = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    };
    const req = options.tls
      ? httpsRequest({ ...common, port: harness.ports.https, servername: options.servername ?? host, rejectUnauthorized: false, cert: options.cert, key: options.key }, done)
      : request({ ...common, port: harness.ports.http }, done);
    req.on('error', reject);
    req.end(options.body);
  });
}

/** What the backend saw of a request that reached it. */
export async function seen(harness: LocalHarness, host: string, path: string, options: Ask = {}): Promise<Seen> {
  const answer = await ask(harness, host, path, options);
  expect(answer.status, `${host}${path}: ${answer.body}`).to.equal(200);
  return JSON.parse(answer.body) as Seen;
}

/** An Ingress for `host` with these annotations, every path to port 80 of the echo Service (or another). */
export function routed(name: string, host: string, annotations: Record<string, string>, paths: readonly string[] = ['/'], secretName?: string, serviceName = 'echo'): string {
  return ingress(
    name,
    host,
    // Quoted: a regular expression's brackets would end a YAML flow mapping.
    paths.map((path) => [JSON.stringify(path), 'Prefix', serviceName, { number: 80 }] as const),
    secretName,
    { annotations },
  );
}
