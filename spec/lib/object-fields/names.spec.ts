import { expect } from 'chai';
import {
  MAX_PATH_LENGTH,
  checkHost,
  checkIpAddress,
  endpointAddressProblem,
  checkPath,
  checkRegexPath,
  describeObject,
  isDnsLabel,
  isDnsSubdomain,
  isPortName,
  isPortNumber,
  quote,
} from '../../../lib/object-fields/names.ts';

/** Every character that could end a word, a line or a value, or start a comment or an expansion, somewhere in HAProxy. */
const UNSAFE = [' ', '\t', '\n', '\r', '\v', '\f', '\u0000', '#', '"', "'", '\\', '{', '}', '$', '`', '<', '>', '|', '^', '[', ']', '?'];

describe('ingress names', () => {
  describe('checkHost', () => {
    it('accepts DNS names and single-label wildcards, lowercased', () => {
      expect(checkHost('example.com')).to.deep.equal({ ok: true, value: { host: 'example.com', wildcard: false } });
      expect(checkHost('WWW.Example.COM')).to.deep.equal({ ok: true, value: { host: 'www.example.com', wildcard: false } });
      expect(checkHost('*.example.com')).to.deep.equal({ ok: true, value: { host: '*.example.com', wildcard: true } });
      expect(checkHost('localhost')).to.deep.include({ ok: true });
      expect(checkHost('123.example.com')).to.deep.include({ ok: true });
      expect(checkHost(`${'a'.repeat(63)}.com`)).to.deep.include({ ok: true });
      expect(checkHost(Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.'))).to.deep.include({ ok: true });
    });

    it('refuses anything else', () => {
      for (const host of [
        '',
        '*',
        '*.',
        '*example.com',
        'a.*.example.com',
        '**.example.com',
        '-a.example.com',
        'a-.example.com',
        'a..example.com',
        '.example.com',
        'example.com.',
        'exa_mple.com',
        'example.com:80',
        `${'a'.repeat(64)}.com`,
        Array.from({ length: 5 }, () => 'a'.repeat(62)).join('.'),
        'ex\u212Aample.com',
        '\u0435xample.com',
        ...UNSAFE.map((character) => `exa${character}mple.com`),
      ]) {
        expect(checkHost(host).ok, JSON.stringify(host)).to.equal(false);
      }
      expect(checkHost(7).ok).to.equal(false);
      expect(checkHost(undefined).ok).to.equal(false);
    });
  });

  describe('checkPath', () => {
    it('accepts RFC 3986 path characters that are safe in HAProxy', () => {
      for (const path of ['/', '/api', '/a/b/', '/a-b._~!&*+=:@', '/%20%2F%aF', '/Caps/123', `/${'a'.repeat(MAX_PATH_LENGTH - 1)}`]) {
        expect(checkPath(path), path).to.deep.equal({ ok: true, value: path });
      }
    });

    it('accepts exactly the documented characters among all of ASCII and beyond', () => {
      const allowed = /[A-Za-z0-9\-._~!&*+=:@/]/;
      for (let code = 0; code < 0x250; code++) {
        const character = String.fromCharCode(code);
        if (character === '%') continue;
        expect(checkPath(`/a${character}b`).ok, `U+${code.toString(16)}`).to.equal(allowed.test(character));
      }
    });

    it('refuses relative, unsafe, half-encoded and overlong paths', () => {
      for (const path of [
        '',
        'api',
        '*',
        '/%',
        '/%2',
        '/%zz',
        '/%[src]',
        '/%{+Q}o',
        '/a(b)',
        '/a,b',
        '/a;b',
        ...UNSAFE.map((character) => `/a${character}b`),
        '/\u2028',
        `/${'a'.repeat(MAX_PATH_LENGTH)}`,
      ]) {
        expect(checkPath(path).ok, JSON.stringify(path)).to.equal(false);
      }
      expect(checkPath(undefined).ok).to.equal(false);
    });
  });

  it('checks names and ports as Kubernetes validates them', () => {
    expect(['web', 'a', 'web-1', '1web', 'a'.repeat(63)].every(isDnsLabel)).to.equal(true);
    expect(['', 'Web', 'web_1', '-web', 'web-', 'a.b', 'a'.repeat(64), 3].some(isDnsLabel)).to.equal(false);

    expect(['tls', 'web.tls', 'a-b.c-d'].every(isDnsSubdomain)).to.equal(true);
    expect(['', 'a..b', '.a', 'a.', 'A', 'a/b', 'a_b', Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')].some(isDnsSubdomain)).to.equal(false);

    expect(['http', 'h2c', 'http-alt', 'a'.repeat(15), '8080a'].every(isPortName)).to.equal(true);
    expect(['', '8080', 'HTTP', 'ht tp', 'a'.repeat(16), 'http--alt', '-http', 'http-', 'http_alt', 80].some(isPortName)).to.equal(false);

    expect([1, 80, 65535].every(isPortNumber)).to.equal(true);
    expect([0, -1, 65536, 80.5, Number.NaN, Number.POSITIVE_INFINITY, '80'].some(isPortNumber)).to.equal(false);
  });

  it('accepts IPv4 and IPv6 addresses only, with IPv6 lowercased', () => {
    expect(checkIpAddress('10.0.0.1')).to.deep.equal({ ok: true, value: '10.0.0.1' });
    expect(checkIpAddress('FD00::A')).to.deep.equal({ ok: true, value: 'fd00::a' });
    expect(checkIpAddress('::ffff:10.0.0.1')).to.deep.equal({ ok: true, value: '::ffff:10.0.0.1' });
    for (const address of ['', '10.0.0', '10.0.0.256', '010.0.0.1', 'fe80::1%eth0', '10.0.0.1/32', ' 10.0.0.1', '10.0.0.1\n', 'example.com', 42]) {
      expect(checkIpAddress(address).ok, JSON.stringify(address)).to.equal(false);
    }
  });

  it('refuses endpoint addresses no server can be reached at, saying why', () => {
    const refused: [string, RegExp][] = [
      ['0.0.0.0', /unspecified/],
      ['0.1.2.3', /unspecified/],
      ['::', /unspecified/],
      ['255.255.255.255', /broadcast/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['ff02::1', /multicast/],
      ['169.254.169.254', /link-local/],
      ['fe80::1', /link-local/],
      ['::ffff:169.254.1.1', /link-local/],
      ['::ffff:0.0.0.0', /unspecified/],
    ];
    for (const [address, reason] of refused) expect(endpointAddressProblem(address), address).to.match(reason);
    // Loopback stays: local mode and the specs run backends on it.
    for (const address of ['10.0.0.1', '127.0.0.1', '192.168.1.255', 'fd00::1', '::1', '2001:db8::1', '::ffff:10.0.0.1']) {
      expect(endpointAddressProblem(address), address).to.equal(undefined);
    }
  });

  it('quotes values for reports as one line of printable ASCII', () => {
    expect(quote('plain')).to.equal('"plain"');
    expect(quote('a\nb"c\\d\u212A')).to.equal('"a\\u000ab\\"c\\\\d\\u212a"');
    expect(quote('x'.repeat(100))).to.equal(`"${'x'.repeat(80)}..."`);
    expect([quote(undefined), quote(null), quote(80), quote([1]), quote({})]).to.deep.equal(['nothing', 'null', '80', 'a list', 'an object']);
    expect(describeObject('Ingress', 'default', 'web')).to.equal('Ingress default/web');
    expect(describeObject('Ingress', 'default', 'we\nb')).to.equal('Ingress default/"we\\u000ab"');
    expect(describeObject('Namespace', undefined, 'default')).to.equal('Namespace default');
  });

  it('admits a regular-expression path as one map word that compiles, and refuses what could end or comment it', () => {
    expect(checkRegexPath('/something(/|$)(.*)')).to.deep.equal({ ok: true, value: '/something(/|$)(.*)' });
    expect(checkRegexPath('/file\\.txt$')).to.deep.equal({ ok: true, value: '/file\\.txt$' });
    const reasons = ['/a b', '/a#b', '/a%20', "/a'b", '/a"b', '/a\nb', 'api', '/(unclosed', 7].map((value) => {
      const checked = checkRegexPath(value);
      return checked.ok ? 'admitted' : checked.reason;
    });
    expect(reasons).to.deep.equal([
      ...['"/a b"', '"/a#b"', '"/a%20"', '"/a\'b"', '"/a\\"b"', '"/a\\u000ab"'].map(
        (quoted) => `${quoted} is not a path regular expression: printable ASCII without space, quotes, backtick, '#' or '%'`,
      ),
      `"api" does not start with '/'`,
      '"/(unclosed" is not a regular expression',
      'must be a string, not 7',
    ]);
  });
});
