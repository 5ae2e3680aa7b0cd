import { expect } from 'chai';
import { EventSeries } from '../../../lib/kube/event-series.ts';

const options = { burst: 3, refillMs: 10_000, updateIntervalMs: 1_000, seriesWindowMs: 600_000 };

describe('EventSeries', () => {
  it('creates the first occurrence and updates its series on repeats, carrying the count', () => {
    const series = new EventSeries(options);
    expect(series.decide('Ingress a/b', 'excluded', 0)).to.deep.equal({ action: 'create' });
    series.created('Ingress a/b', 'excluded', 'b.1');
    // Within the update interval a repeat is only counted...
    expect(series.decide('Ingress a/b', 'excluded', 500)).to.deep.equal({ action: 'skip', reason: 'throttled', flushInMs: 500 });
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

  it('writes the repeats a window held back when it ends, unless a write carried them meanwhile', () => {
    const series = new EventSeries(options);
    series.decide('Pod ns/p', 'failed', 0);
    series.created('Pod ns/p', 'failed', 'p.1');
    expect(series.flush('Pod ns/p', 'failed', 1_000)).to.deep.equal({ action: 'none' });
    series.decide('Pod ns/p', 'failed', 200);
    series.decide('Pod ns/p', 'failed', 700);
    // Too soon: the window ends at 1000.
    expect(series.flush('Pod ns/p', 'failed', 900)).to.deep.equal({ action: 'later', inMs: 100 });
    expect(series.flush('Pod ns/p', 'failed', 1_000)).to.deep.equal({ action: 'update', name: 'p.1', count: 3, lastObservedAt: 700 });
    expect(series.flush('Pod ns/p', 'failed', 2_500)).to.deep.equal({ action: 'none' });
    // A repeat after the window is written at once and carries the count itself: nothing left to flush.
    expect(series.decide('Pod ns/p', 'failed', 2_600)).to.deep.equal({ action: 'update', name: 'p.1', count: 4 });
    expect(series.flush('Pod ns/p', 'failed', 3_600)).to.deep.equal({ action: 'none' });
  });

  it('holds a trailing write back until the budget allows one', () => {
    const series = new EventSeries(options);
    for (const note of ['a', 'b', 'c']) {
      series.decide('Pod ns/p', note, 0);
      series.created('Pod ns/p', note, `p.${note}`);
    }
    // The budget (3) is spent: a repeat after the window cannot be written, and says when it can.
    expect(series.decide('Pod ns/p', 'a', 1_500)).to.deep.equal({ action: 'skip', reason: 'rate-limited', flushInMs: 8_500 });
    expect(series.flush('Pod ns/p', 'a', 5_000)).to.deep.equal({ action: 'later', inMs: 5_000 });
    expect(series.flush('Pod ns/p', 'a', 10_000)).to.deep.equal({ action: 'update', name: 'p.a', count: 2, lastObservedAt: 1_500 });
  });
});
