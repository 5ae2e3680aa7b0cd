import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The demo's backends: 127.0.0.1 ports 18081 to 18086, each answering with its own name. */
export const demoBackendPorts = [18081, 18082, 18083, 18084, 18085, 18086] as const;

export interface Backends {
  /** The port of each, in the order asked for. */
  readonly ports: readonly number[];
  stop(): Promise<void>;
}

/**
 * Starts one small HTTP server per port (0: one the kernel picks); each
 * answers "backend <port> <method> <path>".
 */
export async function startBackends(ports: readonly number[], host = '127.0.0.1'): Promise<Backends> {
  const servers: Server[] = [];
  const bound: number[] = [];
  for (const port of ports) {
    const server = createServer((request, response) => {
      const own = (server.address() as AddressInfo).port;
      response.writeHead(200, { 'content-type': 'text/plain', 'x-backend': String(own) });
      response.end(`backend ${own} ${request.method} ${request.url}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    servers.push(server);
    bound.push((server.address() as AddressInfo).port);
  }
  return {
    ports: bound,
    stop: async () => {
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
