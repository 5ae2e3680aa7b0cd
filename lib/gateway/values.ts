import { quote, type Checked } from '../object-fields/names.ts';
import { unsafeWordReason } from '../escape.ts';

/**
 * Checks of the Gateway API values that reach HAProxy beyond names, hosts
 * and paths (lib/object-fields/names.ts has those): header and query parameter
 * names, header values, match values and regular expressions, durations.
 * Each is an allow-list, so a value that passes cannot end its line, start a
 * comment or break out of the quotes or word it is written in.
 */

const MAX_VALUE = 1024;

/** RFC 7230 token characters that are also a safe word (lib/escape.ts), not leading with '-' or '!'. */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9!&*+\-._~]{0,255}$/;

/** A header or query parameter name. */
export function checkHeaderName(value: unknown): Checked<string> {
  if (typeof value === 'string' && HEADER_NAME.test(value)) return { ok: true, value };
  return { ok: false, reason: `${quote(value)} is not a header name (1-256 of A-Z a-z 0-9 ! & * + - . _ ~, starting with a letter or digit)` };
}

/**
 * A header value HAProxy writes in a double-quoted log-format string:
 * printable ASCII, without the quote and backslash that would end or escape
 * the string and the '$' that starts an environment variable inside one.
 * '%' is kept: templates double it (lib/routing/settings.ts HeaderAction).
 */
export function checkHeaderValue(value: unknown): Checked<string> {
  if (typeof value !== 'string') return { ok: false, reason: `must be a string, not ${quote(value)}` };
  if (value.length > MAX_VALUE) return { ok: false, reason: `is longer than ${MAX_VALUE} characters` };
  const bad = /[^\x20-\x7e]|["\\$]/.exec(value);
  if (bad) return { ok: false, reason: `${quote(value)} contains ${quote(bad[0])}, which a header value written into HAProxy may not` };
  return { ok: true, value };
}

/** A value matched whole (header, query parameter): one safe word, so it is one key or one pattern. */
export function checkMatchValue(value: unknown): Checked<string> {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: `${quote(value)} is not a non-empty string` };
  const reason = unsafeWordReason(value);
  return reason === undefined ? { ok: true, value } : { ok: false, reason: `${quote(value)} ${reason}` };
}

/**
 * A regular expression (path, header and query parameter matches), which
 * templates write single-quoted: printable ASCII without space and quotes,
 * and it must compile. HAProxy's PCRE accepts what JavaScript's engine does
 * for the expressions people write for routing; one it refuses fails
 * validation, naming its line.
 */
export function checkRegex(value: unknown): Checked<string> {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: `${quote(value)} is not a non-empty string` };
  if (value.length > MAX_VALUE) return { ok: false, reason: `is longer than ${MAX_VALUE} characters` };
  const bad = /[^\x21-\x7e]|["']/.exec(value);
  if (bad) return { ok: false, reason: `${quote(value)} contains ${quote(bad[0])}, which a regular expression written into HAProxy may not (write a space as \\x20)` };
  try {
    RegExp(value);
  } catch {
    return { ok: false, reason: `${quote(value)} is not a regular expression` };
  }
  return { ok: true, value };
}

const DURATION = /^(?:[0-9]{1,5}(?:h|m|s|ms)){1,4}$/;
const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** A Gateway API Duration (GEP-2257: `1h`, `10s`, `500ms`, `1m30s`) in milliseconds; 0 means no limit. */
export function checkDuration(value: unknown): Checked<number> {
  if (typeof value !== 'string' || !DURATION.test(value)) {
    return { ok: false, reason: `${quote(value)} is not a duration (1 to 4 of a number of 1-5 digits and h, m, s or ms, like 1m30s)` };
  }
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return { ok: true, value: total };
}
