import { STATUS_CODES, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { KubeConnection } from './kube-connection.ts';

/** A failed API request, with the Status body's reason and message when the server sent one. */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
  readonly status: number;
  readonly reason: string | undefined;
  /** Seconds from a Retry-After header (429, 503), when present. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, status: number, reason: string | undefined, retryAfterSeconds: number | undefined) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A watch that received nothing for its idle time, cut by the client. */
export class WatchIdleError extends Error {
  override readonly name = 'WatchIdleError';
}

export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  /** For PATCH; merge patch unless given. */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/**
 * How long a request may go without a byte before it is given up: undici's
 * headers and body timeouts, which bounded every request while the
 * controller used its fetch.
 */
const REQUEST_IDLE_MS = 300_000;

/** The request sent, the response's head arrived; the body is the caller's (gunzipped when the server compressed it). */
async function send(connection: KubeConnection, request: KubeRequest, idleMs: number): Promise<{ response: IncomingMessage; body: Readable }> {
  const url = new URL(connection.server + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
  const { headers, agent } = await connection.authorise();
  headers['accept'] = 'application/json';
  // Large LIST pages and watches compress well; the API server compresses only when asked (client-go asks too).
  headers['accept-encoding'] = 'gzip';
  headers['user-agent'] = 'haproxy-template-ic';
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (payload !== undefined) headers['content-type'] = request.method === 'PATCH' ? (request.contentType ?? 'application/merge-patch+json') : 'application/json';
  const open = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    let incoming: Readable | undefined;
    const outgoing = open(url, { method: request.method, headers, agent, ...(request.signal ? { signal: request.signal } : {}) }, (response) => {
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      if (body !== response) response.once('error', (error) => body.destroy(error));
      incoming = body;
      resolve({ response, body });
    });
    // The socket's idle time: before the response's head as after it, as client-node's watch timer reset on every chunk.
    outgoing.setTimeout(idleMs, () => {
      const error = new WatchIdleError(`${request.method} ${request.path}: nothing received for ${idleMs} ms`);
      incoming?.destroy(error);
      outgoing.destroy(error);
    });
    outgoing.once('error', reject);
    outgoing.end(payload);
  });
}

async function readAll(body: Readable): Promise<string> {
  body.setEncoding('utf8');
  let whole = '';
  for await (const chunk of body) whole += chunk as string;
  return whole;
}

function failure(request: KubeRequest, response: IncomingMessage, text: string): KubeRequestError {
  let status: { message?: unknown; reason?: unknown } | undefined;
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    status = undefined;
  }
  const phrase = response.statusMessage || STATUS_CODES[response.statusCode ?? 0] || '';
  const detail = typeof status?.message === 'string' ? status.message : text.slice(0, 200);
  const retryAfter = Number(response.headers['retry-after']);
  return new KubeRequestError(
    `${request.method} ${request.path}: ${response.statusCode} ${phrase}${detail !== '' && detail !== phrase ? `: ${detail}` : ''}`,
    response.statusCode ?? 0,
    typeof status?.reason === 'string' ? status.reason : undefined,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

/**
 * One JSON request with the connection's server, credentials and TLS
 * settings. Objects come back as the API server's raw JSON, the form LIST
 * and WATCH deliver them in.
 */
export async function kubeRequest(connection: KubeConnection, request: KubeRequest): Promise<unknown> {
  const { response, body } = await send(connection, request, REQUEST_IDLE_MS);
  const whole = await readAll(body);
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) throw failure(request, response, whole);
  try {
    return whole === '' ? undefined : JSON.parse(whole);
  } catch {
    return undefined;
  }
}

/** One line of a watch: an event type and its object (a Status for ERROR). */
export interface WatchLine {
  readonly type: string;
  readonly object: unknown;
}

/**
 * One WATCH request (`watch=true` added to `query`): each line of the
 * stream goes to `line` as it arrives. Resolves when the server ends the
 * watch; rejects with a KubeRequestError when the server refuses it, a
 * WatchIdleError when nothing came for `idleMs` (the connection included),
 * or the connection's error. An aborted `signal` ends it with its reason.
 */
export async function kubeWatch(
  connection: KubeConnection,
  path: string,
  query: Readonly<Record<string, string | undefined>>,
  idleMs: number,
  line: (line: WatchLine) => void,
  signal?: AbortSignal,
): Promise<void> {
  const request: KubeRequest = { method: 'GET', path, query: { ...query, watch: 'true' }, ...(signal ? { signal } : {}) };
  const { response, body } = await send(connection, request, idleMs);
  if (response.statusCode !== 200) throw failure(request, response, await readAll(body));
  const deliver = (text: string) => {
    let parsed: WatchLine;
    try {
      parsed = JSON.parse(text) as WatchLine;
    } catch {
      // client-node skips a line that is not JSON (a blank keep-alive line, a cut-off last line): so does this.
      return;
    }
    line(parsed);
  };
  body.setEncoding('utf8');
  let pending = '';
  for await (const chunk of body) {
    const lines = (pending + (chunk as string)).split('\n');
    pending = lines.pop()!;
    for (const each of lines) deliver(each);
  }
  deliver(pending);
}
