import type { RouteSettings } from '../routing/settings.ts';
import type { Fields } from '../object-fields/fields.ts';
import { quote } from '../object-fields/names.ts';
import { absent, type FieldReader } from './field-reader.ts';
import { checkHeaderName } from './values.ts';

/**
 * The CORS filter (apis/v1/httproute_types.go HTTPCORSFilter, standard
 * since v1.5) in the settings vocabulary, with the specification's own
 * semantics where they are not the annotations':
 * - an origin's `*` stands for any number of DNS labels (one or more) to
 *   its left, and `*` alone for every host; an origin without a port means
 *   its scheme's default port;
 * - with allowCredentials, a `*` is never sent back: the request's origin,
 *   method or headers are (settings.ts `echoWildcards`);
 * - maxAge is 5 seconds when unset, and HAProxy answers preflights itself.
 */

type Cors = NonNullable<RouteSettings['cors']>;

/** apis/v1/shared_types.go CORSOrigin's pattern, with the scheme, host and port taken apart. */
const ORIGIN = /^(https?):\/\/((?:\*\.)?(?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(?::([0-9]{1,5}))?$/;

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** The regular expression of an origin whose host has a wildcard; its port as written, or the scheme's default (sent or not). */
function wildcardPattern(scheme: string, host: string, port: string): string {
  const hostPattern = host === '*' ? '[A-Za-z0-9.-]+' : `([A-Za-z0-9-]+\\.)+${host.slice(2).replace(REGEX_SPECIAL, '\\$&')}`;
  return `^${scheme}://${hostPattern}${port === '' ? `(:${DEFAULT_PORTS[scheme]})?` : `:${port}`}$`;
}

interface Origins {
  readonly exact: string[];
  readonly patterns: string[];
}

function readOrigins(reader: FieldReader, value: unknown, field: string): Origins {
  const origins: Origins = { exact: [], patterns: [] };
  const listed = reader.list(value, field);
  listed.forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (entry === '*') {
      if (listed.length > 1) reader.problem(at, '"*" cannot be listed beside other origins');
      origins.exact.push('*');
      return;
    }
    const parts = typeof entry === 'string' ? ORIGIN.exec(entry) : null;
    const port = parts?.[3] === undefined ? undefined : Number(parts[3]);
    if (!parts || (port !== undefined && (port < 1 || port > 65535))) {
      return reader.problem(at, `${quote(entry)} is not an origin (http or https://host, with a port and a leading "*." or "*" as the host allowed)`);
    }
    const scheme = parts[1]!;
    const host = parts[2]!.toLowerCase();
    // A browser leaves its scheme's default port out of Origin; either way, it is the same origin.
    const explicit = port === undefined || port === DEFAULT_PORTS[scheme] ? '' : String(port);
    if (host.includes('*')) origins.patterns.push(wildcardPattern(scheme, host, explicit));
    else if (explicit !== '') origins.exact.push(`${scheme}://${host}:${explicit}`);
    else origins.exact.push(`${scheme}://${host}`, `${scheme}://${host}:${DEFAULT_PORTS[scheme]}`);
  });
  return origins;
}

/** A list that is `*` alone or names that pass `check`. */
function wildcardOr(reader: FieldReader, value: unknown, field: string, check: (entry: unknown, at: string) => string | undefined): string[] {
  const listed = reader.list(value, field);
  const read: string[] = [];
  listed.forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (entry !== '*') {
      const checked = check(entry, at);
      if (checked !== undefined && !read.includes(checked)) read.push(checked);
    } else if (listed.length > 1) reader.problem(at, '"*" cannot be listed beside other values');
    else read.push('*');
  });
  return read;
}

export function readCorsFilter(reader: FieldReader, value: Fields | undefined, field: string): Cors | undefined {
  if (value === undefined) {
    reader.problem(field, 'is missing');
    return undefined;
  }
  const origins = readOrigins(reader, value['allowOrigins'], `${field}.allowOrigins`);
  const allowMethods = wildcardOr(reader, value['allowMethods'], `${field}.allowMethods`, (method, at) => {
    if (typeof method === 'string' && METHODS.includes(method)) return method;
    reader.problem(at, `${quote(method)} is not one of ${METHODS.join(', ')} or "*"`);
    return undefined;
  });
  const headerName = (name: unknown, at: string) => reader.take(checkHeaderName(name), at)?.toLowerCase();
  const allowHeaders = wildcardOr(reader, value['allowHeaders'], `${field}.allowHeaders`, headerName);
  const exposeHeaders = wildcardOr(reader, value['exposeHeaders'], `${field}.exposeHeaders`, headerName);
  let allowCredentials = false;
  if (!absent(value['allowCredentials'])) {
    if (typeof value['allowCredentials'] === 'boolean') allowCredentials = value['allowCredentials'];
    else reader.problem(`${field}.allowCredentials`, `${quote(value['allowCredentials'])} is not true or false`);
  }
  const maxAge = absent(value['maxAge']) ? 5 : reader.integer(value['maxAge'], `${field}.maxAge`, 1, 2 ** 31 - 1);
  return {
    allowOrigins: origins.exact,
    ...(origins.patterns.length > 0 ? { allowOriginPatterns: origins.patterns } : {}),
    allowMethods,
    allowHeaders,
    ...(exposeHeaders.length > 0 ? { exposeHeaders } : {}),
    allowCredentials,
    ...(allowCredentials ? { echoWildcards: true as const } : {}),
    ...(maxAge === undefined ? {} : { maxAge }),
    respondToPreflight: true,
  };
}
