/**
 * Typed failures of Data Plane API calls. Every error names the endpoint
 * (URL without credentials), the method and the path, and carries the
 * `{code, message}` DPAPI answered, so a deployment outcome can say exactly
 * which instance refused what and why without anyone reading logs.
 */

export type DataplaneErrorKind =
  /** 401: wrong or missing credentials. */
  | 'unauthorized'
  /** 404: missing object, unknown reload id, unknown runtime server or map. */
  | 'not-found'
  /** 409 "version mismatch": someone else wrote the configuration first. */
  | 'version-conflict'
  /** Any other 409: object exists, duplicate map entry, referenced storage file. */
  | 'conflict'
  /** 400 "validation error": `haproxy -c` rejected the configuration. */
  | 'validation'
  /** 400 "Reload failed": force_reload reloaded and HAProxy refused; the file is already written. */
  | 'reload-failed'
  /** Any other non-2xx answer. */
  | 'http'
  /** A 2xx answer that does not look like the contract (bad JSON, missing version). */
  | 'protocol'
  /** No complete answer within the time limit. */
  | 'timeout'
  /** No answer at all: refused, reset, DNS, TLS handshake, unreadable TLS files. */
  | 'unavailable';

export interface DataplaneErrorDetails {
  /** Base URL of the API (with `/v3`), never with credentials. */
  readonly endpoint: string;
  readonly method: string;
  /** Path below the base URL, without the query string. */
  readonly path: string;
  readonly status?: number | undefined;
  /** `code` of DPAPI's error body (not always the HTTP status: go-swagger uses 6xx for schema errors). */
  readonly code?: number | undefined;
  /** `message` of DPAPI's error body, or the raw body when it was not JSON. */
  readonly serverMessage?: string | undefined;
  readonly reloadId?: string | undefined;
  /** `Configuration-Version` of the error response, when DPAPI sent one. */
  readonly version?: number | undefined;
  /** Node's error code of a transport failure (ECONNREFUSED, ECONNRESET...). */
  readonly systemCode?: string | undefined;
  readonly cause?: unknown;
}

export class DataplaneError extends Error {
  readonly kind: DataplaneErrorKind;
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly code: number | undefined;
  readonly serverMessage: string | undefined;
  readonly reloadId: string | undefined;
  readonly version: number | undefined;
  readonly systemCode: string | undefined;

  constructor(kind: DataplaneErrorKind, message: string, details: DataplaneErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'DataplaneError';
    this.kind = kind;
    this.endpoint = details.endpoint;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.code = details.code;
    this.serverMessage = details.serverMessage;
    this.reloadId = details.reloadId;
    this.version = details.version;
    this.systemCode = details.systemCode;
  }

  /** `message` is not an own enumerable property, so JSON logs would drop the most useful part without this. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      endpoint: this.endpoint,
      method: this.method,
      path: this.path,
      status: this.status,
      code: this.code,
      serverMessage: this.serverMessage,
      reloadId: this.reloadId,
      version: this.version,
      systemCode: this.systemCode,
    };
  }
}

export class Unauthorized extends DataplaneError {
  constructor(message: string, details: DataplaneErrorDetails) {
    super('unauthorized', message, details);
    this.name = 'Unauthorized';
  }
}

export class NotFound extends DataplaneError {
  constructor(message: string, details: DataplaneErrorDetails) {
    super('not-found', message, details);
    this.name = 'NotFound';
  }
}

export class VersionConflict extends DataplaneError {
  /** The version now on disk: what a retry must send. */
  readonly currentVersion: number | undefined;

  constructor(message: string, details: DataplaneErrorDetails) {
    super('version-conflict', message, details);
    this.name = 'VersionConflict';
    // The header is authoritative; the message ("version in configuration file is 7, ...") is the fallback.
    const stated = /version in configuration file is (\d+)/.exec(details.serverMessage ?? '')?.[1];
    this.currentVersion = details.version ?? (stated === undefined ? undefined : Number(stated));
  }
}

export class ValidationFailed extends DataplaneError {
  constructor(message: string, details: DataplaneErrorDetails) {
    super('validation', message, details);
    this.name = 'ValidationFailed';
  }
}

export class DataplaneTimeout extends DataplaneError {
  readonly timeoutMs: number;

  constructor(message: string, details: DataplaneErrorDetails & { readonly timeoutMs: number }) {
    super('timeout', message, details);
    this.name = 'DataplaneTimeout';
    this.timeoutMs = details.timeoutMs;
  }
}

export class DataplaneUnavailable extends DataplaneError {
  constructor(message: string, details: DataplaneErrorDetails) {
    super('unavailable', message, details);
    this.name = 'DataplaneUnavailable';
  }
}

/** Long enough for a multi-line `haproxy -c` report, short enough that an HTML error page from a proxy cannot flood a log. */
const MAX_SERVER_MESSAGE = 8_000;

/**
 * DPAPI answers `{code, message}` as JSON, but 3.2's raw endpoints label it
 * text/plain and proxies in front of it answer whatever they like; so the
 * body is tried as JSON whatever the Content-Type, and used as text otherwise.
 */
export function parseErrorBody(body: string): { code: number | undefined; message: string | undefined } {
  const trimmed = body.trim();
  if (trimmed === '') return { code: undefined, message: undefined };
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed !== null && typeof parsed === 'object') {
      const { code, message } = parsed as { code?: unknown; message?: unknown };
      return {
        code: typeof code === 'number' ? code : undefined,
        message: typeof message === 'string' ? truncate(message) : truncate(trimmed),
      };
    }
  } catch {
    // Not JSON: the text itself is the best explanation there is.
  }
  return { code: undefined, message: truncate(trimmed) };
}

function truncate(text: string): string {
  return text.length <= MAX_SERVER_MESSAGE ? text : `${text.slice(0, MAX_SERVER_MESSAGE)}... (truncated)`;
}

export interface ResponseErrorInput {
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  /** Path with its query string, for the message: the query says which version was sent. */
  readonly target: string;
  readonly status: number;
  readonly statusText: string;
  readonly body: string;
  readonly reloadId: string | undefined;
  readonly version: number | undefined;
}

/** The typed error for a non-2xx answer. */
export function responseError(input: ResponseErrorInput): DataplaneError {
  const { code, message: serverMessage } = parseErrorBody(input.body);
  const details: DataplaneErrorDetails = {
    endpoint: input.endpoint,
    method: input.method,
    path: input.path,
    status: input.status,
    code,
    serverMessage,
    reloadId: input.reloadId,
    version: input.version,
  };
  const reason = serverMessage ?? (input.statusText || 'no message');
  const message = `Data Plane API ${input.endpoint}: ${input.method} ${input.target} failed with ${input.status}: ${reason}`;
  const text = serverMessage ?? '';
  if (input.status === 401) return new Unauthorized(message, details);
  if (input.status === 404) return new NotFound(message, details);
  if (input.status === 409) {
    return text.includes('version mismatch') ? new VersionConflict(message, details) : new DataplaneError('conflict', message, details);
  }
  if (input.status === 400 && text.includes('validation error')) return new ValidationFailed(message, details);
  if (input.status === 400 && text.startsWith('Reload failed')) return new DataplaneError('reload-failed', message, details);
  return new DataplaneError('http', message, details);
}

/**
 * Runs a call whose failure of one kind means its work is done already (a
 * replayed add finding the object there, a delete finding it gone):
 * undefined then; any other failure stands.
 */
export async function ignoring<T>(kind: DataplaneErrorKind, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DataplaneError && error.kind === kind) return undefined;
    throw error;
  }
}
