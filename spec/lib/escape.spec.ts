import { expect } from 'chai';
import { unsafeRawReason, unsafeWordReason } from '../../lib/escape.ts';

describe('HAProxy value checks', () => {
  it('admits host names, paths, addresses, ports and names as words', () => {
    for (const value of ['example.com', '*.example.com', '/api/v1/', '10.0.0.1', 'fd00::1', '8080', 'web_http', '']) {
      expect(unsafeWordReason(value), value).to.equal(undefined);
    }
  });

  it('refuses "%", which starts a log-format variable, unless the place admits it (a map file, or escaping)', () => {
    expect(unsafeWordReason('%PWN')).to.equal('contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})');
    expect(unsafeWordReason('/a%20b', true)).to.equal(undefined);
    // Admitted, "%" still cannot open a sample expression.
    expect(unsafeWordReason('%[env(SECRET)]', true)).to.equal('contains "["');
  });

  it('refuses anything that could end a line, a word or start a comment, quote, variable or expression', () => {
    const cases: [string, string][] = [
      ['a\nb', 'contains U+000A'],
      ['a\rb', 'contains U+000D'],
      ['a\u0000', 'contains U+0000'],
      ['a b', 'contains " "'],
      ['a#b', 'contains "#"'],
      ['"a"', 'contains """'],
      ["it's", `contains "'"`],
      ['a\\b', 'contains "\\"'],
      ['${HOME}', 'contains "$"'],
      ['%[env(SECRET)]', 'contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})'],
      ['/a%[env(SECRET)]', 'contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})'],
      ['{ always_true }', 'contains "{"'],
      ['x,y', 'contains ","'],
      ['map(x)', 'contains "("'],
      ['bücher.example', 'contains U+00FC'],
      ['-m', 'starts with "-"'],
      ['!acl', 'starts with "!"'],
      ['a'.repeat(1025), 'is longer than 1024 characters'],
    ];
    for (const [value, reason] of cases) expect(unsafeWordReason(value), JSON.stringify(value)).to.equal(reason);
  });

  it('lets raw values carry spaces and quotes but never a line break or control character', () => {
    expect(unsafeRawReason('option httpchk GET /healthz "x"')).to.equal(undefined);
    expect(unsafeRawReason('a\nbackend evil')).to.equal('contains U+000A');
    expect(unsafeRawReason('a\u2028b')).to.equal('contains U+2028');
    expect(unsafeRawReason('a\tb')).to.equal('contains U+0009');
  });
});
