import type { BackendSettings } from '../routing/settings.ts';
import { parseHeaderName } from './text-values.ts';
import { accept, refuse, type Parsed } from './values.ts';

export type Balance = NonNullable<BackendSettings['balance']>;

/** A balance read: the algorithm, or why a recognised value is not supported (the backend keeps roundrobin). */
export type BalanceRead = { readonly balance: Balance } | { readonly unsupported: string };

const PARAMETER = /^[A-Za-z0-9_.-]{1,128}$/;
const HAPROXY_PLAIN = new Set(['roundrobin', 'leastconn', 'source', 'first', 'uri']);
const HAPROXY_OTHERS = new Set(['static-rr', 'random', 'rdp-cookie', 'hash']);

/**
 * haproxy.org/load-balance: an HAProxy `balance` line. The algorithms of
 * the settings vocabulary are taken (with hdr(name) and url_param name);
 * other HAProxy algorithms and options are recognised and reported
 * unsupported rather than refused, since the backend still works. Header
 * names are lowercased (HAProxy matches them case-insensitively), so both
 * families read the same.
 */
export function parseHaproxyBalance(value: string): Parsed<BalanceRead> {
  const tokens = value.trim().split(/\s+/);
  const [first = '', ...rest] = tokens;
  const header = /^hdr\((.*)\)$/.exec(first);
  const algorithm = header === null ? first : 'hdr';
  const unsupported = (what: string): Parsed<BalanceRead> => accept({ unsupported: `${what} is not supported: the backend balances roundrobin` });
  if (HAPROXY_PLAIN.has(algorithm)) {
    return rest.length === 0 ? accept({ balance: { algorithm: algorithm as 'roundrobin' } }) : unsupported(`"${algorithm}" with options`);
  }
  if (algorithm === 'hdr') {
    const name = parseHeaderName(header![1]!);
    if (!name.ok) return refuse(`not a balance algorithm: hdr(...): ${name.reason}`);
    return rest.length === 0 ? accept({ balance: { algorithm: 'hdr', header: name.value.toLowerCase() } }) : unsupported('"hdr" with options');
  }
  if (algorithm === 'url_param') {
    if (rest.length === 0 || !PARAMETER.test(rest[0]!)) return refuse('not a balance algorithm: url_param needs a parameter name (letters, digits, "-", "_", ".")');
    return rest.length === 1 ? accept({ balance: { algorithm: 'url_param', parameter: rest[0]! } }) : unsupported('"url_param" with options');
  }
  if (HAPROXY_OTHERS.has(algorithm.replace(/\(.*$/, ''))) return unsupported(`"${algorithm}"`);
  return refuse('not a balance algorithm: use roundrobin, leastconn, source, first, uri, hdr(name) or url_param name');
}

/**
 * nginx.ingress.kubernetes.io/load-balance. round_robin is roundrobin;
 * ewma (least latency-weighted load) is read as leastconn, HAProxy's
 * nearest; the hashing and sticky values are what upstream-hash-by and
 * affinity set, so alone they are reported unsupported.
 */
export function parseNginxBalance(value: string): Parsed<BalanceRead> {
  switch (value.toLowerCase()) {
    case 'round_robin':
      return accept({ balance: { algorithm: 'roundrobin' } });
    case 'ewma':
      return accept({ balance: { algorithm: 'leastconn' } });
    case 'chash':
    case 'chashsubset':
    case 'sticky_balanced':
    case 'sticky_persistent':
      return accept({ unsupported: `"${value}" is not supported on its own: use upstream-hash-by or affinity` });
    default:
      return refuse('not a balance algorithm: use round_robin or ewma');
  }
}

/**
 * nginx.ingress.kubernetes.io/upstream-hash-by: an nginx variable to hash
 * on, read as the HAProxy algorithm hashing the same thing ($remote_addr:
 * source, $request_uri or $uri: uri, $http_NAME: hdr(NAME), $arg_NAME:
 * url_param NAME). Combinations of variables have no HAProxy equivalent.
 */
export function parseUpstreamHashBy(value: string): Parsed<BalanceRead> {
  if (value === '$remote_addr' || value === '$binary_remote_addr') return accept({ balance: { algorithm: 'source' } });
  if (value === '$request_uri' || value === '$uri') return accept({ balance: { algorithm: 'uri' } });
  const header = /^\$http_([a-z0-9_]{1,128})$/.exec(value);
  // nginx spells a header's dashes as underscores in $http_ variables.
  if (header !== null) return accept({ balance: { algorithm: 'hdr', header: header[1]!.replaceAll('_', '-') } });
  const parameter = /^\$arg_([A-Za-z0-9_]{1,128})$/.exec(value);
  if (parameter !== null) return accept({ balance: { algorithm: 'url_param', parameter: parameter[1]! } });
  if (/^[A-Za-z0-9_$]+$/.test(value))
    return accept({
      unsupported: `hashing on ${JSON.stringify(value)} has no HAProxy equivalent (supported: $remote_addr, $request_uri, $uri, $http_NAME, $arg_NAME): the backend balances roundrobin`,
    });
  return refuse('not an nginx variable: use one of $remote_addr, $request_uri, $uri, $http_NAME, $arg_NAME');
}
