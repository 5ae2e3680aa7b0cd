import { isIP } from 'node:net';
import { accept, parseList, refuse, type Parsed } from './values.ts';

/**
 * A source address or network as HAProxy's `src` match takes it: an IPv4
 * or IPv6 address, or one with a prefix length. Written back as given
 * (checked, not rewritten), so the report shows the user's own spelling.
 */
export function parseCidr(value: string): Parsed<string> {
  const slash = value.indexOf('/');
  const address = slash === -1 ? value : value.slice(0, slash);
  const family = isIP(address);
  // isIP admits IPv6 zone indexes ("fe80::1%eth0"); a zone means nothing to HAProxy's src and "%" starts a log-format variable.
  if (family === 0 || address.includes('%')) return refuse(`not a CIDR: ${JSON.stringify(value)} (use an IPv4 or IPv6 address, optionally with /prefix)`);
  if (slash === -1) return accept(value);
  const prefix = value.slice(slash + 1);
  const longest = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > longest) return refuse(`not a CIDR: ${JSON.stringify(value)} (the prefix length must be 0 to ${longest})`);
  return accept(value);
}

/**
 * A comma-separated list of CIDRs, as both controllers write allow- and
 * deny-lists. haproxy.org's pattern files ("patterns/...") are refused
 * rather than ignored: an allow-list dropped silently would open the route.
 */
export function parseCidrList(value: string): Parsed<string[]> {
  if (value.trim().startsWith('patterns/')) return refuse('pattern files (patterns/...) are not supported: list the addresses and CIDRs, separated by commas');
  return parseList(value, parseCidr);
}
