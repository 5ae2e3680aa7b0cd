/**
 * The HTTP side of one emulated instance: request log, faults, routing,
 * authentication, handlers, the hook that sees every answered exchange,
 * and the headers DPAPI puts on every response (Configuration-Version, §2;
 * CORS exposure, §1).
 *
 * Order, as go-swagger (3.0 to 3.3.5) does it: an unknown path is a 404
 * before any authentication, then Basic auth, then the handler; the chi
 * server of 3.4 authenticates first (release.ts), so an unknown path without
 * credentials answers 401.
 * Faults come first of all: they stand for a broken process or network.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { authenticate } from './auth.ts';
import type { Credentials } from './auth.ts';
import type { ReleaseFeatures } from './release.ts';
import { isRawError } from './configuration-api.ts';
import type { Faults, RecordedRequest, RequestLog } from './faults.ts';
import { ApiError, errorBody } from './http-kit.ts';
import type { ApiResponse } from './http-kit.ts';
import type { Router } from './router.ts';

/** Request bodies above this are refused (413): far above any configuration a test sends. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface ApiServerOptions {
  readonly router: Router;
  readonly users: readonly Credentials[];
  /** The 3.4 wire (release.ts chiWire): auth before routing, `code` = status, raw errors as JSON; a missing header's 401 words. */
  readonly release: Pick<ReleaseFeatures, 'chiWire' | 'missingCredentials'>;
  readonly faults: Faults;
  readonly requests: RequestLog;
  /** The parser's configuration version, read when each response goes out. */
  readonly version: () => number;
  readonly onExchange?: (exchange: Exchange) => void;
}

/** One request and the answer it got, as the client saw them on the wire. */
export interface Exchange {
  readonly method: string;
  /** Path without the query string, as sent (percent-encoded). */
  readonly path: string;
  /** The query string without `?` ('' when none). */
  readonly query: string;
  readonly requestHeaders: IncomingHttpHeaders;
  readonly requestBody: Buffer;
  readonly status: number;
  readonly responseHeaders: OutgoingHttpHeaders;
  readonly responseBody: string | Buffer | undefined;
  /** performance.now() when the request arrived and when its answer was handed to the socket. */
  readonly receivedAt: number;
  readonly answeredAt: number;
}

export class ApiServer {
  readonly #options: ApiServerOptions;
  readonly #server: Server;
  /** Responses held by hang(true), reset by releaseHung() and close(). */
  readonly #hung = new Set<ServerResponse>();

  constructor(options: ApiServerOptions) {
    this.#options = options;
    this.#server = createServer((request, response) => {
      void this.#handle(request, response);
    });
  }

  async listen(host = '127.0.0.1', port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    return (this.#server.address() as AddressInfo).port;
  }

  /** Resets every connection a hang holds. */
  releaseHung(): void {
    for (const response of this.#hung) response.socket?.destroy();
    this.#hung.clear();
  }

  async close(): Promise<void> {
    this.releaseHung();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { faults, requests, router, users } = this.#options;
    const receivedAt = performance.now();
    const url = new URL(request.url ?? '/', 'http://emulator');
    const method = request.method ?? 'GET';
    const record: RecordedRequest = { method, path: url.pathname, query: url.search.replace(/^\?/, ''), at: Date.now() };
    requests.record(record);
    const decision = faults.decide(record);
    if (decision.kind === 'hang') {
      this.#hung.add(response);
      response.on('close', () => this.#hung.delete(response));
      return;
    }
    let body: Buffer = Buffer.alloc(0);
    const cors = request.headers.origin !== undefined;
    const send = (answer: ApiResponse): void => {
      if (!this.#send(response, answer, cors)) return;
      this.#options.onExchange?.({
        method,
        path: record.path,
        query: record.query,
        requestHeaders: request.headers,
        requestBody: body,
        status: answer.status,
        responseHeaders: response.getHeaders(),
        responseBody: answer.body,
        receivedAt,
        answeredAt: performance.now(),
      });
    };
    try {
      body = await readBody(request);
      if (decision.delayMs > 0) await delay(decision.delayMs);
      if (decision.kind === 'fail') {
        throw new ApiError(decision.status, `emulated fault: this request was made to fail with ${decision.status}`);
      }
      const refused = authenticate(request.headers.authorization, users, this.#options.release.missingCredentials);
      if (refused !== undefined && this.#options.release.chiWire) throw refused;
      const match = router.match(method, url.pathname);
      if (match.kind === 'not-found') throw new ApiError(404, `path ${url.pathname} was not found`);
      if (match.kind === 'method-not-allowed') {
        throw new ApiError(405, `method ${method} is not allowed, but [${match.allowed.join(',')}] are`, {
          headers: { Allow: match.allowed.join(',') },
        });
      }
      if (refused !== undefined) throw refused;
      const answer = await match.handler({
        method,
        path: url.pathname,
        params: match.params,
        query: url.searchParams,
        headers: request.headers,
        body,
      });
      send(answer);
    } catch (error) {
      const caught = error instanceof ApiError ? error : new ApiError(500, (error as Error).message ?? String(error));
      // The chi server writes every error with its status as the code (handlers/middleware/middleware.go writeError).
      const failure = this.#options.release.chiWire && caught.code !== caught.status ? new ApiError(caught.status, caught.message, { headers: caught.headers }) : caught;
      send({
        status: failure.status,
        headers: failure.headers,
        // go-swagger labels the raw endpoints' errors text/plain; 3.4 sends JSON as JSON (seen on v3.2.15, v3.4.2).
        contentType: isRawError(caught) && !this.#options.release.chiWire ? 'text/plain' : 'application/json',
        body: errorBody(failure),
      });
    }
  }

  /** False when the connection was gone and nothing was sent. */
  #send(response: ServerResponse, answer: ApiResponse, cors: boolean): boolean {
    if (response.headersSent || response.destroyed) return false;
    response.setHeader('Configuration-Version', String(this.#options.version()));
    if (cors) {
      // rs/cors as configure_data_plane.go sets it up: only for a request with an Origin, the exposed
      // names canonicalised by Go (Reload-Id); seen on dataplaneapi v3.2.15 and v3.4.2.
      response.setHeader('Access-Control-Allow-Origin', '*');
      response.setHeader('Access-Control-Allow-Credentials', 'true');
      response.setHeader('Access-Control-Expose-Headers', 'Reload-Id, Configuration-Version');
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
    if (answer.body !== undefined && answer.contentType !== undefined) response.setHeader('Content-Type', answer.contentType);
    response.statusCode = answer.status;
    response.end(answer.body);
    return true;
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
