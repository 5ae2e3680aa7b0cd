/**
 * The API server's error model: every failure is a `Status` object
 * (kind Status, apiVersion v1, status Failure, message, reason, details,
 * code) with the same code as the HTTP status, as k8s.io/apimachinery's
 * `errors` package builds them. Messages follow the real ones, so a client
 * that shows them shows what it would show against a cluster.
 */
import type { ResourceType } from './resource-types.ts';

export interface StatusCause {
  readonly reason?: string;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A failure answered as a Status with `code` as the HTTP status. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /** Extra response headers (Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: number, reason: string, message: string, details?: StatusDetails, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = headers;
  }

  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      // Omitted when empty, as metav1.Status's omitempty does (a webhook's denial may carry none).
      ...(this.reason === '' ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

/** `ingresses.networking.k8s.io`, or `pods` for the core group: how resources are named in messages. */
export function qualifiedResource(type: ResourceType): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

/** `Event.events.k8s.io`, or `Pod` for the core group: how kinds are named in validation messages. */
function qualifiedKind(type: ResourceType): string {
  return type.group === '' ? type.kind : `${type.kind}.${type.group}`;
}

function resourceDetails(type: ResourceType, name: string): StatusDetails {
  return { name, ...(type.group === '' ? {} : { group: type.group }), kind: type.plural };
}

export function notFound(type: ResourceType, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(type)} "${name}" not found`, resourceDetails(type, name));
}

export function namespaceNotFound(namespace: string): StatusError {
  return new StatusError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
}

export function alreadyExists(type: ResourceType, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(type)} "${name}" already exists`, resourceDetails(type, name));
}

export function conflict(type: ResourceType, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${why}`, resourceDetails(type, name));
}

export const STALE_OBJECT = 'the object has been modified; please apply your changes to the latest version and try again';

/** One field problem, in the shape of k8s.io/apimachinery's field.Error. */
export interface FieldError {
  readonly field: string;
  readonly type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueTooLong' | 'FieldValueNotSupported';
  /** The offending value, shown for invalid values. */
  readonly value?: unknown;
  readonly detail?: string;
}

function fieldErrorBody(error: FieldError): string {
  const detail = error.detail === undefined || error.detail === '' ? '' : `: ${error.detail}`;
  switch (error.type) {
    case 'FieldValueRequired':
      return `Required value${detail}`;
    case 'FieldValueForbidden':
      return `Forbidden${detail}`;
    case 'FieldValueTooLong':
      return `Too long${detail}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(error.value)}${detail}`;
    case 'FieldValueInvalid':
      return `Invalid value: ${JSON.stringify(error.value ?? '')}${detail}`;
  }
}

/** 422 Invalid: `Kind.group "name" is invalid: field: problem` (several in brackets, as Go aggregates them). */
export function invalid(type: ResourceType, name: string, errors: readonly FieldError[]): StatusError {
  const lines = errors.map((error) => `${error.field}: ${fieldErrorBody(error)}`);
  const summary = lines.length === 1 ? lines[0]! : `[${lines.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${qualifiedKind(type)} "${name}" is invalid: ${summary}`, {
    name,
    ...(type.group === '' ? {} : { group: type.group }),
    kind: type.kind,
    causes: errors.map((error) => ({ reason: error.type, message: fieldErrorBody(error), field: error.field })),
  });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

/** 410 Expired, the answer to a resourceVersion or continue token older than the kept history. */
export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

/** 504 for a resourceVersion the server has not reached yet. */
export function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return new StatusError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

/** 404 for a path that names no resource, group or version the server serves. */
export function resourceNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function methodNotAllowed(): StatusError {
  return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function unauthorized(): StatusError {
  return new StatusError(401, 'Unauthorized', 'Unauthorized');
}

export function unsupportedMediaType(message: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', message);
}

export function tooManyRequests(retryAfterSeconds: number): StatusError {
  return new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
}

/** A 5xx with the reason the real server gives that code. */
export function serverError(code: number, message: string): StatusError {
  const reason = code === 503 ? 'ServiceUnavailable' : code === 504 ? 'Timeout' : 'InternalError';
  const text = reason === 'InternalError' ? `Internal error occurred: ${message}` : message;
  return new StatusError(code, reason, text, reason === 'InternalError' ? { causes: [{ message }] } : {});
}
