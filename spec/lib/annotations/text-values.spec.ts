import { expect } from 'chai';
import { parserTable } from './parser-table.ts';
import { parseCidr, parseCidrList } from '../../../lib/annotations/addresses.ts';
import { parseCookieName, parseFreeText, parseHeaderName, parseHost, parsePath, parseRegex, parseReplacement, parseSecretRef, parseUrl } from '../../../lib/annotations/text-values.ts';

const same = (values: readonly string[]): [string, string][] => values.map((value) => [value, value]);

describe('annotation text parsers', () => {
  it('parseCidr: IPv4 and IPv6 addresses, with or without a prefix, written as given', () => {
    parserTable(parseCidr, same(['10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '2001:db8::/32', '::1', 'fd00::1/128']), [
      ['10.0.0.300', 'not a CIDR: "10.0.0.300" (use an IPv4 or IPv6 address, optionally with /prefix)'],
      ['example.com', 'not a CIDR: "example.com" (use an IPv4 or IPv6 address, optionally with /prefix)'],
      ['fe80::1%eth0', 'not a CIDR: "fe80::1%eth0" (use an IPv4 or IPv6 address, optionally with /prefix)'],
      ['10.0.0.0/33', 'not a CIDR: "10.0.0.0/33" (the prefix length must be 0 to 32)'],
      ['2001:db8::/129', 'not a CIDR: "2001:db8::/129" (the prefix length must be 0 to 128)'],
      ['10.0.0.0/', 'not a CIDR: "10.0.0.0/" (the prefix length must be 0 to 32)'],
      ['10.0.0.0/8\n', 'not a CIDR: "10.0.0.0/8\\n" (the prefix length must be 0 to 32)'],
    ]);
  });

  it('parseCidrList: commas, and haproxy.org pattern files refused', () => {
    parserTable(
      parseCidrList,
      [['10.0.0.0/8, 192.168.0.1', ['10.0.0.0/8', '192.168.0.1']]],
      [
        ['patterns/ips', 'pattern files (patterns/...) are not supported: list the addresses and CIDRs, separated by commas'],
        ['10.0.0.0/8 192.168.0.1', 'not a CIDR: "10.0.0.0/8 192.168.0.1" (the prefix length must be 0 to 32)'],
        ['10.0.0.0/8,', 'has an empty item: separate items with single commas'],
      ],
    );
  });

  it('parsePath: a safe word starting with "/"', () => {
    parserTable(parsePath, same(['/', '/healthz', '/app/v1/']), [
      ['healthz', 'not a path: it must start with "/"'],
      ['/a b', 'not a path: contains " "'],
      ['/a\nbind :1', 'not a path: contains U+000A'],
      ['/a#b', 'not a path: contains "#"'],
      ['/%[src]', 'not a path: contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})'],
    ]);
  });

  it('parseHost: lowercase DNS names with an optional port', () => {
    parserTable(parseHost, same(['example.com', 'api.internal:8080', 'localhost']), [
      ['Example.com', 'not a host name: use lowercase letters, digits, "-" and ".", optionally with ":port"'],
      ['$host', 'not a host name: use lowercase letters, digits, "-" and ".", optionally with ":port"'],
      ['a b', 'not a host name: use lowercase letters, digits, "-" and ".", optionally with ":port"'],
      ['example.com:0', 'not a host name: the port must be 1 to 65535'],
      ['example.com:70000', 'not a host name: the port must be 1 to 65535'],
    ]);
  });

  it('parseUrl: absolute http(s) URLs that are safe words', () => {
    parserTable(parseUrl, same(['https://example.com', 'http://example.com:8080/a?b=c&d=e']), [
      ['example.com', 'not a URL: use an absolute http:// or https:// URL'],
      ['ftp://example.com', 'not a URL: use an absolute http:// or https:// URL'],
      ['https://example.com/a b', 'not a URL: contains " "'],
      ['https://example.com/#top', 'not a URL: contains "#"'],
    ]);
  });

  it('parseHeaderName and parseCookieName: token characters that are safe words', () => {
    parserTable(parseHeaderName, same(['X-Request-Id', 'x_custom.1']), [
      ['X Header', 'not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit'],
      ['X-Header:', 'not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit'],
      ['-X', 'not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit'],
    ]);
    parserTable(parseCookieName, same(['INGRESSCOOKIE', 'srv_id']), [['a=b', 'not a cookie name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit']]);
  });

  it('parseFreeText: printable ASCII except " \\ $ %, no outer spaces, at most 512', () => {
    parserTable(parseFreeText, same(["default-src 'self'; img-src *", 'max-age=31536000; includeSubDomains', 'Protected #1 {area}']), [
      ['a"b', 'contains "\\"", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
      ['a\\b', 'contains "\\\\", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
      ['${SECRET}', 'contains "$", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
      ['%[src]', 'contains "%", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
      ['a\nb', 'contains U+000A: only printable ASCII is admitted'],
      ['a\tb', 'contains U+0009: only printable ASCII is admitted'],
      ['caf\u00e9', 'contains U+00E9: only printable ASCII is admitted'],
      [' padded', 'starts or ends with a space'],
      ['x'.repeat(513), 'is longer than 512 characters'],
    ]);
  });

  it('parseRegex and parseReplacement: quotable in single quotes, and a regex that compiles', () => {
    parserTable(parseRegex, same(['/foo/(.*)', '^/api/v[0-9]+/(.*)$', '([^?]*)(\\?(.*))?']), [
      ['/a(b', 'not a regular expression: Unterminated group'],
      ['[z-a]', 'not a regular expression: Range out of order in character class'],
      ["/it's", 'not a regular expression: it contains "\'" (admitted: printable ASCII without space, \' " ` %)'],
      ['/a%20b', 'not a regular expression: it contains "%" (admitted: printable ASCII without space, \' " ` %)'],
      ['/a b', 'not a regular expression: use printable ASCII without spaces'],
    ]);
    parserTable(parseReplacement, same(['/\\1', '\\1/foo\\2']), [['/x"y', 'not a replacement: it contains "\\"" (admitted: printable ASCII without space, \' " ` %)']]);
  });

  it('parseSecretRef: a name in the own namespace, or namespace/name', () => {
    const parse = (value: string) => parseSecretRef(value, 'shop');
    parserTable(
      parse,
      [
        ['users', { namespace: 'shop', name: 'users' }],
        ['auth/users.v2', { namespace: 'auth', name: 'users.v2' }],
      ],
      [
        ['a/b/c', 'not a Secret reference: use "name" or "namespace/name" (lowercase Kubernetes names)'],
        ['Users', 'not a Secret reference: use "name" or "namespace/name" (lowercase Kubernetes names)'],
        ['ns.with.dots/users', 'not a Secret reference: use "name" or "namespace/name" (lowercase Kubernetes names)'],
        ['/users', 'not a Secret reference: use "name" or "namespace/name" (lowercase Kubernetes names)'],
      ],
    );
    expect(parseSecretRef('users', '')).to.deep.equal({ ok: false, reason: 'names no namespace, and the object\'s own is unknown here: write "namespace/name"' });
    expect(parseSecretRef('auth/users', '')).to.deep.equal({ ok: true, value: { namespace: 'auth', name: 'users' } });
  });
});
