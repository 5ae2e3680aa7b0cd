import { expect } from 'chai';
import { checkLabelKey, checkLabelValue, isDnsLabel, isDnsSubdomain, matchesLabels, parseLabelSelector } from '../../../lib/kube-syntax/label-selector.ts';
import type { LabelRequirement } from '../../../lib/kube-syntax/label-selector.ts';

describe('parseLabelSelector', () => {
  const valid: [string, LabelRequirement[]][] = [
    ['', []],
    ['  ', []],
    ['a=b', [{ key: 'a', operator: 'in', values: ['b'] }]],
    ['a==b', [{ key: 'a', operator: 'in', values: ['b'] }]],
    ['a!=b', [{ key: 'a', operator: 'notIn', values: ['b'] }]],
    ['a=', [{ key: 'a', operator: 'in', values: [''] }]],
    ['a in (x,y)', [{ key: 'a', operator: 'in', values: ['x', 'y'] }]],
    ['a notin (x)', [{ key: 'a', operator: 'notIn', values: ['x'] }]],
    ['a in (x,)', [{ key: 'a', operator: 'in', values: ['x', ''] }]],
    ['a', [{ key: 'a', operator: 'exists' }]],
    ['!a', [{ key: 'a', operator: 'doesNotExist' }]],
    ['app.kubernetes.io/name=web', [{ key: 'app.kubernetes.io/name', operator: 'in', values: ['web'] }]],
    [
      ' app = web ,tier!=db,  env in ( prod , stage ) , !canary,managed ',
      [
        { key: 'app', operator: 'in', values: ['web'] },
        { key: 'tier', operator: 'notIn', values: ['db'] },
        { key: 'env', operator: 'in', values: ['prod', 'stage'] },
        { key: 'canary', operator: 'doesNotExist' },
        { key: 'managed', operator: 'exists' },
      ],
    ],
  ];
  for (const [text, requirements] of valid) {
    it(`parses ${JSON.stringify(text)}`, () => {
      expect(parseLabelSelector(text)).to.deep.equal({ source: text, requirements });
    });
  }

  const invalid: [string, string][] = [
    ['a in x', 'expected "(" after "a in", got "x" at 6'],
    ['a notin (x', 'expected "," or ")" in the values of "a notin", got the end'],
    ['a in (x y)', 'expected "," or ")" in the values of "a in", got "y" at 9'],
    ['=b', 'expected a label key, got "=" at 1'],
    ['a,', 'expected a label key, got the end'],
    ['a,,b', 'expected a label key, got "," at 3'],
    ['a b', 'expected an operator (=, ==, !=, in, notin) or "," after "a", got "b" at 3'],
    ['a=b c', 'expected "," or the end, got "c" at 5'],
    ['!a=b', 'expected "," or the end, got "=" at 3'],
    ['in=x', 'expected a label key, got "in" at 1'],
    ['-a=b', 'invalid label key "-a": the name must be at most 63 characters'],
    ['Bad_Prefix/a=b', `invalid label key "Bad_Prefix/a": the prefix before '/' must be a DNS subdomain`],
    ['a/b/c', `invalid label key "a/b/c": it may contain at most one '/'`],
    [`${'k'.repeat(64)}=v`, `invalid label key "${'k'.repeat(64)}"`],
    ['a=-b', 'invalid label value "-b"'],
    ['a in (x,_y)', 'invalid label value "_y"'],
  ];
  for (const [text, message] of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      expect(() => parseLabelSelector(text)).to.throw(Error, message);
    });
  }
});

describe('matchesLabels', () => {
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', undefined, true],
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a=b', undefined, false],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a!=b', {}, true],
    ['a in (x,y)', { a: 'y' }, true],
    ['a in (x,y)', { a: 'z' }, false],
    ['a notin (x,y)', { a: 'z' }, true],
    ['a notin (x,y)', undefined, true],
    ['a notin (x,y)', { a: 'x' }, false],
    ['a', { a: '' }, true],
    ['a', { b: 'a' }, false],
    ['!a', { b: 'a' }, true],
    ['!a', { a: '' }, false],
    ['a=', { a: '' }, true],
    ['a=b,c', { a: 'b', c: '1' }, true],
    ['a=b,c', { a: 'b' }, false],
    ['constructor', {}, false],
  ];
  for (const [selector, labels, expected] of cases) {
    it(`${expected ? 'matches' : 'does not match'} ${JSON.stringify(selector)} against ${JSON.stringify(labels)}`, () => {
      expect(matchesLabels(parseLabelSelector(selector), labels)).to.equal(expected);
    });
  }
});

describe('label and DNS name checks', () => {
  it('accepts label keys with and without a prefix', () => {
    for (const key of ['app', 'app.kubernetes.io/name', 'a_b-c.d', 'x/Y', 'k'.repeat(63)]) expect(checkLabelKey(key), key).to.be.undefined;
    for (const key of ['', '/a', 'a/', '_a', 'a_', `p/${'k'.repeat(64)}`, `${'p'.repeat(254)}/a`]) {
      expect(checkLabelKey(key), key).to.match(/^invalid label key/);
    }
  });

  it('accepts empty label values but not malformed ones', () => {
    for (const value of ['', 'web', 'v1.2_3-rc', 'v'.repeat(63)]) expect(checkLabelValue(value), value).to.be.undefined;
    for (const value of ['-a', 'a.', 'a b', 'a/b', 'v'.repeat(64)]) expect(checkLabelValue(value), value).to.match(/^invalid label value/);
  });

  it('tells DNS labels from subdomains', () => {
    expect(isDnsLabel('kube-system')).to.be.true;
    expect(isDnsLabel('a.b')).to.be.false;
    expect(isDnsLabel('Default')).to.be.false;
    expect(isDnsLabel('l'.repeat(64))).to.be.false;
    expect(isDnsSubdomain('networking.k8s.io')).to.be.true;
    expect(isDnsSubdomain('a..b')).to.be.false;
    expect(isDnsSubdomain('-a.b')).to.be.false;
    expect(isDnsSubdomain('')).to.be.false;
  });
});
