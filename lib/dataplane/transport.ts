/**
 * The HTTP side of a Data Plane API client: one base URL, Basic auth, a
 * per-request timeout, keep-alive connections, `Configuration-Version`
 * tracked from every answer, typed errors that name the endpoint, and
 * credentials that never reach a message, a log line or an inspected object.
 */
import fetch, { type Headers } from 'node-fetch';
import { inspect, type InspectOptions } from 'node:util';
import { systemClock, type Clock } from '../clock.ts';
import { PlainAgentSource, type AgentLease, type AgentSource } from './agents.ts';
import { DataplaneError, DataplaneTimeout, DataplaneUnavailable, responseError, type DataplaneErrorDetails } from './errors.ts';
import { TlsAgentSource, type DataplaneTlsOptions } from './tls.ts';

export interface TransportOptions {
  /** e.g. `http://10.0.0.5:5555`; `/v3` is appended when missing. Credentials in it are used and then stripped. */
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  /** Per HTTP request, body included. Default 10 s. */
  readonly timeoutMs?: number;
  /** What that timeout, and the client's reload polling, are measured on; real time by default. */
  readonly clock?: Clock;
  /** For an `https://` url: custom CA, client certificate (re-read when the files change). */
  readonly tls?: DataplaneTlsOptions;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface Call {
  readonly method: Method;
  /** Built with `apiPath`, relative to the `/v3` base. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: string | Buffer;
  readonly contentType?: string;
  readonly accept?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
export const JSON_TYPE = 'application/json';
/**
 * Transport failures a GET is retried once on: a keep-alive connection the
 * server closed while idle fails the next request that picks it up, although
 * the server never saw that request. Writes are not retried: the server may
 * have applied them.
 */
const RETRIED_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

export class Transport {
  /** Base URL including `/v3`, without credentials: the name of the endpoint in every message. */
  readonly endpoint: string;
  readonly #username: string | undefined;
  /** The Authorization header, the only place the password lives (private: invisible to inspect and JSON). */
  readonly #authorization: string | undefined;
  readonly #timeoutMs: number;
  readonly clock: Clock;
  readonly #agents: AgentSource;
  #lastVersion: number | undefined;
  #requests = 0;

  constructor(options: TransportOptions) {
    const { url, username, password } = parseUrl(options.url);
    this.endpoint = url;
    this.#username = options.username ?? username;
    const secret = options.password ?? password ?? '';
    this.#authorization = this.#username === undefined ? undefined : `Basic ${Buffer.from(`${this.#username}:${secret}`, 'utf8').toString('base64')}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.clock = options.clock ?? systemClock;
    if (!(this.#timeoutMs > 0)) throw new TypeError(`timeoutMs must be positive, got ${this.#timeoutMs}`);
    const https = url.startsWith('https:');
    if (options.tls !== undefined && !https) throw new TypeError(`tls options need an https:// url, got ${url}`);
    this.#agents = https ? new TlsAgentSource(options.tls ?? {}) : new PlainAgentSource();
  }

  get lastVersion(): number | undefined {
    return this.#lastVersion;
  }

  get requests(): number {
    return this.#requests;
  }

  close(): void {
    this.#agents.close();
  }

  async json(call: Call): Promise<unknown> {
    const answer = await this.request({ accept: JSON_TYPE, ...call });
    if (answer.text.trim() === '') return undefined;
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      throw this.protocolError(call, `invalid JSON in a ${answer.status} answer: ${answer.text.slice(0, 200)}`);
    }
  }

  async jsonArray<T>(call: Call): Promise<T[]> {
    const value = await this.json(call);
    if (!Array.isArray(value)) throw this.protocolError(call, `expected an array, got ${JSON.stringify(value)?.slice(0, 200)}`);
    return value as T[];
  }

  async request(call: Call): Promise<Answer> {
    const target = call.path + queryString(call.query);
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.#attempt(call, target);
      } catch (error) {
        const retry = attempt === 0 && call.method === 'GET' && error instanceof DataplaneUnavailable && RETRIED_CODES.has(error.systemCode ?? '');
        if (!retry) throw error;
      }
    }
  }

  protocolError(call: Call, message: string): DataplaneError {
    const target = call.path + queryString(call.query);
    return new DataplaneError('protocol', `Data Plane API ${this.endpoint}: ${call.method} ${target}: ${message}`, {
      endpoint: this.endpoint,
      method: call.method,
      path: call.path,
    });
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
    return `Transport ${inspect(this.toJSON(), options)}`;
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
    const cancelTimeout = this.clock.after(this.#timeoutMs, () => controller.abort());
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
      cancelTimeout();
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

export function versionHeader(headers: Headers): number | undefined {
  const value = headers.get('configuration-version');
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/** Spelled `Reload-ID` in the spec, sent as `Reload-Id` by Go; Headers lookups ignore case. */
export function reloadIdHeader(headers: Headers): string | undefined {
  const value = headers.get('reload-id');
  return value === null || value === '' ? undefined : value;
}

/** node-fetch wraps the system error as "request to <url> failed, reason: <why>"; the URL is already in our message. */
function transportReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^request to \S+ failed, reason: /, '').replace(/^Invalid response body while trying to fetch \S+: /, '');
}
