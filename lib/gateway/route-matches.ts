import { isFields } from '../object-fields/fields.ts';
import { checkPath, quote, type Checked } from '../object-fields/names.ts';
import { compareCodeUnits } from '../compare.ts';
import type { PathMatch, ValueMatch } from '../routing/route.ts';
import { absent, type FieldReader } from './field-reader.ts';
import { checkHeaderName, checkMatchValue, checkRegex } from './values.ts';

/**
 * An HTTPRoute match (apis/v1/httproute_types.go HTTPRouteMatch): a path
 * (PathPrefix "/" when absent), headers, query parameters and a method,
 * every one of which a request must pass.
 */
export interface RouteMatch {
  readonly path: PathMatch;
  readonly headers: readonly ValueMatch[];
  readonly query: readonly ValueMatch[];
  readonly method: string | undefined;
}

export const DEFAULT_MATCH: RouteMatch = Object.freeze({ path: Object.freeze({ kind: 'prefix', value: '/' }), headers: [], query: [], method: undefined });

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;

/**
 * A PathPrefix or Exact path: what names.ts allows, and none of what the
 * specification refuses in one (`//`, `/./`, `/../`, an encoded '/').
 */
function checkGatewayPath(value: unknown): Checked<string> {
  const checked = checkPath(value);
  if (!checked.ok) return checked;
  const path = checked.value;
  if (path.includes('//') || path.includes('/./') || path.includes('/../') || path.endsWith('/..') || path.endsWith('/.') || /%2f/i.test(path)) {
    return { ok: false, reason: `${quote(path)} has '//', '/./', '/../', a trailing '/.' or '/..', or an encoded '/'` };
  }
  return checked;
}

function readPath(reader: FieldReader, value: unknown, field: string): PathMatch | undefined {
  const path = reader.fields(value, field);
  if (path === undefined) return DEFAULT_MATCH.path;
  const type = reader.oneOf(path['type'], `${field}.type`, ['Exact', 'PathPrefix', 'RegularExpression'], 'PathPrefix');
  const raw = path['value'] ?? '/';
  if (type === 'RegularExpression') {
    const regex = reader.take(checkRegex(raw), `${field}.value`);
    return regex === undefined ? undefined : { kind: 'regex', value: regex };
  }
  const checked = reader.take(checkGatewayPath(raw), `${field}.value`);
  if (checked === undefined || type === undefined) return undefined;
  if (type === 'Exact') return { kind: 'exact', value: checked };
  // A trailing '/' of a prefix is ignored: "/a/" and "/a" match the same requests.
  const trimmed = checked.replace(/\/+$/, '');
  return { kind: 'prefix', value: trimmed === '' ? '/' : trimmed };
}

/** Header (`lowercase` names) or query parameter matches, sorted by name; a name twice is refused. */
export function readValueMatches(reader: FieldReader, value: unknown, field: string, lowercase: boolean): ValueMatch[] | undefined {
  const matches: ValueMatch[] = [];
  const before = reader.problems.length;
  reader.list(value, field).forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const kind = reader.oneOf(entry['type'], `${at}.type`, ['Exact', 'RegularExpression'], 'Exact');
    const name = reader.take(checkHeaderName(entry['name']), `${at}.name`);
    const matched = reader.take(kind === 'RegularExpression' ? checkRegex(entry['value']) : checkMatchValue(entry['value']), `${at}.value`);
    if (kind === undefined || name === undefined || matched === undefined) return;
    const key = lowercase ? name.toLowerCase() : name;
    if (matches.some((other) => other.name === key)) return reader.problem(`${at}.name`, `${quote(name)} is matched twice`);
    matches.push({ name: key, kind: kind === 'Exact' ? 'exact' : 'regex', value: matched });
  });
  return reader.problems.length > before ? undefined : matches.sort((a, b) => compareCodeUnits(a.name, b.name));
}

/** One match; undefined, with the problems recorded, when any part fails its check. */
export function readMatch(reader: FieldReader, value: unknown, field: string): RouteMatch | undefined {
  if (!isFields(value)) {
    reader.problem(field, 'is not an object');
    return undefined;
  }
  const path = readPath(reader, value['path'], `${field}.path`);
  const headers = readValueMatches(reader, value['headers'], `${field}.headers`, true);
  const query = readValueMatches(reader, value['queryParams'], `${field}.queryParams`, false);
  const method = value['method'] === undefined || value['method'] === null ? undefined : reader.oneOf(value['method'], `${field}.method`, METHODS, 'GET');
  if (path === undefined || headers === undefined || query === undefined || (!absent(value['method']) && method === undefined)) return undefined;
  return { path, headers, query, method };
}
