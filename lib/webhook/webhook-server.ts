import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServingCertificate } from './serving-certificate.ts';

/**
 * The webhook's HTTPS server: `POST /validate` takes an AdmissionReview,
 * `GET /healthz` says whether reviews can be judged. The certificate can be
 * replaced while it serves (rotation): new connections get the new one,
 * open ones finish with the old.
 */

export interface ReviewReply {
  readonly status: number;
  readonly body: unknown;
}

export interface WebhookServerOptions {
  readonly host: string;
  /** 0 lets the kernel pick one. */
  readonly port: number;
  readonly certificate: ServingCertificate;
  /** Answers an AdmissionReview body by `deadline` (milliseconds since the epoch); `headers` carry the caller's trace context. */
  readonly review: (body: unknown, deadline: number, headers: IncomingHttpHeaders) => Promise<ReviewReply>;
  /** Why reviews cannot be judged now; undefined when they can. */
  readonly notReady: () => string | undefined;
}

/** An AdmissionReview carries the object and the stored one; the API server takes objects up to 3 MiB. */
const maxBodyBytes = 8 * 1024 * 1024;
/** The API server's default timeoutSeconds, when the request does not say. */
const defaultTimeoutMs = 10_000;

/**
 * The API server sends the time it waits as `?timeout=5s` (the webhook's
 * timeoutSeconds, rounded up to whole seconds: dispatcher.go).
 */
function timeoutOf(url: URL): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(url.searchParams.get('timeout') ?? '');
  if (!match) return defaultTimeoutMs;
  const value = Number(match[1]);
  return match[2] === 'ms' ? value : match[2] === 's' ? value * 1000 : value * 60_000;
}

function send(response: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  response.statusCode = status;
  response.setHeader('Content-Type', type);
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new Error(`the body is larger than ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export class WebhookServer {
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(options: WebhookServerOptions): Promise<WebhookServer> {
    const { certificate } = options;
    const server = createServer({ cert: certificate.cert, key: certificate.key, keepAlive: true }, (request, response) => {
      void WebhookServer.#handle(options, request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new WebhookServer(server);
  }

  static async #handle(options: WebhookServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'https://webhook');
    try {
      if (url.pathname === '/healthz' && request.method === 'GET') {
        const reason = options.notReady();
        send(response, reason === undefined ? 200 : 503, reason === undefined ? 'ok' : `not ready: ${reason}`, 'text/plain; charset=utf-8');
        return;
      }
      if (url.pathname !== '/validate') return send(response, 404, { message: `no such path ${url.pathname}: the webhook serves POST /validate and GET /healthz` });
      if (request.method !== 'POST') return send(response, 405, { message: 'POST an AdmissionReview to /validate' });
      const deadline = Date.now() + timeoutOf(url);
      let body: unknown;
      try {
        body = await readJson(request);
      } catch (error) {
        return send(response, 400, { message: `the body is not JSON: ${error instanceof Error ? error.message : String(error)}` });
      }
      const reply = await options.review(body, deadline, request.headers);
      send(response, reply.status, reply.body);
    } catch (error) {
      send(response, 500, { message: error instanceof Error ? error.message : String(error) });
    }
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Serves new connections with this certificate from now on. */
  setCertificate(certificate: ServingCertificate): void {
    this.#server.setSecureContext({ cert: certificate.cert, key: certificate.key });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }
}
