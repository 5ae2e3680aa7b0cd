import { expect } from 'chai';
import { checkDuration, checkHeaderName, checkHeaderValue, checkMatchValue, checkRegex } from '../../../lib/gateway/values.ts';
import { checkHostname, hostnamesOn, intersectHostname } from '../../../lib/gateway/hostnames.ts';

/** What could end a line, a word or a quoted string, or start a comment or an expansion, somewhere in HAProxy. */
const BREAKERS = ['\n', '\r', '\u0000', '"', '\\', '$'];

describe('Gateway API values', () => {
  it('header names: RFC 7230 tokens that stay one safe word', () => {
    for (const name of ['X-Forwarded-For', 'x_a.b~c', 'a&b', '1abc']) expect(checkHeaderName(name), name).to.deep.equal({ ok: true, value: name });
    for (const name of ['', '-x', '!x', 'a b', 'a:b', 'a#b', "a'b", 'a%b', 'a\nb', 'é', 'x'.repeat(257), 7]) expect(checkHeaderName(name), String(name)).to.include({ ok: false });
  });

  it('header values: printable ASCII without what ends or escapes a quoted string, "%" kept for the template to double', () => {
    expect(checkHeaderValue('text/html; charset=utf-8 100%')).to.deep.equal({ ok: true, value: 'text/html; charset=utf-8 100%' });
    for (const bad of BREAKERS) expect(checkHeaderValue(`a${bad}b`), JSON.stringify(bad)).to.include({ ok: false });
    expect(checkHeaderValue('x'.repeat(1025))).to.include({ ok: false });
  });

  it('values matched whole: one safe word', () => {
    expect(checkMatchValue('v1.2-beta')).to.deep.equal({ ok: true, value: 'v1.2-beta' });
    for (const bad of ['', 'a b', 'a%b', '-a', ...BREAKERS.map((c) => `a${c}`)]) expect(checkMatchValue(bad), JSON.stringify(bad)).to.include({ ok: false });
  });

  it('regular expressions: compiled, without space, quotes or control characters', () => {
    expect(checkRegex('^/api/v[0-9]+$')).to.deep.equal({ ok: true, value: '^/api/v[0-9]+$' });
    expect(checkRegex('\\x20')).to.include({ ok: true });
    for (const bad of ['(', 'a b', "a'b", 'a"b', 'a\nb', '']) expect(checkRegex(bad), JSON.stringify(bad)).to.include({ ok: false });
  });

  it('durations as GEP-2257 writes them, in milliseconds', () => {
    expect(checkDuration('1h')).to.deep.equal({ ok: true, value: 3_600_000 });
    expect(checkDuration('1m30s')).to.deep.equal({ ok: true, value: 90_000 });
    expect(checkDuration('500ms')).to.deep.equal({ ok: true, value: 500 });
    expect(checkDuration('0s')).to.deep.equal({ ok: true, value: 0 });
    for (const bad of ['1d', '1.5s', '-1s', '123456s', '1h1m1s1ms1h', '', 10]) expect(checkDuration(bad), String(bad)).to.include({ ok: false });
  });
});

describe('Gateway API hostnames', () => {
  it('accepts DNS names and wildcards, lowercased; refuses IP addresses and bad names', () => {
    expect(checkHostname('Foo.Example.com')).to.deep.equal({ ok: true, value: 'foo.example.com' });
    expect(checkHostname('*.example.com')).to.deep.equal({ ok: true, value: '*.example.com' });
    for (const bad of ['10.0.0.1', 'a..b', 'a*.b', 'a b', 'a\nb', '*']) expect(checkHostname(bad), bad).to.include({ ok: false });
  });

  it('intersects as the specification words it (apis/v1/httproute_types.go Hostnames)', () => {
    // "A Listener with test.example.com matches HTTPRoutes that have ... test.example.com or *.example.com."
    expect(intersectHostname('test.example.com', 'test.example.com')).to.equal('test.example.com');
    expect(intersectHostname('test.example.com', '*.example.com')).to.equal('test.example.com');
    // "*.example.com, test.example.com and foo.test.example.com would all match ... example.com and test.example.net would not."
    expect(intersectHostname('*.example.com', '*.example.com')).to.equal('*.example.com');
    expect(intersectHostname('*.example.com', 'test.example.com')).to.equal('test.example.com');
    expect(intersectHostname('*.example.com', 'foo.test.example.com')).to.equal('foo.test.example.com');
    expect(intersectHostname('*.example.com', 'example.com')).to.equal(undefined);
    expect(intersectHostname('*.example.com', 'test.example.net')).to.equal(undefined);
    // Two wildcards: the narrower one.
    expect(intersectHostname('*.example.com', '*.a.example.com')).to.equal('*.a.example.com');
    expect(intersectHostname('*.a.example.com', '*.example.com')).to.equal('*.a.example.com');
  });

  it('serves a route on a listener for the hostnames they share, either side absent meaning any', () => {
    expect(hostnamesOn(undefined, [])).to.deep.equal(['*']);
    expect(hostnamesOn(undefined, ['a.example.com'])).to.deep.equal(['a.example.com']);
    expect(hostnamesOn('*.example.com', [])).to.deep.equal(['*.example.com']);
    // "any HTTPRoute hostnames that do not match the Listener hostname MUST be ignored"
    expect(hostnamesOn('*.example.com', ['test.example.com', 'test.example.net'])).to.deep.equal(['test.example.com']);
    expect(hostnamesOn('a.example.com', ['b.example.com'])).to.deep.equal([]);
  });
});
