import { createServer, type Server } from 'node:http';

/** The demo's backends: 127.0.0.1 ports 18081 to 18086, each answering with its own name. */
export const demoBackendPorts = [18081, 18082, 18083, 18084, 18085, 18086] as const;

/** Starts one small HTTP server per port; each answers "backend <port> <method> <path>". */
export async function startBackends(ports: readonly number[], host = '127.0.0.1'): Promise<() => Promise<void>> {
  const servers: Server[] = [];
  for (const port of ports) {
    const server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'x-backend': String(port) });
      response.end(`backend ${port} ${request.method} ${request.url}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    servers.push(server);
  }
  return async () => {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  };
}
