/**
 * A stand-in for one Data Plane API instance on a machine of its own: it
 * answers each request exactly as a real instance (the emulator in front of
 * a real HAProxy) answered the same request when it ran alone, after as
 * long as that instance took. The instance-side work (haproxy -c, reloads,
 * runtime socket commands) is gone from this machine; its latency is not.
 *
 * Its answers go out on an AnswerClock, which the stand-ins of a fleet
 * share on a thread of their own (replay-worker.ts).
 *
 * A deployment is a fixed conversation for a given starting state and
 * target, so every stand-in expects the recorded requests in the recorded
 * order; a request that differs is answered 500 and reported as a mismatch,
 * so a benchmark cannot quietly measure a different conversation.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Exchange } from '../spec/support/dataplane-emulator/index.ts';
import type { AnswerClock } from './answer-clock.ts';

export interface ScriptedAnswer {
  /** What the request must be (see requestIdentity). */
  readonly request: string;
  /** How long the real instance took from the request's arrival to its answer. */
  readonly serviceMs: number;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: string | Uint8Array | undefined;
}

/**
 * Method, target, runtime actions and a digest of the body. The multipart
 * boundary is random per upload, so it is left out of the digest; the
 * Authorization header is left out of everything (it would end up in a
 * mismatch message).
 */
export function requestIdentity(method: string, path: string, query: string, headers: IncomingHttpHeaders, body: Uint8Array): string {
  const boundary = /boundary=([^;\s]+)/.exec(headers['content-type'] ?? '')?.[1];
  const content = Buffer.from(body).toString('latin1');
  const comparable = boundary === undefined ? content : content.replaceAll(boundary, '<boundary>');
  const digest = createHash('sha256').update(comparable, 'latin1').digest('hex').slice(0, 16);
  const actions = headers['x-runtime-actions'];
  return `${method} ${path}${query === '' ? '' : `?${query}`}${actions === undefined ? '' : ` actions=[${String(actions)}]`} body=${digest}`;
}

/** The recorded exchanges of one instance as the script its stand-ins play. */
export function scriptOf(exchanges: readonly Exchange[]): ScriptedAnswer[] {
  return exchanges.map((exchange) => ({
    request: requestIdentity(exchange.method, exchange.path, exchange.query, exchange.requestHeaders, exchange.requestBody),
    serviceMs: exchange.answeredAt - exchange.receivedAt,
    status: exchange.status,
    headers: headerValues(exchange.responseHeaders),
    body: exchange.responseBody,
  }));
}

function headerValues(headers: OutgoingHttpHeaders): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) values[name] = Array.isArray(value) ? [...(value as string[])] : String(value);
  }
  return values;
}

export interface ReplayedInstance {
  /** Base URL of the API: 'http://127.0.0.1:PORT/v3'. */
  readonly url: string;
  /** Requests received so far. */
  readonly requests: () => number;
  /** Requests that were not the next one of the script, described. */
  readonly mismatches: () => readonly string[];
  readonly stop: () => Promise<void>;
}

export async function startReplayedInstance(script: readonly ScriptedAnswer[], clock: AnswerClock): Promise<ReplayedInstance> {
  let next = 0;
  const mismatches: string[] = [];
  const answer = async (request: IncomingMessage, response: ServerResponse, position: number, receivedAt: number): Promise<void> => {
    const body = await readBody(request);
    // Parsed as the emulator parses it, so both spell the path and query alike.
    const url = new URL(request.url ?? '/', 'http://replayed');
    const identity = requestIdentity(request.method ?? 'GET', url.pathname, url.search.replace(/^\?/, ''), request.headers, body);
    const expected = script[position];
    if (expected === undefined || expected.request !== identity) {
      const message = `request ${position + 1}: expected ${expected?.request ?? 'no more requests'}, got ${identity}`;
      mismatches.push(message);
      response.writeHead(500, { 'content-type': 'application/json' }).end(`${JSON.stringify({ code: 500, message })}\n`);
      return;
    }
    clock.at(receivedAt + expected.serviceMs, () => response.writeHead(expected.status, expected.headers).end(expected.body));
  };
  const server = createServer((request, response) => {
    // A client that went away mid-request gets nothing more.
    void answer(request, response, next++, performance.now()).catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v3`,
    requests: () => next,
    mismatches: () => [...mismatches],
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
