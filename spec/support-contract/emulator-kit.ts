/**
 * What the emulator's contract specs share: raw calls with exact statuses and
 * headers, the typed client, HAProxy-side probes, and a list of everything a
 * spec started, closed in its after hooks even when it failed.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { DataplaneClient } from '../../lib/dataplane/client.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import { startEmulator } from '../support/dataplane-emulator/index.ts';
import type { Emulator, EmulatorOptions } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { listenAnywhere } from '../support/ports.ts';

/** What the kit's calls use of an instance: the emulator's or a real dataplaneapi's (dataplane-contract.ts). */
export type KitPeer = Pick<Emulator, 'url' | 'credentials' | 'authorization' | 'baseDir' | 'statsSocket'>;

/** Everything a test started, closed in after hooks even when the test failed. */
export const closers: (() => Promise<unknown>)[] = [];

export async function closeAll(): Promise<void> {
  const errors: unknown[] = [];
  for (const close of closers.splice(0).reverse()) {
    try {
      await close();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

export async function emulatorFor(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator(options);
  closers.push(() => emulator.stop());
  return emulator;
}

export function clientFor(emulator: KitPeer, timeoutMs = 10_000): DataplaneClient {
  const client = new DataplaneClient({
    url: emulator.url,
    username: emulator.credentials.user,
    password: emulator.credentials.password,
    timeoutMs,
  });
  closers.push(async () => client.close());
  return client;
}

/** An HTTP backend answering its own name. */
export async function backend(name: string): Promise<number> {
  const server: Server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/plain');
    response.end(name);
  });
  const port = await listenAnywhere(server);
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return port;
}

/** A TCP listener that holds a port (to make HAProxy's bind fail). */
export async function portHolder(host = '127.0.0.1'): Promise<number> {
  const server: NetServer = createNetServer((socket) => socket.destroy());
  const port = await listenAnywhere(server, host);
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return port;
}

/** One request through HAProxy on a fresh connection (so a new worker is asked). */
export function get(port: number, path = '/', host = '127.0.0.1'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error(`GET ${host}:${port}${path} timed out`)));
    req.end();
  });
}

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly ms: number;
}

export interface CallOptions {
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The Authorization header; null sends none. Default: the emulator's credentials. */
  readonly authorization?: string | null;
}

/** A raw HTTP call, for exact statuses and headers. `path` is relative to /v3. */
export async function call(emulator: KitPeer, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const query = new URLSearchParams(options.query ?? {}).toString();
  const headers: Record<string, string> = { ...options.headers };
  const authorization = options.authorization === undefined ? emulator.authorization : options.authorization;
  if (authorization !== null) headers['authorization'] = authorization;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  const started = Date.now();
  const response = await fetch(`${emulator.url}${path}${query === '' ? '' : `?${query}`}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: Date.now() - started };
}

export function errorOf(reply: Reply): { code: number; message: string } {
  return JSON.parse(reply.text) as { code: number; message: string };
}

export function versionOf(reply: Reply): number {
  const value = reply.headers.get('configuration-version');
  expect(value, 'Configuration-Version header').to.match(/^\d+$/);
  return Number(value);
}

export const RAW = '/services/haproxy/configuration/raw';

export async function postRaw(emulator: KitPeer, body: string, query: Readonly<Record<string, string>>, headers: Readonly<Record<string, string>> = {}): Promise<Reply> {
  return call(emulator, 'POST', RAW, { body, query, contentType: 'text/plain', headers });
}

export async function currentVersion(emulator: KitPeer): Promise<number> {
  const reply = await call(emulator, 'GET', '/services/haproxy/configuration/version');
  expect(reply.status).to.equal(200);
  return JSON.parse(reply.text) as number;
}

/** Writes `text` and reloads synchronously (force_reload, §3: 201). */
export async function deploy(emulator: KitPeer, text: string): Promise<void> {
  const reply = await postRaw(emulator, text, { version: String(await currentVersion(emulator)), force_reload: 'true' });
  expect(reply.status, reply.text).to.equal(201);
}

export async function waitReload(emulator: KitPeer, id: string): Promise<{ id: string; status: string; response: string }> {
  return eventually(
    async () =>
      JSON.parse((await call(emulator, 'GET', `/services/haproxy/reloads/${id}`)).text) as {
        id: string;
        status: string;
        response: string;
      },
    (reload) => reload.status !== 'in_progress',
    `reload ${id} to finish`,
  );
}

/** `show servers state` weight of a server, from the stats socket. */
export async function liveWeight(emulator: KitPeer, server: string): Promise<string> {
  return (await runtimeCommand(emulator.statsSocket, `get weight ${server}`)).trim();
}

export function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

export function configText(emulator: KitPeer, sections: string): string {
  return `global
  default-path origin ${emulator.baseDir}
  stats socket ${emulator.statsSocket} mode 600 level admin expose-fd listeners
  stats timeout 30s

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
${sections}`;
}
