import { expect } from 'chai';
import { replacedRoutes } from '../../../lib/map-model/route-reads.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

/** The keys the aggregate knows HTTPRoutes by: a new key object for a route read again. */
const key = (name: string, namespace = 'apps'): KubeObject => Object.freeze({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { namespace, name } });

describe('replacedRoutes', () => {
  const before = ['a', 'b', 'c'].map((name) => key(name));

  it('names nothing when every route is the same key in the same place', () => {
    expect(replacedRoutes(before, [...before])).to.deep.equal({ before: [], now: new Map() });
  });

  it('pairs each route read again in its place with its new key', () => {
    const b = key('b');
    const replaced = replacedRoutes(before, [before[0]!, b, before[2]!])!;
    expect(replaced.before).to.deep.equal([before[1]]);
    expect(replaced.before[0]).to.equal(before[1]);
    expect(replaced.now.get(before[1]!)).to.equal(b);
  });

  it('gives up where routes came, went or moved, so the aggregate syncs them all', () => {
    expect(replacedRoutes(before, before.slice(1))).to.equal(undefined);
    expect(replacedRoutes(before, [...before, key('d')])).to.equal(undefined);
    expect(replacedRoutes(before, [before[0]!, key('d'), before[2]!])).to.equal(undefined);
    expect(replacedRoutes(before, [before[0]!, key('b', 'other'), before[2]!])).to.equal(undefined);
  });

  it('gives up past 64 routes read again: one sync costs about as much', () => {
    const many = Array.from({ length: 100 }, (_, i) => key(`r${i}`));
    expect(
      replacedRoutes(
        many,
        many.map((route, i) => (i < 64 ? key(route.metadata.name) : route)),
      )!.before,
    ).to.have.length(64);
    expect(
      replacedRoutes(
        many,
        many.map((route, i) => (i < 65 ? key(route.metadata.name) : route)),
      ),
    ).to.equal(undefined);
  });
});
