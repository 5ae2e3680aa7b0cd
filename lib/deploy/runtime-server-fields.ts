import { ADD_SERVER_OPTIONS } from '../haproxy/plan-servers.ts';
import type { ServerSpec } from '../haproxy/plan-types.ts';

/**
 * A server line's options as the fields of the Data Plane API's
 * runtime_add_server body, which the API turns back into `add server`
 * keywords (dataplaneapi handlers/runtime_server.go,
 * SerializeRuntimeAddServer, v3.3): a server added at runtime gets every
 * option of its line (TLS, ALPN, proto, maxconn, check interval...), as a
 * reload would give it. Weight and state are set apart (see
 * dataplane-target.ts). The keywords are those plan-servers.ts lets `add
 * server` take; one the API cannot carry is refused rather than dropped.
 */

/** Flags whose field is not the keyword with `_` and "enabled". */
const FLAG_FIELDS: ReadonlyMap<string, readonly [string, unknown]> = new Map<string, readonly [string, unknown]>([
  ['allow-0rtt', ['allow_0rtt', true]],
  ['no-ssl-reuse', ['ssl_reuse', 'disabled']],
  ['no-tls-tickets', ['tls_tickets', 'disabled']],
]);

/** Keywords whose field is named otherwise. */
const RENAMED: ReadonlyMap<string, string> = new Map([
  ['ca-file', 'ssl_cafile'],
  ['crt', 'ssl_certificate'],
  ['addr', 'health_check_address'],
  ['port', 'health_check_port'],
]);

/** Keywords whose value the API takes as an integer (times in milliseconds). */
const INTEGERS: ReadonlySet<string> = new Set([
  'downinter',
  'error-limit',
  'fall',
  'fastinter',
  'inter',
  'maxconn',
  'maxqueue',
  'minconn',
  'pool-low-conn',
  'pool-max-conn',
  'pool-purge-delay',
  'port',
  'rise',
  'slowstart',
]);

/** Set apart (weight, state), or not carried: the API writes `npn` as "npm". */
const SET_APART: ReadonlySet<string> = new Set(['weight', 'enabled', 'disabled']);
const NOT_CARRIED: ReadonlySet<string> = new Set(['npn']);

const UNITS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** HAProxy's time values on a server line default to milliseconds; the API takes integers of milliseconds. */
function integerValue(keyword: string, value: string): number {
  const match = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (match === null) throw new Error(`server option "${keyword} ${value}" is not an integer the Data Plane API can carry`);
  return Math.ceil(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
}

/** The body fields for a server's options other than weight and state; throws on one the API cannot carry. */
export function runtimeServerFields(server: ServerSpec): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const options = server.options;
  for (let index = 0; index < options.length; index++) {
    const keyword = options[index]!;
    const arity = ADD_SERVER_OPTIONS.get(keyword);
    const value = arity === 1 ? options[++index] : undefined;
    if (SET_APART.has(keyword)) continue;
    if (arity === undefined || NOT_CARRIED.has(keyword) || (arity === 1 && value === undefined)) {
      throw new Error(`server ${server.name}: option "${keyword}" cannot be sent through the Data Plane API's runtime_add_server`);
    }
    if (arity === 0) {
      const [field, on] = FLAG_FIELDS.get(keyword) ?? [keyword.replaceAll('-', '_'), 'enabled'];
      fields[field] = on;
      continue;
    }
    const field = RENAMED.get(keyword) ?? keyword.replaceAll('-', '_');
    fields[field] = keyword === 'proxy-v2-options' ? value!.split(',') : INTEGERS.has(keyword) ? integerValue(keyword, value!) : value;
  }
  return fields;
}
