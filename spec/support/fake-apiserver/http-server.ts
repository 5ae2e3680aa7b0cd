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
import type { AdmissionOperation, ValidatingAdmission } from './admission.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.ts';
import { groupVersionDocument, openApiIndex } from './openapi.ts';
import type { Faults, RecordedRequest, RequestLog, ResourceVerb, Verb } from './faults.ts';
import type { Registry } from './registry.ts';
import { parseApiPath } from './request-path.ts';
import type { ApiPath } from './request-path.ts';
import { handleResource, resolveVerb, type ResourcePath } from './resource-api.ts';
import type { ResourceType } from './resource-types.ts';
import { STALE_OBJECT, StatusError, conflict, resourceNotFound, serverError, unauthorized } from './status.ts';
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
  readonly admission: ValidatingAdmission;
}

/** What a request that writes an object asks: the verb and how its body reads. */
interface WriteRequest {
  readonly method: string;
  readonly path: ResourcePath;
  readonly verb: 'create' | 'update' | 'patch';
  readonly query: URLSearchParams;
  readonly contentType: string;
  readonly body: Buffer;
}

/** How often a write is judged again when the object changed while its webhooks were called (GuaranteedUpdate retries). */
const ADMISSION_ATTEMPTS = 3;

/**
 * The HTTP status of a Warning header: 299, agent "-", the text quoted
 * (k8s.io/apimachinery/pkg/util/net/http.go NewWarningHeader).
 */
function warningHeader(text: string): string {
  return `299 - "${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
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
      const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (resourceVerb === 'create' || resourceVerb === 'update' || resourceVerb === 'patch') {
        const { warnings, failure } = await this.#admit({ method, path, verb: resourceVerb, query: url.searchParams, contentType, body });
        if (warnings.length > 0) response.setHeader('Warning', warnings.map(warningHeader));
        if (failure !== undefined) throw failure;
      }
      const reply = handleResource(registry, { method, path, verb: resourceVerb!, query: url.searchParams, contentType, body });
      if (reply.kind === 'json') this.#json(response, entry, reply.status, reply.body);
      else this.#watch(reply.watch, response, entry);
    } catch (error) {
      const failure = error instanceof StatusError ? error : serverError(500, (error as Error).message ?? String(error));
      this.#json(response, entry, failure.code, failure.toStatus(), failure.headers);
    }
  }

  /**
   * Validating admission, as the registry store runs it: after the write is
   * made and validated (so what a webhook sees is what would be stored),
   * before it is stored. Webhooks are called without holding anything; when
   * the stored object changed meanwhile, the write is made and judged again.
   */
  async #admit(write: WriteRequest): Promise<{ readonly warnings: readonly string[]; readonly failure: StatusError | undefined }> {
    const { registry, admission } = this.#options;
    const { type, name } = write.path;
    const namespace = write.path.namespace ?? '';
    const dryRun = write.query.getAll('dryRun').length > 0;
    const trialQuery = new URLSearchParams(write.query);
    if (!dryRun) trialQuery.append('dryRun', 'All');
    for (let attempt = 1; ; attempt++) {
      const stored = name === undefined ? undefined : registry.store.get(type, namespace, name);
      const trial = handleResource(registry, { ...write, query: trialQuery });
      if (trial.kind !== 'json') throw serverError(500, 'a write answered like a watch');
      const object = trial.body as Record<string, unknown> & { metadata?: Record<string, unknown> };
      const operation: AdmissionOperation = write.verb === 'create' || stored === undefined ? 'CREATE' : 'UPDATE';
      const result = await admission.admit({
        operation,
        type,
        namespace: type.namespaced ? String(object.metadata?.['namespace'] ?? namespace) : undefined,
        name: String(object.metadata?.['name'] ?? name ?? ''),
        subresource: write.path.subresource,
        object,
        oldObject: stored,
        dryRun,
      });
      const now = name === undefined ? undefined : registry.store.get(type, namespace, name);
      if (now === stored || result.failure !== undefined) return result;
      if (attempt >= ADMISSION_ATTEMPTS) return { warnings: result.warnings, failure: conflict(type, name!, STALE_OBJECT) };
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
