/**
 * HTTP Basic authentication as DPAPI 3.2 (go-swagger) does it (§1): every
 * known endpoint needs it; 401 carries `WWW-Authenticate: Basic realm="API"`.
 */
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from './http-kit.ts';

export interface Credentials {
  readonly user: string;
  readonly password: string;
}

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="API"' };

/**
 * Undefined when the request may pass, else the 401 to answer. Messages (§1):
 * no or unreadable header → `missing`: go-openapi's "unauthenticated for
 * invalid credentials" (3.4 says "missing or invalid authorization"); wrong user or
 * password → "unauthorized"; no user configured → "no configured users".
 */
export function authenticate(header: string | undefined, users: readonly Credentials[], missing = 'unauthenticated for invalid credentials'): ApiError | undefined {
  if (users.length === 0) return new ApiError(401, 'no configured users', { headers: CHALLENGE });
  const match = /^Basic\s+(\S+)\s*$/i.exec(header ?? '');
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
  const colon = decoded?.indexOf(':') ?? -1;
  if (decoded === undefined || colon < 0) {
    return new ApiError(401, missing, { headers: CHALLENGE });
  }
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const known = users.some((entry) => same(entry.user, user) && same(entry.password, password));
  return known ? undefined : new ApiError(401, 'unauthorized', { headers: CHALLENGE });
}

function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
