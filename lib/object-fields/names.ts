import { BlockList, isIP } from 'node:net';

/**
 * Validation of every string a Kubernetes object contributes to an HAProxy
 * configuration or map file. Each check is an allow-list over printable
 * ASCII, so a value that passes cannot carry whitespace, a line break, a
 * comment ('#'), a quote, an escape, an environment expansion ('$'), a
 * sample-fetch expression ('%[') or an ACL brace: it stays one word where
 * it lands. Checks never trust the API server's own validation, because the
 * objects may come from anywhere that can write them (and a future API
 * version may relax it).
 */

/** A validated value, or why it was refused (for a Problem message). */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const accept = <T>(value: T): Checked<T> => ({ ok: true, value });
const refuse = <T>(reason: string): Checked<T> => ({ ok: false, reason });

/** RFC 1123 label, lowercase: what Kubernetes accepts for namespaces and Service names. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Longest path accepted. The renderer admits a `{{value}}` of at most 1024
 * characters (lib/escape.ts), and a route key is host (at most 253)
 * + path + '/'; the cap keeps every key within that. It also keeps lines far
 * below HAProxy's line buffers: a cut line's tail would be read as a line of
 * its own.
 */
export const MAX_PATH_LENGTH = 768;

/**
 * RFC 3986 path characters minus those that mean something in an HAProxy
 * configuration or map file, and within the renderer's safe word
 * (lib/escape.ts): unreserved (A-Z a-z 0-9 - . _ ~), the sub-delims
 * '!' '&' '*' '+' '=', ':', '@', '/', and '%' only as a complete
 * percent-encoding (so never '%[', a sample fetch). Left out: "$"
 * (environment expansion), "'" (quoting), '(' ')' ',' (converter argument
 * lists), ';'; and by construction space and every control character, '#',
 * '"', '\\', '{', '}', '?', '[', ']', '<', '>', '^', '`', '|' and all
 * non-ASCII.
 */
const PATH = /^\/(?:[A-Za-z0-9\-._~!&*+=:@/]|%[0-9A-Fa-f]{2})*$/;

/** IANA service name as Kubernetes validates port names (IsValidPortName). */
const PORT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,13}[a-z0-9])?$/;

/** A dotted-quad IPv4 address, each part 0-255 without leading zeros, as net.isIP accepts it. */
const IPV4_PART = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = new RegExp(`^(?:${IPV4_PART}\\.){3}${IPV4_PART}$`);

/** Only the characters of a textual IPv4 or IPv6 address: no zone index ('%eth0'), no prefix length. */
const IP_CHARACTERS = /^[0-9A-Fa-f:.]+$/;

export function isDnsLabel(value: unknown): value is string {
  return typeof value === 'string' && DNS_LABEL.test(value);
}

/** Dot-separated RFC 1123 labels. */
const DNS_SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** RFC 1123 subdomain, lowercase: what Kubernetes accepts for most object names (Secrets among them). */
export function isDnsSubdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 253 && DNS_SUBDOMAIN.test(value);
}

export function isPortName(value: unknown): value is string {
  // '--' and an all-digit name are refused as Kubernetes does: a digit-only
  // name would read as a port number, and the two must never be confused.
  return typeof value === 'string' && PORT_NAME.test(value) && !value.includes('--') && /[a-z]/.test(value);
}

export function isPortNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

export interface CheckedHost {
  readonly host: string;
  readonly wildcard: boolean;
}

/**
 * A host as Ingress rules and TLS entries give it: a DNS name, or '*.' and a
 * DNS name (the wildcard covers exactly one label). Returned lowercase, since
 * Host headers are case-insensitive. The character check runs before
 * lowercasing: String#toLowerCase maps some non-ASCII characters to ASCII
 * ('\u212A', the Kelvin sign, becomes 'k'), which must not sneak a host past it.
 */
export function checkHost(value: unknown): Checked<CheckedHost> {
  if (typeof value !== 'string') return refuse(`must be a string, not ${quote(value)}`);
  if (!/^[A-Za-z0-9.*-]+$/.test(value)) return refuse(`${quote(value)} has characters a DNS name cannot have`);
  const lower = value.toLowerCase();
  const wildcard = lower.startsWith('*.');
  const name = wildcard ? lower.slice(2) : lower;
  if (lower.length > 253) return refuse(`${quote(value)} is longer than 253 characters`);
  if (name.includes('*')) return refuse(`${quote(value)} may only have '*' as its whole first label`);
  if (!isDnsSubdomain(name)) {
    return refuse(`${quote(value)} is not a DNS name (labels of 1-63 letters, digits and '-', not starting or ending with '-')`);
  }
  return accept({ host: lower, wildcard });
}

/** A path as an Ingress gives it; see PATH for the characters allowed. */
export function checkPath(value: unknown): Checked<string> {
  if (typeof value !== 'string') return refuse(`must be a string, not ${quote(value)}`);
  if (!value.startsWith('/')) return refuse(`${quote(value)} does not start with '/'`);
  if (value.length > MAX_PATH_LENGTH) return refuse(`is longer than ${MAX_PATH_LENGTH} characters`);
  if (!PATH.test(value)) {
    return refuse(`${quote(value)} has characters outside A-Z a-z 0-9 - . _ ~ ! & * + = : @ / and %XX percent-encodings`);
  }
  return accept(value);
}

/**
 * A path read as a regular expression (nginx's use-regex): it lands as the
 * key of a map_reg line, where only whitespace ends it, so printable ASCII
 * but space, quotes, backtick, '#' (a comment) and '%'; it must compile
 * (JavaScript's syntax is close to the PCRE2 HAProxy uses for what paths
 * hold).
 */
const REGEX_PATH = /^\/[\x21-\x7e]*$/;
const REGEX_REFUSED = /["'`#%]/;

function compiles(pattern: string): boolean {
  try {
    return RegExp(pattern) instanceof RegExp;
  } catch {
    return false;
  }
}

export function checkRegexPath(value: unknown): Checked<string> {
  if (typeof value !== 'string') return refuse(`must be a string, not ${quote(value)}`);
  if (!value.startsWith('/')) return refuse(`${quote(value)} does not start with '/'`);
  if (value.length > MAX_PATH_LENGTH) return refuse(`is longer than ${MAX_PATH_LENGTH} characters`);
  if (!REGEX_PATH.test(value) || REGEX_REFUSED.test(value)) {
    return refuse(`${quote(value)} is not a path regular expression: printable ASCII without space, quotes, backtick, '#' or '%'`);
  }
  return compiles(value) ? accept(value) : refuse(`${quote(value)} is not a regular expression`);
}

/**
 * An endpoint address: a textual IPv4 or IPv6 address, IPv6 lowercased so
 * one address always gives one server name. `isIP` alone is not enough: it
 * accepts an IPv6 zone index, which may hold any characters.
 */
export function checkIpAddress(value: unknown): Checked<string> {
  const address = ipAddress(value);
  return address === undefined ? refuse(`${quote(value)} is not an IPv4 or IPv6 address`) : accept(address);
}

/** checkIpAddress without the reason: the address as it is served, or undefined. */
export function ipAddress(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Most endpoints are IPv4: a plain test settles them without isIP's match objects.
  if (IPV4.test(value)) return value;
  if (!IP_CHARACTERS.test(value) || isIP(value) === 0) return undefined;
  return value.toLowerCase();
}

/**
 * Addresses a server line must not have: nothing listens there for a
 * Service (an unspecified address means "any" to a listener, and to a
 * connecting HAProxy this host), or one packet reaches many (broadcast,
 * multicast), or it is only meaningful on one link of one node
 * (link-local, cloud metadata services among them). IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry.
 */
const unreachable: readonly { readonly reason: string; readonly ranges: BlockList }[] = [
  [
    'the unspecified address ("any")',
    [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  ],
  ['the broadcast address', [['255.255.255.255', 32, 'ipv4']]],
  [
    'a multicast address',
    [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  ],
  [
    'a link-local address',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
].map(([reason, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges as [string, number, 'ipv4' | 'ipv6'][]) list.addSubnet(network, prefix, family);
  return { reason: reason as string, ranges: list };
});

/**
 * The same ranges for a dotted-quad IPv4 address, read from its octets:
 * most endpoints are IPv4, and this runs once per endpoint of every render
 * from scratch (a BlockList lookup costs a hundred times more).
 */
function ipv4Range(address: string): number {
  const first = Number.parseInt(address, 10);
  if (first === 0) return 0;
  if (address === '255.255.255.255') return 1;
  if (first >= 224 && first <= 239) return 2;
  if (first === 169 && address.startsWith('169.254.')) return 3;
  return -1;
}

/** Why a (valid) endpoint address cannot be a server: unspecified, broadcast, multicast or link-local; undefined when it can. */
export function endpointAddressProblem(address: string): string | undefined {
  const found = address.includes(':') ? unreachable.find(({ ranges }) => ranges.check(address, 'ipv6')) : unreachable[ipv4Range(address)];
  return found && `${quote(address)} is ${found.reason}, where no Service endpoint can be`;
}

/**
 * A value shown in a Problem message: quoted, with every character outside
 * printable ASCII escaped and long values cut, so a message stays one
 * readable line however hostile the value (messages go to logs and status
 * fields, never into the configuration).
 */
export function quote(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value !== 'string') return `a ${typeof value}`;
  const shown = value.length > 80 ? `${value.slice(0, 80)}...` : value;
  const escaped = shown.replace(/[\\"]|[^\x20-\x7e]/g, (character) =>
    character === '\\' || character === '"' ? `\\${character}` : `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}

/**
 * How a Problem names an object: "Kind namespace/name". Names that are not
 * DNS subdomains are quoted, so they cannot break the message either.
 */
export function describeObject(kind: string, namespace: unknown, name: unknown): string {
  const show = (part: unknown) => (isDnsSubdomain(part) ? part : quote(part));
  return namespace === undefined || namespace === '' ? `${kind} ${show(name)}` : `${kind} ${show(namespace)}/${show(name)}`;
}
