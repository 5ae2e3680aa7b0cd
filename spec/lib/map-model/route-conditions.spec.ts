import { expect } from 'chai';
import { ModelSource } from '../../../lib/map-model/model-source.ts';
import { conditionShapes, routeConditions, type RouteConditions } from '../../../lib/map-model/route-conditions.ts';
import { compareMatches } from '../../../lib/routing/precedence.ts';
import type { RouteRecord, ValueMatch } from '../../../lib/routing/route.ts';

/**
 * Route conditions: one key per distinct content of header, query parameter
 * and method matches, so a route with conditions some served route has
 * costs map lines only; and the specification's order among them.
 */

/** The precedence of candidates by their conditions (lib/routing/precedence.ts), none counting as no matches. */
const conditionsOrder = (a: RouteConditions | undefined, b: RouteConditions | undefined) =>
  compareMatches(a ?? { method: undefined, headers: [], query: [] }, b ?? { method: undefined, headers: [], query: [] });

const source = new ModelSource('HTTPRoute', { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' } }, 'spec.rules[0].matches[0]');

function record(headers: readonly ValueMatch[], query: readonly ValueMatch[] = [], method?: string): RouteRecord {
  return {
    host: { key: 'example.com', wildcard: 'none' },
    path: { kind: 'prefix', value: '/' },
    headers,
    query,
    method,
    backends: [],
    settings: {},
    entrypoints: [],
    origin: { kind: 'HTTPRoute', namespace: 'default', name: 'r', age: 0, rule: 0, match: 0, field: 'spec.rules[0].matches[0]' },
  };
}

const exact = (name: string, value: string): ValueMatch => ({ name, kind: 'exact', value });
const regex = (name: string, value: string): ValueMatch => ({ name, kind: 'regex', value });
const conditions = (...args: Parameters<typeof record>) => routeConditions(record(...args), source)!;

describe('route conditions', () => {
  it('asks for nothing without header, query parameter or method matches', () => {
    expect(routeConditions(record([]), source)).to.equal(undefined);
  });

  it('keys conditions by their content: equal content one key, any difference another', () => {
    const key = conditions([exact('version', 'two')]).key;
    expect(key).to.match(/^c[0-9a-f]{16}$/);
    expect(conditions([exact('version', 'two')]).key).to.equal(key);
    const others = [
      conditions([regex('version', 'two')]),
      conditions([exact('version', 'one')]),
      conditions([], [exact('version', 'two')]),
      conditions([exact('version', 'two')], [], 'GET'),
    ].map((other) => other.key);
    expect(new Set([key, ...others]).size).to.equal(5);
  });

  it('asks for the protocol of a record served over one alone, under a key of its own, unranked', () => {
    const over = (onlyOver: 'HTTP' | 'HTTPS', headers: readonly ValueMatch[] = []) => routeConditions({ ...record(headers), onlyOver }, source)!;
    expect(over('HTTPS')).to.deep.include({ headers: [], query: [], method: undefined, servedOver: { tls: true } });
    expect(over('HTTP').servedOver).to.deep.equal({ tls: false });
    const keys = [over('HTTPS').key, over('HTTP').key, over('HTTPS', [exact('version', 'two')]).key, conditions([exact('version', 'two')]).key];
    expect(new Set(keys).size).to.equal(4);
    expect(conditionsOrder(over('HTTPS'), undefined)).to.equal(0);
    expect(conditionsOrder(over('HTTPS', [exact('version', 'two')]), conditions([exact('version', 'two')]))).to.equal(0);
  });

  it('says which value is a regular expression, for the template', () => {
    expect(conditions([exact('a', '1'), regex('b', '^2')], [regex('q', 'x+')], 'POST')).to.deep.include({
      headers: [
        { name: 'a', value: '1', regex: false },
        { name: 'b', value: '^2', regex: true },
      ],
      query: [{ name: 'q', value: 'x+', regex: true }],
      method: 'POST',
    });
  });

  it('shares a shape between sets matching the same names exactly, and keys their candidates by their values', () => {
    const a = conditions([exact('x-tenant', 'a')], [exact('v', '1')], 'POST');
    const b = conditions([exact('x-tenant', 'b')], [exact('v', '2')], 'POST');
    expect(a.shape.key).to.match(/^s[0-9a-f]{16}$/);
    expect(b.shape.key).to.equal(a.shape.key);
    expect(a.lookup).to.equal(`${a.shape.key}/a|1|POST|`);
    expect(a.shape.fetches).to.deep.equal([
      { name: 'x-tenant', header: true, param: false, method: false },
      { name: 'v', header: false, param: true, method: false },
      { name: undefined, header: false, param: false, method: true },
    ]);
    // A regular expression is a test of the shape's rule, so part of the shape; another name, another method test or none, another protocol: other shapes.
    const withRegex = conditions([exact('x-tenant', 'a'), regex('x-b', '^2')]);
    expect(withRegex.shape).to.deep.include({ headers: [{ name: 'x-b', value: '^2', regex: true }], query: [], method: undefined });
    expect(withRegex.lookup).to.equal(`${withRegex.shape.key}/a|`);
    const others = [
      withRegex,
      conditions([exact('x-tenant', 'a'), regex('x-b', '^3')]),
      conditions([exact('x-other', 'a')], [exact('v', '1')], 'POST'),
      conditions([exact('x-tenant', 'a')], [exact('v', '1')]),
      routeConditions({ ...record([exact('x-tenant', 'a')], [exact('v', '1')], 'POST'), onlyOver: 'HTTPS' }, source)!,
    ].map((set) => set.shape.key);
    expect(new Set([a.shape.key, ...others]).size).to.equal(6);
    expect(conditionShapes([b, withRegex, a]).map((shape) => shape.key)).to.deep.equal([a.shape.key, withRegex.shape.key].sort());
  });

  it('orders a method match first, then the most header matches, then the most query parameter matches', () => {
    const ranked: (RouteConditions | undefined)[] = [
      undefined,
      conditions([], [exact('q', '1')]),
      conditions([exact('a', '1')]),
      conditions([exact('a', '1')], [exact('q', '1'), exact('r', '1')]),
      conditions([exact('a', '1'), exact('b', '1')]),
      conditions([], [], 'GET'),
      conditions([exact('a', '1')], [], 'GET'),
    ];
    const sorted = [...ranked].sort(conditionsOrder);
    expect(sorted).to.deep.equal([ranked[6], ranked[5], ranked[4], ranked[3], ranked[2], ranked[1], ranked[0]]);
    expect(conditionsOrder(conditions([exact('a', '1')]), conditions([regex('b', '.')]))).to.equal(0);
  });
});
