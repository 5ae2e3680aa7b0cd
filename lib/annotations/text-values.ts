import { unsafeWordReason } from '../escape.ts';
import type { SecretRef } from '../routing/settings.ts';
import { accept, refuse, type Parsed } from './values.ts';

/**
 * Text from annotations that reaches the configuration. Words (paths, host
 * names, URLs, cookie and header names) must be safe words
 * (lib/escape.ts) and, where a format is known, match it. Free text
 * (header values, realms) has its own, strict check: see `parseFreeText`.
 */

function word(value: string, what: string): Parsed<string> {
  if (value === '') return refuse(`is empty: expected ${what}`);
  const unsafe = unsafeWordReason(value);
  return unsafe === undefined ? accept(value) : refuse(`not ${what}: ${unsafe}`);
}

/** A path: starts with "/", one safe word. */
export function parsePath(value: string): Parsed<string> {
  if (!value.startsWith('/')) return refuse('not a path: it must start with "/"');
  return word(value, 'a path');
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host name (lowercase RFC 1123), optionally with ":port". */
export function parseHost(value: string): Parsed<string> {
  const match = /^([^:]*)(?::(\d{1,5}))?$/.exec(value);
  if (match === null || !DNS_SUBDOMAIN.test(match[1]!)) return refuse('not a host name: use lowercase letters, digits, "-" and ".", optionally with ":port"');
  if (match[2] !== undefined && (Number(match[2]) < 1 || Number(match[2]) > 65535)) return refuse('not a host name: the port must be 1 to 65535');
  return accept(value);
}

/** An absolute http(s) URL, one safe word (so no space, quote, "#" or "%"). */
export function parseUrl(value: string): Parsed<string> {
  if (!/^https?:\/\/[^/?]+/.test(value)) return refuse('not a URL: use an absolute http:// or https:// URL');
  return word(value, 'a URL');
}

/** HTTP token characters that are also safe words: enough for every registered header and cookie name. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function parseHeaderName(value: string): Parsed<string> {
  return NAME.test(value) ? accept(value) : refuse('not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit');
}

export function parseCookieName(value: string): Parsed<string> {
  return NAME.test(value) ? accept(value) : refuse('not a cookie name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit');
}

/** Longest free text admitted: far below HAProxy's line length, with room for the directive around it. */
export const MAX_FREE_TEXT = 512;

/**
 * Free text written inside a double-quoted HAProxy string (a header value,
 * a realm). Admitted: printable ASCII (space to "~") except `"` (ends the
 * string), `\` (escapes), `$` (environment expansion inside double quotes)
 * and `%` (log-format variables, `%[` sample fetches); no leading or
 * trailing space (HTTP trims it); at most 512 characters. So the text stays
 * one argument of its own directive: it cannot end the line, start a
 * comment ('#' is literal inside quotes) or reach a variable.
 */
export function parseFreeText(value: string): Parsed<string> {
  if (value.length > MAX_FREE_TEXT) return refuse(`is longer than ${MAX_FREE_TEXT} characters`);
  for (const character of value) {
    const code = character.codePointAt(0)!;
    if (code < 0x20 || code > 0x7e)
      return refuse(
        `contains ${code > 0xffff || code < 0x20 || code >= 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(character)}: only printable ASCII is admitted`,
      );
    if (character === '"' || character === '\\' || character === '$' || character === '%')
      return refuse(`contains ${JSON.stringify(character)}, which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)`);
  }
  if (value !== value.trim()) return refuse('starts or ends with a space');
  return accept(value);
}

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A Secret named as "name" (in the object's own namespace) or
 * "namespace/name". Kubernetes names are safe words already, but an
 * annotation is not checked by the API server, so they are checked here.
 */
export function parseSecretRef(value: string, ownNamespace: string): Parsed<SecretRef> {
  const parts = value.split('/');
  const [namespace, name] = parts.length === 2 ? [parts[0]!, parts[1]!] : [ownNamespace, parts[0]!];
  // Never guessed: a reader that was not told the object's namespace refuses rather than look in the wrong one.
  if (parts.length === 1 && ownNamespace === '') return refuse('names no namespace, and the object\'s own is unknown here: write "namespace/name"');
  if (parts.length > 2 || !DNS_SUBDOMAIN.test(name) || (parts.length === 2 && !DNS_LABEL.test(namespace)))
    return refuse('not a Secret reference: use "name" or "namespace/name" (lowercase Kubernetes names)');
  return accept({ namespace, name });
}

/** Printable ASCII that single quotes keep literal in HAProxy: no space, quote, backquote or "%". */
const QUOTABLE = /^[\x21-\x7e]+$/;
const UNQUOTABLE = /['"`%]/;

function quotable(value: string, what: string): Parsed<string> {
  if (value.length > MAX_FREE_TEXT) return refuse(`not ${what}: it is longer than ${MAX_FREE_TEXT} characters`);
  if (!QUOTABLE.test(value)) return refuse(`not ${what}: use printable ASCII without spaces`);
  const character = UNQUOTABLE.exec(value);
  return character === null ? accept(value) : refuse(`not ${what}: it contains ${JSON.stringify(character[0])} (admitted: printable ASCII without space, ' " \` %)`);
}

/**
 * A regular expression HAProxy matches (PCRE): quotable (see the settings'
 * rewrite) and compiling as a JavaScript regular expression, which covers
 * the syntax the two share; one that JavaScript refuses is refused here too.
 */
export function parseRegex(value: string): Parsed<string> {
  const text = quotable(value, 'a regular expression');
  if (!text.ok) return text;
  try {
    RegExp(value);
  } catch (error) {
    // V8 says "Invalid regular expression: /<pattern>/: <cause>"; the pattern is the annotation's value, shown elsewhere.
    const message = (error as Error).message;
    return refuse(`not a regular expression: ${message.slice(message.lastIndexOf(': ') + 2)}`);
  }
  return accept(value);
}

/** A replacement for a regular expression's match, captures written \1..\9. */
export function parseReplacement(value: string): Parsed<string> {
  return quotable(value, 'a replacement');
}
