import { expect } from 'chai';
import { EventSeries } from '../../../lib/kube/event-series.ts';

const options = { burst: 3, refillMs: 10_000, updateIntervalMs: 1_000, seriesWindowMs: 600_000 };

describe('EventSeries', () => {
  it('creates the first occurrence and updates its series on repeats, carrying the count', () => {
    const series = new EventSeries(options);
    expect(series.decide('Ingress a/b', 'excluded', 0)).to.deep.equal({ action: 'create' });
    series.created('Ingress a/b', 'excluded', 'b.1');
    // Within the update interval a repeat is only counted...
    expect(series.decide('Ingress a/b', 'excluded', 500)).to.deep.equal({ action: 'skip', reason: 'throttled' });
    // ...and the next write carries every occurrence so far.
    expect(series.decide('Ingress a/b', 'excluded', 1_500)).to.deep.equal({ action: 'update', name: 'b.1', count: 3 });
    expect(series.skipped).to.equal(1);
  });

  it('rate-limits an object that keeps producing new events, and refills its budget over time', () => {
    const series = new EventSeries(options);
    const decisions = ['a', 'b', 'c', 'd'].map((note) => series.decide('Ingress a/flap', note, 0));
    expect(decisions.map((d) => d.action)).to.deep.equal(['create', 'create', 'create', 'skip']);
    // Other objects have their own budget.
    expect(series.decide('Ingress a/other', 'a', 0).action).to.equal('create');
    // One write comes back per refill period.
    expect(series.decide('Ingress a/flap', 'e', 10_000).action).to.equal('create');
    expect(series.decide('Ingress a/flap', 'f', 10_000).action).to.equal('skip');
  });

  it('forgets a failed create, so the next occurrence creates again', () => {
    const series = new EventSeries(options);
    series.decide('Pod ns/p', 'failed', 0);
    series.created('Pod ns/p', 'failed', undefined);
    expect(series.decide('Pod ns/p', 'failed', 10).action).to.equal('create');
  });

  it('starts a new event after a series was quiet for the series window', () => {
    const series = new EventSeries({ ...options, seriesWindowMs: 60_000 });
    series.decide('Ingress a/b', 'excluded', 0);
    series.created('Ingress a/b', 'excluded', 'b.1');
    expect(series.decide('Ingress a/b', 'excluded', 200_000)).to.deep.equal({ action: 'create' });
  });
});
