/**
 * Client of one HAProxy Data Plane API v3 instance, following the contract
 * in dataplane-api-v3.md: exact paths, query parameters and status codes,
 * `Configuration-Version` tracked from every answer, typed errors that name
 * the endpoint, and credentials that never reach a message, a log line or
 * an inspected object.
 */
import fetch, { type Headers } from 'node-fetch';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect, type InspectOptions } from 'node:util';
import { PlainAgentSource, type AgentLease, type AgentSource } from './agents.ts';
import {
  DataplaneError,
  DataplaneTimeout,
  DataplaneUnavailable,
  responseError,
  type DataplaneErrorDetails,
} from './errors.ts';
import { multipartFile } from './multipart.ts';
import { apiPath } from './path.ts';
import { TlsAgentSource, type DataplaneTlsOptions } from './tls.ts';
import type {
  DataplaneHealth,
  DataplaneInfo,
  MapEntry,
  MapWriteOptions,
  RawConfiguration,
  RawConfigurationOptions,
  RawConfigurationResult,
  ReloadStatus,
  RuntimeAddServer,
  RuntimeMap,
  RuntimeServer,
  RuntimeServerUpdate,
  StorageFile,
  StorageKind,
  StorageWriteOptions,
  StorageWriteResult,
  WaitForReloadOptions,
} from './types.ts';

export type { DataplaneTlsOptions } from './tls.ts';

export interface DataplaneClientOptions {
  /** e.g. `http://10.0.0.5:5555`; `/v3` is appended when missing. Credentials in it are used and then stripped. */
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  /** Per HTTP request, body included. Default 10 s. */
  readonly timeoutMs?: number;
  /** For an `https://` url: custom CA, client certificate (re-read when the files change). */
  readonly tls?: DataplaneTlsOptions;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type QueryValue = string | number | boolean | undefined;

interface Call {
  readonly method: Method;
  /** Built with `apiPath`, relative to the `/v3` base. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: string | Buffer;
  readonly contentType?: string;
  readonly accept?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const JSON_TYPE = 'application/json';
/**
 * Transport failures a GET is retried once on: a keep-alive connection the
 * server closed while idle fails the next request that picks it up, although
 * the server never saw that request. Writes are not retried: the server may
 * have applied them.
 */
const RETRIED_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

export class DataplaneClient {
  /** Base URL including `/v3`, without credentials: the name of the endpoint in every message. */
  readonly endpoint: string;
  readonly #username: string | undefined;
  /** The Authorization header, the only place the password lives (private: invisible to inspect and JSON). */
  readonly #authorization: string | undefined;
  readonly #timeoutMs: number;
  readonly #agents: AgentSource;
  #lastVersion: number | undefined;
  #requests = 0;

  constructor(options: DataplaneClientOptions) {
    const { url, username, password } = parseUrl(options.url);
    this.endpoint = url;
    this.#username = options.username ?? username;
    const secret = options.password ?? password ?? '';
    this.#authorization =
      this.#username === undefined ? undefined : `Basic ${Buffer.from(`${this.#username}:${secret}`, 'utf8').toString('base64')}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.#timeoutMs > 0)) throw new TypeError(`timeoutMs must be positive, got ${this.#timeoutMs}`);
    const https = url.startsWith('https:');
    if (options.tls !== undefined && !https) throw new TypeError(`tls options need an https:// url, got ${url}`);
    this.#agents = https ? new TlsAgentSource(options.tls ?? {}) : new PlainAgentSource();
  }

  /** `Configuration-Version` of the latest answer that carried one, errors included. */
  get lastVersion(): number | undefined {
    return this.#lastVersion;
  }

  /** HTTP requests sent so far, retries included. */
  get requests(): number {
    return this.#requests;
  }

  /** Closes pooled connections; the client cannot be used afterwards. */
  close(): void {
    this.#agents.close();
  }

  // --- info ---------------------------------------------------------------

  async info(): Promise<DataplaneInfo> {
    const call: Call = { method: 'GET', path: '/info' };
    const value = await this.#json(call);
    if (!isObject(value) || !isObject(value['api'])) throw this.#protocolError(call, 'info without "api"');
    return value as unknown as DataplaneInfo;
  }

  async health(): Promise<DataplaneHealth> {
    const call: Call = { method: 'GET', path: '/health' };
    const value = await this.#json(call);
    if (!isObject(value) || typeof value['haproxy'] !== 'string') throw this.#protocolError(call, 'health without "haproxy"');
    return value as unknown as DataplaneHealth;
  }

  async configurationVersion(): Promise<number> {
    const call: Call = { method: 'GET', path: '/services/haproxy/configuration/version' };
    const value = await this.#json(call);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.#protocolError(call, `version is not an integer: ${JSON.stringify(value)}`);
    return value;
  }

  // --- raw configuration --------------------------------------------------

  async getRawConfiguration(): Promise<RawConfiguration> {
    const call: Call = { method: 'GET', path: '/services/haproxy/configuration/raw', accept: 'text/plain, */*' };
    const answer = await this.#request(call);
    // The header is the contract; the file's own `# _version=` line is the
    // same number and covers a proxy that drops headers.
    const version = versionHeader(answer.headers) ?? fileVersion(answer.text);
    if (version === undefined) throw this.#protocolError(call, 'no Configuration-Version header and no "# _version=" line');
    return { text: answer.text, version, checksum: answer.headers.get('configuration-checksum') ?? undefined };
  }

  async postRawConfiguration(text: string, options: RawConfigurationOptions = {}): Promise<RawConfigurationResult> {
    const headers: Record<string, string> = {};
    const actions = options.runtimeActions ?? [];
    for (const action of actions) {
      // ';' separates actions and a line break would end the header: either would run something else than asked.
      if (/[;\r\n]/.test(action)) throw new TypeError(`runtime action must not contain ';' or a line break: ${JSON.stringify(action)}`);
    }
    if (actions.length > 0) headers['X-Runtime-Actions'] = actions.join(';');
    const answer = await this.#request({
      method: 'POST',
      path: '/services/haproxy/configuration/raw',
      query: {
        version: options.version,
        skip_version: options.skipVersion,
        skip_reload: options.skipReload,
        only_validate: options.onlyValidate,
        force_reload: options.forceReload,
      },
      body: text,
      contentType: 'text/plain',
      accept: 'text/plain, */*',
      headers,
    });
    return { status: answer.status, reloadId: reloadIdHeader(answer.headers), version: versionHeader(answer.headers), body: answer.text };
  }

  // --- reloads ------------------------------------------------------------

  async reload(id: string): Promise<ReloadStatus> {
    const call: Call = { method: 'GET', path: apiPath`/services/haproxy/reloads/${id}` };
    const value = await this.#json(call);
    if (!isObject(value) || !['failed', 'in_progress', 'succeeded'].includes(value['status'] as string)) {
      throw this.#protocolError(call, `unexpected reload ${JSON.stringify(value)}`);
    }
    return {
      ...(value as object),
      id: typeof value['id'] === 'string' ? value['id'] : id,
      status: value['status'] as ReloadStatus['status'],
      response: typeof value['response'] === 'string' ? value['response'] : '',
    };
  }

  /**
   * Polls a reload until it succeeded or failed. A failed reload resolves
   * (with HAProxy's output in `response`) rather than rejecting, so the
   * caller reports why; only running out of time rejects (DataplaneTimeout).
   */
  async waitForReload(id: string, options: WaitForReloadOptions = {}): Promise<ReloadStatus> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const pollMs = options.pollMs ?? 500;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reload = await this.reload(id);
      if (reload.status !== 'in_progress') return reload;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        const path = apiPath`/services/haproxy/reloads/${id}`;
        throw new DataplaneTimeout(`Data Plane API ${this.endpoint}: reload ${id} still in progress after ${timeoutMs} ms`, {
          endpoint: this.endpoint,
          method: 'GET',
          path,
          reloadId: id,
          timeoutMs,
        });
      }
      await delay(Math.min(pollMs, remaining), undefined, options.signal === undefined ? undefined : { signal: options.signal });
    }
  }

  // --- storage ------------------------------------------------------------

  async listStorage(kind: StorageKind): Promise<StorageFile[]> {
    return this.#jsonArray<StorageFile>({ method: 'GET', path: apiPath`/services/haproxy/storage/${kind}` });
  }

  async getStorageFile(kind: StorageKind, name: string): Promise<string> {
    const answer = await this.#request({ method: 'GET', path: apiPath`/services/haproxy/storage/${kind}/${name}`, accept: '*/*' });
    return answer.text;
  }

  /** Uploads a new file (multipart, field `file_upload`, filename = name); DPAPI may rename it, see `storageName`. */
  async createStorageFile(kind: StorageKind, name: string, content: string | Uint8Array, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const upload = multipartFile('file_upload', name, content);
    const answer = await this.#request({
      method: 'POST',
      path: apiPath`/services/haproxy/storage/${kind}`,
      query: storageQuery(options),
      body: upload.body,
      contentType: upload.contentType,
    });
    return storageResult(answer);
  }

  /** Replaces a file: text/plain for maps and certificates, multipart for general files (as DPAPI takes them). */
  async replaceStorageFile(kind: StorageKind, name: string, content: string | Uint8Array, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const path = apiPath`/services/haproxy/storage/${kind}/${name}`;
    const query = storageQuery(options);
    let call: Call;
    if (kind === 'general') {
      const upload = multipartFile('file_upload', name, content);
      call = { method: 'PUT', path, query, body: upload.body, contentType: upload.contentType };
    } else {
      call = { method: 'PUT', path, query, body: typeof content === 'string' ? content : Buffer.from(content), contentType: 'text/plain' };
    }
    return storageResult(await this.#request(call));
  }

  async deleteStorageFile(kind: StorageKind, name: string, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const answer = await this.#request({
      method: 'DELETE',
      path: apiPath`/services/haproxy/storage/${kind}/${name}`,
      query: storageQuery(options),
    });
    return storageResult(answer);
  }

  // --- runtime servers ----------------------------------------------------

  async runtimeServers(backend: string): Promise<RuntimeServer[]> {
    return this.#jsonArray<RuntimeServer>({ method: 'GET', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers` });
  }

  async runtimeServer(backend: string, name: string): Promise<RuntimeServer> {
    return (await this.#json({ method: 'GET', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}` })) as RuntimeServer;
  }

  async addRuntimeServer(backend: string, server: RuntimeAddServer): Promise<RuntimeAddServer> {
    return (await this.#json({
      method: 'POST',
      path: apiPath`/services/haproxy/runtime/backends/${backend}/servers`,
      body: JSON.stringify(server),
      contentType: JSON_TYPE,
    })) as RuntimeAddServer;
  }

  async updateRuntimeServer(backend: string, name: string, update: RuntimeServerUpdate): Promise<RuntimeServer> {
    return (await this.#json({
      method: 'PUT',
      path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}`,
      body: JSON.stringify(update),
      contentType: JSON_TYPE,
    })) as RuntimeServer;
  }

  async deleteRuntimeServer(backend: string, name: string): Promise<void> {
    await this.#request({ method: 'DELETE', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}` });
  }

  // --- runtime maps -------------------------------------------------------

  /** Maps of the running HAProxy; only those under DPAPI's maps_dir unless `includeUnmanaged`. */
  async runtimeMaps(options: { readonly includeUnmanaged?: boolean } = {}): Promise<RuntimeMap[]> {
    return this.#jsonArray<RuntimeMap>({
      method: 'GET',
      path: '/services/haproxy/runtime/maps',
      query: { include_unmanaged: options.includeUnmanaged },
    });
  }

  /** `map` is a storage name (`host.map`) or `#<id>`; either way it travels as one encoded segment. */
  async mapEntries(map: string): Promise<MapEntry[]> {
    return this.#jsonArray<MapEntry>({ method: 'GET', path: apiPath`/services/haproxy/runtime/maps/${map}/entries` });
  }

  /** Adds an entry; an existing key is a 409 `conflict` (use setMapEntry). */
  async addMapEntry(map: string, key: string, value: string, options: MapWriteOptions = {}): Promise<MapEntry> {
    return (await this.#json({
      method: 'POST',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries`,
      query: { force_sync: options.forceSync },
      body: JSON.stringify({ key, value }),
      contentType: JSON_TYPE,
    })) as MapEntry;
  }

  /** Changes the value of an existing key; a missing key is NotFound. */
  async setMapEntry(map: string, key: string, value: string, options: MapWriteOptions = {}): Promise<MapEntry> {
    return (await this.#json({
      method: 'PUT',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries/${key}`,
      query: { force_sync: options.forceSync },
      body: JSON.stringify({ value }),
      contentType: JSON_TYPE,
    })) as MapEntry;
  }

  async deleteMapEntry(map: string, key: string, options: MapWriteOptions = {}): Promise<void> {
    await this.#request({
      method: 'DELETE',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries/${key}`,
      query: { force_sync: options.forceSync },
    });
  }

  // --- redaction ----------------------------------------------------------

  toString(): string {
    return `DataplaneClient(${this.endpoint})`;
  }

  toJSON(): Record<string, unknown> {
    return {
      endpoint: this.endpoint,
      username: this.#username,
      password: this.#authorization === undefined ? undefined : '<redacted>',
      timeoutMs: this.#timeoutMs,
      lastVersion: this.#lastVersion,
      requests: this.#requests,
    };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `DataplaneClient ${inspect(this.toJSON(), options)}`;
  }

  // --- transport ----------------------------------------------------------

  async #json(call: Call): Promise<unknown> {
    const answer = await this.#request({ accept: JSON_TYPE, ...call });
    if (answer.text.trim() === '') return undefined;
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      throw this.#protocolError(call, `invalid JSON in a ${answer.status} answer: ${answer.text.slice(0, 200)}`);
    }
  }

  async #jsonArray<T>(call: Call): Promise<T[]> {
    const value = await this.#json(call);
    if (!Array.isArray(value)) throw this.#protocolError(call, `expected an array, got ${JSON.stringify(value)?.slice(0, 200)}`);
    return value as T[];
  }

  async #request(call: Call): Promise<Answer> {
    const target = call.path + queryString(call.query);
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.#attempt(call, target);
      } catch (error) {
        const retry =
          attempt === 0 &&
          call.method === 'GET' &&
          error instanceof DataplaneUnavailable &&
          RETRIED_CODES.has(error.systemCode ?? '');
        if (!retry) throw error;
      }
    }
  }

  async #attempt(call: Call, target: string): Promise<Answer> {
    const details = { endpoint: this.endpoint, method: call.method, path: call.path };
    const headers: Record<string, string> = {
      Accept: call.accept ?? '*/*',
      'User-Agent': 'haproxy-template-ic',
      ...call.headers,
    };
    if (this.#authorization !== undefined) headers['Authorization'] = this.#authorization;
    if (call.contentType !== undefined) headers['Content-Type'] = call.contentType;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#timeoutMs);
    let lease: AgentLease | undefined;
    try {
      try {
        lease = await this.#agents.acquire();
      } catch (error) {
        throw new DataplaneUnavailable(`Data Plane API ${this.endpoint}: ${call.method} ${target}: ${(error as Error).message}`, { ...details, cause: error });
      }
      this.#requests += 1;
      const response = await fetch(this.endpoint + target, {
        method: call.method,
        headers,
        body: call.body,
        agent: lease.agent,
        signal: controller.signal,
        // DPAPI does not redirect; following one would send the credentials elsewhere.
        redirect: 'manual',
      });
      const version = versionHeader(response.headers);
      if (version !== undefined) this.#lastVersion = version;
      const text = await response.text();
      if (!response.ok) {
        throw responseError({
          ...details,
          target,
          status: response.status,
          statusText: response.statusText,
          body: text,
          reloadId: reloadIdHeader(response.headers),
          version,
        });
      }
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (error instanceof DataplaneError) throw error;
      throw this.#transportError(error, details, target, controller.signal.aborted);
    } finally {
      clearTimeout(timer);
      lease?.release();
    }
  }

  #transportError(error: unknown, details: DataplaneErrorDetails, target: string, timedOut: boolean): DataplaneError {
    const prefix = `Data Plane API ${this.endpoint}: ${details.method} ${target}`;
    if (timedOut) {
      return new DataplaneTimeout(`${prefix}: no answer within ${this.#timeoutMs} ms`, { ...details, timeoutMs: this.#timeoutMs, cause: error });
    }
    const code = (error as { code?: unknown }).code;
    const systemCode = typeof code === 'string' ? code : undefined;
    return new DataplaneUnavailable(`${prefix}: unreachable: ${transportReason(error)}`, { ...details, systemCode, cause: error });
  }

  #protocolError(call: Call, message: string): DataplaneError {
    const target = call.path + queryString(call.query);
    return new DataplaneError('protocol', `Data Plane API ${this.endpoint}: ${call.method} ${target}: ${message}`, {
      endpoint: this.endpoint,
      method: call.method,
      path: call.path,
    });
  }
}

function parseUrl(raw: string): { url: string; username: string | undefined; password: string | undefined } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`invalid Data Plane API url ${JSON.stringify(raw.replace(/\/\/[^/@]*@/, '//<redacted>@'))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Data Plane API url must be http:// or https://, got ${url.protocol}`);
  }
  const username = url.username === '' ? undefined : decodeURIComponent(url.username);
  const password = url.password === '' ? undefined : decodeURIComponent(url.password);
  const path = url.pathname.replace(/\/+$/, '');
  return { url: `${url.origin}${path.endsWith('/v3') ? path : `${path}/v3`}`, username, password };
}

function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    // Every boolean DPAPI takes defaults to false, so false is the same as absent and keeps URLs short.
    if (value === undefined || value === false) continue;
    params.append(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function storageQuery(options: StorageWriteOptions): Record<string, QueryValue> {
  return { skip_reload: options.skipReload, force_reload: options.forceReload };
}

function storageResult(answer: Answer): StorageWriteResult {
  let storageName: string | undefined;
  try {
    const body: unknown = answer.text === '' ? undefined : JSON.parse(answer.text);
    if (isObject(body) && typeof body['storage_name'] === 'string') storageName = body['storage_name'];
  } catch {
    // PUT answers may carry the file itself, not a description of it.
  }
  return { status: answer.status, reloadId: reloadIdHeader(answer.headers), storageName };
}

function versionHeader(headers: Headers): number | undefined {
  const value = headers.get('configuration-version');
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/** Spelled `Reload-ID` in the spec, sent as `Reload-Id` by Go; Headers lookups ignore case. */
function reloadIdHeader(headers: Headers): string | undefined {
  const value = headers.get('reload-id');
  return value === null || value === '' ? undefined : value;
}

function fileVersion(text: string): number | undefined {
  const match = /^# _version=(\d+)\s*$/m.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** node-fetch wraps the system error as "request to <url> failed, reason: <why>"; the URL is already in our message. */
function transportReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .replace(/^request to \S+ failed, reason: /, '')
    .replace(/^Invalid response body while trying to fetch \S+: /, '');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
