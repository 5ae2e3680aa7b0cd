import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthState {
  /** True once the initial sync is done and a configuration is deployed. */
  readonly ready: () => boolean;
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

/** /healthz (the process answers) and /readyz (synced and deployed) on the health port. */
export function serveHealth(port: number, host: string, state: HealthState): Promise<Server> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (path === '/healthz') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (path === '/readyz') {
      const ready = state.ready();
      return void response.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'not ready\n');
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  return listen(server, port, host);
}

/** /metrics in the Prometheus text format on the metrics port. */
export function serveMetrics(port: number, host: string, registry: Registry): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics') return void response.writeHead(404).end('not found\n');
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  return listen(server, port, host);
}
