import { expect } from 'chai';
import { aheadBy, comparePrecedence, compareStanding, inPrecedenceOrder } from '../../../lib/routing/precedence.ts';
import type { PathMatch, RouteHost, RouteRecord, ValueMatch } from '../../../lib/routing/route.ts';

interface Shape {
  readonly host?: RouteHost;
  readonly path?: PathMatch;
  readonly method?: string;
  readonly headers?: number;
  readonly query?: number;
  readonly age?: number;
  readonly namespace?: string;
  readonly name?: string;
  readonly rule?: number;
  readonly match?: number;
}

function route(shape: Shape): RouteRecord {
  const matches = (count: number, prefix: string): ValueMatch[] => Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i}`, kind: 'exact', value: 'v' }));
  return {
    host: shape.host ?? { key: '*', wildcard: 'none' },
    path: shape.path ?? { kind: 'prefix', value: '/' },
    headers: matches(shape.headers ?? 0, 'h'),
    query: matches(shape.query ?? 0, 'q'),
    method: shape.method,
    backends: [],
    settings: {},
    entrypoints: [{ port: 80, protocol: 'HTTP' }],
    origin: { kind: 'HTTPRoute', namespace: shape.namespace ?? 'default', name: shape.name ?? 'r', age: shape.age ?? 0, rule: shape.rule ?? 0, match: shape.match ?? 0, field: '' },
  };
}

/**
 * Each case: the specification's words (apis/v1/httproute_types.go,
 * HTTPRouteSpec.Hostnames and HTTPRouteRule.Matches), and two routes that
 * tie on every criterion before that one; `first` must come first.
 */
const cases: readonly { readonly rule: string; readonly first: Shape; readonly second: Shape }[] = [
  {
    rule: 'Characters in a matching non-wildcard hostname',
    first: { host: { key: 'foo.example.com', wildcard: 'none' } },
    second: { host: { key: '*.example.com', wildcard: 'suffix' } },
  },
  {
    rule: 'Characters in a matching non-wildcard hostname (longer first)',
    first: { host: { key: 'a.foo.example.com', wildcard: 'none' } },
    second: { host: { key: 'foo.example.com', wildcard: 'none' } },
  },
  {
    rule: 'Characters in a matching hostname',
    first: { host: { key: '*.foo.example.com', wildcard: 'suffix' } },
    second: { host: { key: '*.example.com', wildcard: 'suffix' } },
  },
  { rule: 'a hostname before any host', first: { host: { key: '*.example.com', wildcard: 'suffix' } }, second: {} },
  { rule: '"Exact" path match', first: { path: { kind: 'exact', value: '/a' } }, second: { path: { kind: 'prefix', value: '/a/b/c' } } },
  { rule: '"Prefix" path match with largest number of characters', first: { path: { kind: 'prefix', value: '/match/prefix' } }, second: { path: { kind: 'prefix', value: '/match' } } },
  { rule: 'RegularExpression (implementation-specific): after Exact', first: { path: { kind: 'exact', value: '/x' } }, second: { path: { kind: 'regex', value: '/x.*' } } },
  { rule: 'RegularExpression (implementation-specific): before any prefix', first: { path: { kind: 'regex', value: '/x.*' } }, second: { path: { kind: 'prefix', value: '/x/y/z/w' } } },
  { rule: 'Method match', first: { method: 'GET', headers: 0 }, second: { headers: 3 } },
  { rule: 'Largest number of header matches', first: { headers: 2, query: 0 }, second: { headers: 1, query: 5 } },
  { rule: 'Largest number of query param matches', first: { query: 2, age: 100 }, second: { query: 1, age: 0 } },
  { rule: 'The oldest Route based on creation timestamp', first: { age: 1, namespace: 'z' }, second: { age: 2, namespace: 'a' } },
  { rule: 'a Route without a creation timestamp counts as newest', first: { age: 5 }, second: { age: Number.POSITIVE_INFINITY } },
  { rule: 'The Route appearing first in alphabetical order by "{namespace}/{name}"', first: { namespace: 'a', name: 'z' }, second: { namespace: 'b', name: 'a' } },
  // One string, not namespace then name: '-' (0x2d) sorts before '/' (0x2f), so "a-b/r" comes before "a/r".
  { rule: '"{namespace}/{name}" as one string: a-b/r before a/r', first: { namespace: 'a-b', name: 'r' }, second: { namespace: 'a', name: 'r' } },
  { rule: 'alphabetical by "{namespace}/{name}" within a namespace', first: { name: 'a', rule: 3 }, second: { name: 'b', rule: 0 } },
  { rule: 'the FIRST matching rule (in list order)', first: { rule: 0, match: 5 }, second: { rule: 1, match: 0 } },
  { rule: 'the first match of a rule', first: { match: 0 }, second: { match: 1 } },
];

describe('route precedence', () => {
  for (const { rule, first, second } of cases) {
    it(rule, () => {
      expect(comparePrecedence(route(first), route(second))).to.be.below(0);
      expect(comparePrecedence(route(second), route(first))).to.be.above(0);
    });
  }

  it('orders the conformance scenario HTTPRoutePathMatchOrder as its requests expect', () => {
    // conformance/tests/httproute-path-match-order.yaml: rules in this order, each request served by the first that matches.
    const paths: PathMatch[] = [
      { kind: 'exact', value: '/match' },
      { kind: 'exact', value: '/match/exact' },
      { kind: 'exact', value: '/match/exact/one' },
      { kind: 'prefix', value: '/match' },
      { kind: 'prefix', value: '/match/prefix' },
      { kind: 'prefix', value: '/match/prefix/one' },
    ];
    const ordered = inPrecedenceOrder(paths.map((path, rule) => route({ path, rule })));
    const matches = (record: RouteRecord, request: string) =>
      record.path.kind === 'exact' ? request === record.path.value : request === record.path.value || request.startsWith(`${record.path.value}/`);
    const served = (request: string) => ordered.find((record) => matches(record, request))!.origin.rule;
    expect(served('/match/exact/one')).to.equal(2);
    expect(served('/match/exact')).to.equal(1);
    expect(served('/match')).to.equal(0);
    expect(served('/match/prefix/one/any')).to.equal(5);
    expect(served('/match/prefix/any')).to.equal(4);
    expect(served('/match/any')).to.equal(3);
  });

  it('orders objects of one age by "{namespace}/{name}" as one string, for Ingresses and every other conflict too', () => {
    const standing = (namespace: string, name: string, age = 0) => ({ namespace, name, age });
    expect(compareStanding(standing('a-b', 'r'), standing('a', 'r'))).to.be.below(0);
    expect(compareStanding(standing('a', 'r'), standing('a-b', 'r'))).to.be.above(0);
    expect(compareStanding(standing('a', 'r'), standing('a', 's'))).to.be.below(0);
    expect(compareStanding(standing('z', 'z', 1), standing('a', 'a', 2))).to.be.below(0);
    const unstamped = Number.POSITIVE_INFINITY;
    expect(compareStanding(standing('a', 'r', unstamped), standing('b', 'r', unstamped))).to.be.below(0);
    expect(compareStanding(standing('a', 'r'), standing('a', 'r'))).to.equal(0);
  });

  it('names the object ahead as older, or, of the same age, as first by namespace/name', () => {
    expect(aheadBy({ namespace: 'a', name: 'r', age: 1 }, { namespace: 'b', name: 'r', age: 2 }, 'HTTPRoute a/r')).to.equal('older HTTPRoute a/r');
    expect(aheadBy({ namespace: 'a-b', name: 'r', age: 1 }, { namespace: 'a', name: 'r', age: 1 }, 'HTTPRoute a-b/r')).to.equal('HTTPRoute a-b/r, as old and first by namespace/name,');
  });

  it('is a total order: the same routes in any order sort the same', () => {
    const routes = cases.flatMap(({ first, second }) => [route(first), route(second)]);
    const once = inPrecedenceOrder(routes);
    expect(inPrecedenceOrder(routes.toReversed())).to.deep.equal(once);
  });
});
