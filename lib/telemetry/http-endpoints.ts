import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../error-message.ts';
import type { Verdict } from './health.ts';
import type { Exposition } from './metrics.ts';

export interface HealthRoutes {
  readonly liveness: () => Verdict;
  readonly readiness: () => Verdict;
  /** Debug views by path (`/debug/config`...), each already redacted. */
  readonly debug: Readonly<Record<string, () => unknown>>;
}

function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** The port a server listens on: the one asked for, or the kernel's pick for port 0. */
export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** Stops listening and ends every connection, kept-alive ones included. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function reply(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
}

function routeOf(request: IncomingMessage): string | undefined {
  return request.method === 'GET' || request.method === 'HEAD' ? request.url?.split('?')[0] : undefined;
}

/**
 * The health port: /healthz (liveness), /readyz (readiness), each 200 or
 * 503 with the reason as text, and the JSON debug views under /debug/.
 */
export function serveHealth(port: number, host: string, routes: HealthRoutes): Promise<Server> {
  const server = createServer((request, response) => {
    const path = routeOf(request);
    if (path === undefined) return reply(response, 405, 'text/plain', 'only GET\n');
    if (path === '/healthz' || path === '/readyz') {
      const verdict = path === '/healthz' ? routes.liveness() : routes.readiness();
      return reply(response, verdict.ok ? 200 : 503, 'text/plain; charset=utf-8', `${verdict.message}\n`);
    }
    if (path === '/debug' || path === '/debug/') {
      return reply(response, 200, 'application/json', `${JSON.stringify({ views: Object.keys(routes.debug) }, null, 2)}\n`);
    }
    const view = routes.debug[path];
    if (!view) return reply(response, 404, 'text/plain', 'not found\n');
    try {
      reply(response, 200, 'application/json; charset=utf-8', `${JSON.stringify(view(), null, 2)}\n`);
    } catch (error) {
      reply(response, 500, 'text/plain; charset=utf-8', `${path}: ${errorMessage(error)}\n`);
    }
  });
  return listen(server, port, host);
}

/** /metrics on the metrics port, in the format the scraper's Accept header asks for. */
export function serveMetrics(port: number, host: string, expose: (accept: string | undefined) => Promise<Exposition>): Promise<Server> {
  const server = createServer((request, response) => {
    if (routeOf(request) !== '/metrics') return reply(response, 404, 'text/plain', 'not found\n');
    expose(request.headers.accept).then(
      ({ contentType, body }) => reply(response, 200, contentType, body),
      (error: unknown) => reply(response, 500, 'text/plain; charset=utf-8', `${errorMessage(error)}\n`),
    );
  });
  return listen(server, port, host);
}
