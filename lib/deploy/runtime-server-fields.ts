import type { ServerSpec } from '../haproxy/plan-types.ts';

/**
 * A server line's options as the fields of the Data Plane API's
 * runtime_add_server body, which the API turns back into `add server`
 * keywords (dataplaneapi handlers/runtime_server.go,
 * SerializeRuntimeAddServer, v3.3): a server added at runtime gets every
 * option of its line (TLS, ALPN, proto, maxconn, check interval...), as a
 * reload would give it. Weight and state are set apart (see
 * dataplane-target.ts). The keywords are those plan-servers.ts lets `add
 * server` take; one the API cannot carry (`npn`: the API writes it as
 * "npm") is refused rather than dropped.
 */

const FLAGS: ReadonlyMap<string, readonly [string, unknown]> = new Map([
  ...['backup', 'check', 'check-send-proxy', 'check-ssl', 'check-via-socks4', 'ssl', 'tfo', 'tls-tickets', 'send-proxy', 'send-proxy-v2', 'send-proxy-v2-ssl', 'send-proxy-v2-ssl-cn']
    .concat(['force-sslv3', 'force-tlsv10', 'force-tlsv11', 'force-tlsv12', 'force-tlsv13', 'no-sslv3', 'no-tlsv10', 'no-tlsv11', 'no-tlsv12', 'no-tlsv13'])
    .map((keyword): [string, readonly [string, unknown]] => [keyword, [keyword.replaceAll('-', '_'), 'enabled']]),
  ['allow-0rtt', ['allow_0rtt', true]],
  ['no-ssl-reuse', ['ssl_reuse', 'disabled']],
  ['no-tls-tickets', ['tls_tickets', 'disabled']],
]);

/** Keywords with a value, by field; the API names some fields otherwise than their keyword. */
const RENAMED: ReadonlyMap<string, string> = new Map([
  ['ca-file', 'ssl_cafile'],
  ['crt', 'ssl_certificate'],
  ['addr', 'health_check_address'],
  ['port', 'health_check_port'],
]);
const STRINGS: ReadonlySet<string> = new Set([
  'addr',
  'alpn',
  'ca-file',
  'check-alpn',
  'check-proto',
  'check-sni',
  'ciphers',
  'ciphersuites',
  'crl-file',
  'crt',
  'observe',
  'on-error',
  'on-marked-down',
  'on-marked-up',
  'proto',
  'proxy-v2-options',
  'sni',
  'ssl-max-ver',
  'ssl-min-ver',
  'verify',
  'verifyhost',
  'ws',
]);
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

/** HAProxy's time values on a server line default to milliseconds; the API takes integers of milliseconds. */
function integerValue(keyword: string, value: string): number {
  const match = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (match === null) throw new Error(`server option "${keyword} ${value}" is not an integer the Data Plane API can carry`);
  const scale: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  return Math.ceil(Number(match[1]) * scale[match[2] ?? 'ms']!);
}

/** The body fields for a server's options other than weight and state; throws on one the API cannot carry. */
export function runtimeServerFields(server: ServerSpec): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const options = server.options;
  for (let index = 0; index < options.length; index++) {
    const keyword = options[index]!;
    if (keyword === 'enabled' || keyword === 'disabled') continue;
    if (keyword === 'weight') {
      index++;
      continue;
    }
    const flag = FLAGS.get(keyword);
    if (flag !== undefined) {
      fields[flag[0]] = flag[1];
      continue;
    }
    const value = options[index + 1];
    const field = RENAMED.get(keyword) ?? keyword.replaceAll('-', '_');
    if (value === undefined || (!STRINGS.has(keyword) && !INTEGERS.has(keyword))) {
      throw new Error(`server ${server.name}: option "${keyword}" cannot be sent through the Data Plane API's runtime_add_server`);
    }
    index++;
    fields[field] = keyword === 'proxy-v2-options' ? value.split(',') : INTEGERS.has(keyword) ? integerValue(keyword, value) : value;
  }
  return fields;
}
