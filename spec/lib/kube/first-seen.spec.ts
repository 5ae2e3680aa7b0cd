import { expect } from 'chai';
import { FirstSeen } from '../../../lib/kube/first-seen.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

const object = (name: string, creationTimestamp?: string): KubeObject => ({ kind: 'Ingress', metadata: { name, namespace: 'shop', ...(creationTimestamp ? { creationTimestamp } : {}) } });
const stampOf = (o: KubeObject) => o.metadata['creationTimestamp'];

describe('first seen', () => {
  it('stamps an object without a creationTimestamp with the time it was first seen, and keeps that time on later reads', () => {
    const seen = new FirstSeen();
    expect(stampOf(seen.stamp('ingresses shop/web', object('web'), Date.parse('2026-01-01T00:00:00Z')))).to.equal('2026-01-01T00:00:00.000Z');
    expect(seen.endRead()).to.equal(true);
    expect(stampOf(seen.stamp('ingresses shop/web', object('web'), Date.parse('2026-02-01T00:00:00Z')))).to.equal('2026-01-01T00:00:00.000Z');
    expect(seen.endRead(), 'nothing new').to.equal(false);
  });

  it('leaves a creationTimestamp the manifest carries as it is, and records nothing for it', () => {
    const seen = new FirstSeen();
    const own = object('web', '2020-01-01T00:00:00Z');
    expect(seen.stamp('ingresses shop/web', own, Date.parse('2026-01-01T00:00:00Z'))).to.equal(own);
    expect(seen.endRead()).to.equal(false);
    expect(seen.record()).to.deep.equal({});
  });

  it('forgets an object that went: read again later, it is new', () => {
    const seen = new FirstSeen();
    seen.stamp('ingresses shop/web', object('web'), 1_000);
    seen.stamp('ingresses shop/api', object('api'), 1_000);
    seen.endRead();
    seen.forget('ingresses shop/api');
    expect(seen.endRead(), 'api went').to.equal(true);
    seen.forget('ingresses shop/api');
    expect(seen.endRead(), 'forgotten already').to.equal(false);
    expect(seen.record()).to.deep.equal({ 'ingresses shop/web': '1970-01-01T00:00:01.000Z' });
    expect(stampOf(seen.stamp('ingresses shop/api', object('api'), 3_000))).to.equal('1970-01-01T00:00:03.000Z');
  });

  it('keeps only what a reader that takes over holds, and tells a reader whether the record still follows it', () => {
    const seen = new FirstSeen({ 'ingresses shop/web': '2026-01-01T00:00:00.000Z', 'ingresses shop/old': '2025-01-01T00:00:00.000Z' });
    const [reader, other] = [{}, {}];
    expect(seen.follow(reader), 'a stored record follows no reader').to.equal(false);
    expect(seen.follow(reader)).to.equal(true);
    seen.keepOnly(new Set(['ingresses shop/web', 'ingresses shop/new']));
    expect(seen.endRead(), 'old went').to.equal(true);
    expect(seen.record()).to.deep.equal({ 'ingresses shop/web': '2026-01-01T00:00:00.000Z' });
    seen.keepOnly(new Set(['ingresses shop/web']));
    expect(seen.endRead(), 'nothing went').to.equal(false);
    expect(seen.follow(other), 'another reader took over').to.equal(false);
    expect(seen.follow(reader), 'and the first one reads again').to.equal(false);
  });

  it('starts from a stored record, so a restart keeps the order; a record that is not one counts as empty', () => {
    const stored = new FirstSeen();
    stored.stamp('ingresses shop/web', object('web'), 1_000);
    stored.endRead();
    const again = FirstSeen.parse(JSON.stringify(stored.record()));
    expect(stampOf(again.stamp('ingresses shop/web', object('web'), 9_000))).to.equal('1970-01-01T00:00:01.000Z');
    for (const text of [undefined, '', 'not json', '[1]', '{"ingresses shop/web": 5}', '{"ingresses shop/web": "yesterday"}']) {
      expect(FirstSeen.parse(text).record(), String(text)).to.deep.equal({});
    }
  });
  it('journals what changed since the journal was last taken, which replayed over the record before it gives the record now, and over a later one changes nothing', () => {
    const seen = new FirstSeen({ 'ingresses shop/old': '2025-01-01T00:00:00.000Z' });
    const before = JSON.stringify(seen.record());
    seen.stamp('ingresses shop/web', object('web'), 1_000);
    seen.stamp('ingresses shop/api', object('api'), 2_000);
    seen.forget('ingresses shop/old');
    seen.forget('ingresses shop/api');
    seen.stamp('ingresses shop/api', object('api'), 3_000);
    seen.stamp('ingresses shop/web', object('web'), 4_000);
    const journal = seen.journal();
    expect(journal.split('\n')).to.have.length(6);
    expect(seen.journal(), 'taken').to.equal('');
    const now = seen.record();
    expect(now).to.deep.equal({ 'ingresses shop/api': '1970-01-01T00:00:03.000Z', 'ingresses shop/web': '1970-01-01T00:00:01.000Z' });
    expect(FirstSeen.parse(before, journal).record()).to.deep.equal(now);
    expect(FirstSeen.parse(JSON.stringify(now), journal).record()).to.deep.equal(now);
    // A line cut short (a crash while appending) or not a journal line is passed over.
    expect(FirstSeen.parse(before, `${journal}["ingresses shop/cut", "1970-01`).record()).to.deep.equal(now);
    expect(FirstSeen.parse(before, `${journal}[1]\n["k", 5]\n["k", "yesterday"]\n{}\n`).record()).to.deep.equal(now);
  });
});
