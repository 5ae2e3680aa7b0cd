import type { Milliseconds, RedirectCode } from '../routing/settings.ts';

/**
 * The value formats annotations are written in, each parsed strictly into a
 * typed value or a precise reason. A reason names what was expected, so a
 * Problem or a migration report line says how to fix the value.
 */

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export const accept = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const refuse = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

/** Go's strconv.ParseBool, which both controllers use for their boolean annotations. */
const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

export function parseBoolean(value: string): Parsed<boolean> {
  if (TRUE.has(value)) return accept(true);
  if (FALSE.has(value)) return accept(false);
  return refuse('not a boolean: use "true" or "false"');
}

/** The longest timeout HAProxy takes: its timers are signed 32-bit milliseconds. */
export const MAX_MILLISECONDS = 2_147_483_647;

const DURATION = /^(\d{1,12})(ms|s|m|h|d)?$/;
const UNIT: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * haproxy.org's time format: a whole number with a unit (ms, s, m for
 * minutes, h, d); no unit means milliseconds, as in HAProxy itself. Zero is
 * refused: HAProxy reads a zero timeout as none at all.
 */
export function parseDuration(value: string): Parsed<Milliseconds> {
  const match = DURATION.exec(value);
  if (match === null) return refuse('not a duration: use a whole number with a unit ms, s, m, h or d (no unit means milliseconds), e.g. "30s"');
  return inTimerRange(Number(match[1]) * UNIT[match[2] ?? 'ms']!);
}

/** ingress-nginx's timeouts: a whole number of seconds, no unit. */
export function parseSeconds(value: string): Parsed<Milliseconds> {
  if (!/^\d{1,10}$/.test(value)) return refuse('not a number of seconds: use a whole number without a unit, e.g. "60"');
  return inTimerRange(Number(value) * 1000);
}

function inTimerRange(milliseconds: number): Parsed<Milliseconds> {
  if (milliseconds === 0) return refuse('must be more than 0 (HAProxy reads a zero timeout as no timeout)');
  if (milliseconds > MAX_MILLISECONDS) return refuse(`is longer than HAProxy's longest timeout, ${MAX_MILLISECONDS} ms (about 24.8 days)`);
  return accept(milliseconds);
}

/** A whole decimal number within [min, max]. */
export function parseInteger(value: string, min: number, max: number): Parsed<number> {
  if (!/^\d{1,15}$/.test(value)) return refuse(`not a whole number: use digits only, from ${min} to ${max}`);
  const number = Number(value);
  if (number < min || number > max) return refuse(`is out of range: use a number from ${min} to ${max}`);
  return accept(number);
}

const REDIRECT_CODES: readonly RedirectCode[] = [301, 302, 303, 307, 308];

export function parseRedirectCode(value: string): Parsed<RedirectCode> {
  const code = REDIRECT_CODES.find((candidate) => String(candidate) === value);
  return code === undefined ? refuse('not a status code HAProxy can redirect with: use 301, 302, 303, 307 or 308') : accept(code);
}

/**
 * A status code HAProxy can answer a denied request with (`http-request
 * deny deny_status`): the codes it has built-in error pages for.
 */
const DENY_CODES = [200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504];

export function parseDenyStatus(value: string): Parsed<number> {
  const code = DENY_CODES.find((candidate) => String(candidate) === value);
  return code === undefined ? refuse(`not a status code HAProxy can deny with: use one of ${DENY_CODES.join(', ')}`) : accept(code);
}

const SIZE = /^(\d{1,15})([bkmg]?)$/i;
const SIZE_UNIT: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * ingress-nginx's size format: a whole number with an optional unit b, k,
 * m or g (case-insensitive, powers of 1024). Zero means no limit.
 */
export function parseSize(value: string): Parsed<number> {
  const match = SIZE.exec(value);
  if (match === null) return refuse('not a size: use a whole number with an optional unit k, m or g, e.g. "8m"');
  const bytes = Number(match[1]) * SIZE_UNIT[match[2]!.toLowerCase()]!;
  return bytes > Number.MAX_SAFE_INTEGER ? refuse('is too large') : accept(bytes);
}

/** A comma-separated list, items trimmed; an empty item is refused (a stray comma is usually a typo). */
export function parseList<T>(value: string, item: (text: string) => Parsed<T>): Parsed<T[]> {
  const items: T[] = [];
  for (const text of value.split(',').map((part) => part.trim())) {
    if (text === '') return refuse('has an empty item: separate items with single commas');
    const parsed = item(text);
    if (!parsed.ok) return parsed;
    items.push(parsed.value);
  }
  return accept(items);
}
