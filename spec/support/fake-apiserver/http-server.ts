/**
 * The HTTP side of the fake: request log, bearer-token authentication,
 * discovery, faults, then the resource handlers; every failure answered as
 * a Status. Order as in the real server's filter chain: authentication
 * first (401 even for discovery when a token is required), then the
 * handler; injected faults stand between the two.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.ts';
import { groupVersionDocument, openApiIndex } from './openapi.ts';
import type { Faults, RecordedRequest, RequestLog, ResourceVerb, Verb } from './faults.ts';
import type { Registry } from './registry.ts';
import { parseApiPath } from './request-path.ts';
import type { ApiPath } from './request-path.ts';
import { handleResource, resolveVerb } from './resource-api.ts';
import type { ResourceType } from './resource-types.ts';
import { StatusError, resourceNotFound, serverError, unauthorized } from './status.ts';
import type { WatchHub } from './watch-hub.ts';
import { WatchSession } from './watch-session.ts';
import type { WatchSettings } from './watch-session.ts';

/** The real server's request body limit (3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface HttpServerOptions {
  readonly registry: Registry;
  readonly hub: WatchHub;
  readonly faults: Faults;
  readonly requests: RequestLog;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  readonly token: string | undefined;
  readonly watch: WatchSettings;
  /** Serve HTTPS with this certificate and key instead of plain HTTP. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

interface Classified {
  readonly verb: Verb;
  /** The verb of a resource request the server can serve. */
  readonly resourceVerb: ResourceVerb | undefined;
  readonly type: ResourceType | undefined;
  /** Why the request cannot be served, answered after authentication. */
  readonly refusal: StatusError | undefined;
}

function classify(path: ApiPath, method: string, query: URLSearchParams): Classified {
  if (path.kind !== 'resource') return { verb: path.kind === 'unknown' ? 'unknown' : 'discovery', resourceVerb: undefined, type: undefined, refusal: undefined };
  try {
    const verb = resolveVerb(method, path, query);
    return { verb, resourceVerb: verb, type: path.type, refusal: undefined };
  } catch (error) {
    return { verb: 'unknown', resourceVerb: undefined, type: path.type, refusal: error as StatusError };
  }
}

export class FakeHttpServer {
  readonly #options: HttpServerOptions;
  readonly #server: Server | HttpsServer;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    const handler = (request: IncomingMessage, response: ServerResponse): void => {
      void this.#handle(request, response);
    };
    this.#server = options.tls === undefined ? createServer(handler) : createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler);
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    return (this.#server.address() as AddressInfo).port;
  }

  /** Cuts every watch and connection and stops listening. */
  async close(): Promise<void> {
    this.#options.hub.closeAll();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { faults, registry, requests, token } = this.#options;
    const url = new URL(request.url ?? '/', 'http://fake-apiserver');
    const method = request.method ?? 'GET';
    const path = parseApiPath(registry.types, url.pathname);
    const { verb, resourceVerb, type, refusal } = classify(path, method, url.searchParams);
    const entry: RecordedRequest = {
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      verb,
      resource: type?.plural,
      group: type?.group,
      namespace: path.kind === 'resource' ? path.namespace : undefined,
      subresource: path.kind === 'resource' ? path.subresource : undefined,
      status: 0,
      at: Date.now(),
    };
    requests.record(entry, type);
    response.on('close', () => {
      if (entry.status === 0) entry.status = response.statusCode;
    });
    try {
      const body = await readBody(request);
      if (token !== undefined && request.headers.authorization !== `Bearer ${token}`) throw unauthorized();
      if (refusal !== undefined) throw refusal;
      if (path.kind !== 'resource') {
        this.#discovery(path, request, response, entry);
        return;
      }
      const decision = faults.decide(verb, type);
      if (decision.kind === 'fail') throw decision.error;
      if (decision.delayMs > 0) await delay(decision.delayMs);
      const reply = handleResource(registry, {
        method,
        path,
        verb: resourceVerb!,
        query: url.searchParams,
        contentType: (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(),
        body,
      });
      if (reply.kind === 'json') this.#json(response, entry, reply.status, reply.body);
      else this.#watch(reply.watch, response, entry);
    } catch (error) {
      const failure = error instanceof StatusError ? error : serverError(500, (error as Error).message ?? String(error));
      this.#json(response, entry, failure.code, failure.toStatus(), failure.headers);
    }
  }

  /** Discovery, /version and health; 404 for a path the server does not serve. */
  #discovery(path: Exclude<ApiPath, { kind: 'resource' }>, request: IncomingMessage, response: ServerResponse, entry: RecordedRequest): void {
    const { types } = this.#options.registry;
    switch (path.kind) {
      case 'root':
        this.#json(response, entry, 200, path.which === 'api' ? apiVersions(request.headers.host ?? '127.0.0.1') : apiGroupList(types));
        return;
      case 'group':
        this.#json(response, entry, 200, apiGroup(types, path.group));
        return;
      case 'group-version':
        this.#json(response, entry, 200, apiResourceList(types, path.group, path.version));
        return;
      case 'version':
        this.#json(response, entry, 200, versionInfo());
        return;
      case 'openapi-index':
        this.#json(response, entry, 200, openApiIndex(types));
        return;
      case 'openapi-document':
        this.#json(response, entry, 200, groupVersionDocument(types, path.group, path.version));
        return;
      case 'health':
        entry.status = 200;
        response.setHeader('Content-Type', 'text/plain; charset=utf-8');
        response.end('ok');
        return;
      case 'unknown':
        throw resourceNotFound();
    }
  }

  #watch(request: WatchSession['request'], response: ServerResponse, entry: RecordedRequest): void {
    const { hub, registry, watch } = this.#options;
    const faults = { stalled: hub.isStalled(request.type), bookmarksWithheld: () => hub.bookmarksWithheld(request.type) };
    const session: WatchSession = new WatchSession(request, registry.store, response, watch, faults, () => hub.remove(session));
    const start = session.plan();
    hub.add(session);
    entry.status = 200;
    session.open(start);
  }

  #json(response: ServerResponse, entry: RecordedRequest, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
    entry.status = status;
    if (response.headersSent || response.destroyed) return;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.statusCode = status;
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify(body));
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY_BYTES}`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
