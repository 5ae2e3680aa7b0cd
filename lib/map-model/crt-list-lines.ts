import { compareCodeUnits } from '../compare.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';
import { parentOf } from './host-ownership.ts';
import type { Certificate } from './types.ts';

/**
 * HAProxy 2.6 reads a crt-list line into a 64 KiB buffer ("line too long")
 * and takes at most 2048 words on it ("too many args"), the file name and
 * `[options]` included; a longer line fails the whole configuration. Lines
 * are kept well inside both, leaving room for the file's path.
 */
const CRT_LINE_FILTERS = 1000;
const CRT_LINE_CHARACTERS = 32_768;

/** The SNI names split over crt-list lines, each line repeating the negative filters; undefined when those alone do not fit. */
export function crtListLines(hosts: readonly string[], excludedHosts: readonly string[]): (readonly string[])[] | undefined {
  const excludedLength = excludedHosts.reduce((total, host) => total + host.length + 2, 0);
  if (excludedHosts.length > CRT_LINE_FILTERS / 2 || excludedLength > CRT_LINE_CHARACTERS / 2) return undefined;
  const lines: string[][] = [];
  let line: string[] = [];
  let length = excludedLength;
  for (const host of hosts) {
    if (line.length > 0 && (line.length + excludedHosts.length >= CRT_LINE_FILTERS || length + host.length + 1 > CRT_LINE_CHARACTERS)) {
      lines.push(line);
      line = [];
      length = excludedLength;
    }
    line.push(host);
    length += host.length + 1;
  }
  lines.push(line);
  return lines;
}

/**
 * The fallback certificate's own line names no SNI name of its own: a line
 * without filters would serve the certificate for every name it holds (a
 * name another tenant holds too, src/ssl_sock.c ckch_inst_new_load_store
 * reads the certificate's names only when a line gives no filter), so it
 * gives one negative filter under .invalid (RFC 2606), which no lookup
 * takes. Being the first line of the crt-list, it is the bind's default
 * certificate, which HAProxy serves without strict-sni for a name no line
 * lists (src/ssl_sock.c ssl_sock_switchctx_cbk).
 */
export const FALLBACK_FILTER = 'fallback-certificate.invalid';

/** Whether some line other than the fallback's serves `host`: listed, or under a wildcard that does not exclude it. */
function listed(certificates: readonly Certificate[], host: string): boolean {
  const parent = parentOf(host);
  return certificates.some(
    (certificate) =>
      certificate.fallback !== true && (certificate.hosts.includes(host) || (parent !== undefined && certificate.hosts.includes(`*.${parent}`) && !certificate.excludedHosts.includes(host))),
  );
}

/**
 * The crt-list lines with a fallback certificate first, and after them the
 * lines that refuse the hosts other groups hold (`held`) that no line
 * lists: without strict-sni those would get the fallback certificate, one
 * tenant's certificate for another's name. A refusing line allows TLS 1.0
 * alone, which HAProxy's OpenSSL (security level 2) never negotiates, so
 * its handshakes fail as strict-sni's would (HAProxy applies a line's
 * ssl-min-ver and ssl-max-ver when it picks it, src/ssl_sock.c
 * ssl_sock_switchctx_cbk). Without a fallback, the lines as they are.
 */
export function withFallback(certificates: readonly Certificate[], held: readonly string[]): readonly Certificate[] {
  const fallback = certificates.find((certificate) => certificate.fallback === true);
  if (fallback === undefined) return certificates;
  const refused = held.filter((host) => !listed(certificates, host)).sort(compareCodeUnits);
  const lines = refused.length === 0 ? [] : (crtListLines(refused, []) ?? []);
  const source = sourceOf(fallback)!;
  const refusing = lines.map((hosts) => Object.freeze(withSource({ file: fallback.file, pem: fallback.pem, hosts, excludedHosts: [], secret: fallback.secret, refuses: true }, source)));
  return [fallback, ...certificates.filter((certificate) => certificate !== fallback), ...refusing];
}
