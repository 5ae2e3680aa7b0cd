/**
 * Request and response shapes shared by the emulator's handlers, and the
 * error model of the Data Plane API (§8): every error is `{code, message}`.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface ApiRequest {
  readonly method: string;
  /** Path without the query string, as received (still percent-encoded). */
  readonly path: string;
  /** Path parameters of the matched route, percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly contentType?: string;
  readonly body?: string | Buffer;
}

export type Handler = (request: ApiRequest) => Promise<ApiResponse> | ApiResponse;

export interface ApiErrorOptions {
  /** The `code` field when it differs from the HTTP status (go-swagger's 6xx codes on 422). */
  readonly code?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** An error answered as `{code, message}` with its HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = options.code ?? status;
    this.headers = options.headers ?? {};
  }
}

export function json(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): ApiResponse {
  return { status, headers, contentType: 'application/json', body: `${JSON.stringify(value)}\n` };
}

export function text(status: number, value: string, headers: Readonly<Record<string, string>> = {}): ApiResponse {
  return { status, headers, contentType: 'text/plain', body: value };
}

export function empty(status: number, headers: Readonly<Record<string, string>> = {}): ApiResponse {
  return { status, headers };
}

/** The JSON body of an error. */
export function errorBody(error: ApiError): string {
  return `${JSON.stringify({ code: error.code, message: error.message })}\n`;
}

// go-openapi's swag.ConvertBool: these spellings are true, the others listed false.
const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 'on', 'ok', 'selected', 'checked', 'enabled']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'off', '']);

/** A boolean query parameter; go-swagger answers 422 (code 601, InvalidType) to anything else. */
export function booleanParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  if (raw === null) return false;
  const value = raw.toLowerCase();
  if (TRUE_WORDS.has(value)) return true;
  if (FALSE_WORDS.has(value)) return false;
  throw new ApiError(422, `${name} in query must be of type boolean: ${JSON.stringify(raw)}`, { code: 601 });
}

/** An integer query parameter, undefined when absent. */
export function integerParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) {
    throw new ApiError(422, `${name} in query must be of type int64: ${JSON.stringify(raw)}`, { code: 601 });
  }
  return Number(raw);
}

/** The body parsed as a JSON object; 400 when it is not one. */
export function jsonBody(request: ApiRequest): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    throw new ApiError(400, `parsing body body from "" failed, because ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(400, 'parsing body body from "" failed, because the body is not a JSON object');
  }
  return value as Record<string, unknown>;
}

/** The media type of a request without parameters, lower case ('' when absent). */
export function mediaType(request: ApiRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** An optional string field of a JSON body; 422 when it has another type. */
export function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ApiError(422, `${name} in body must be of type string`, { code: 601 });
  return value;
}

/** An optional integer field of a JSON body; 422 when it has another type. */
export function integerField(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new ApiError(422, `${name} in body must be of type integer`, { code: 601 });
  }
  return value;
}

/** An optional enum field of a JSON body; 422 (go-swagger's EnumFail, code 606) when outside `allowed`. */
export function enumField<T extends string>(body: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const value = stringField(body, name);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ApiError(422, `${name} in body should be one of ${JSON.stringify(allowed)}`, { code: 606 });
  }
  return value as T;
}
