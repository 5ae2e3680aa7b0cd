import { defer, merge, type Observable } from 'rxjs';
import { concurrencyLimiter } from '../../../streams/operators/limit-concurrency.ts';
import { testScheduler } from '../../support/marbles.ts';

describe('concurrencyLimiter', () => {
  it('holds work back until a slot frees', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // Two slots: c starts only when a completes at frame 3.
      const limit = concurrencyLimiter(2);
      const a = cold('---(a|)');
      const b = cold('-----(b|)');
      const c = cold('--(c|)');
      const expected = '---a-(bc|)';
      expectObservable(merge(limit(a), limit(b), limit(c))).toBe(expected);
      expectSubscriptions(c.subscriptions).toBe('---^-!');
    });
  });

  it('frees the slot of work that errors or is unsubscribed', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // One slot: a errors at frame 2, b is cancelled at 4, so c gets the slot at 4.
      const limit = concurrencyLimiter(1);
      const a = cold('--#');
      const b = cold('------(b|)');
      const c = cold('-(c|)');
      expectObservable(limit(a)).toBe('--#');
      expectObservable(limit(b), '----!').toBe('');
      expectObservable(limit(c)).toBe('-----(c|)');
      expectSubscriptions(b.subscriptions).toBe('--^-!');
      expectSubscriptions(c.subscriptions).toBe('----^(!)');
    });
  });

  it('drops queued work that is unsubscribed before it starts', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // b leaves the queue at frame 1 and never runs; c runs after a.
      const limit = concurrencyLimiter(1);
      const a = cold('--(a|)');
      const b = cold('(b|)');
      const c = cold('(c|)');
      expectObservable(limit(a)).toBe('--(a|)');
      expectObservable(limit(b), '-!').toBe('');
      expectObservable(limit(c)).toBe('--(c|)');
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('passes on an error thrown while work starts, and frees its slot', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      // One slot: a throws as it is subscribed at 0; b is not held back by it.
      const limit = concurrencyLimiter(1);
      const a = defer((): Observable<string> => {
        throw new Error('could not start');
      });
      const b = cold('-(b|)');
      expectObservable(limit(a)).toBe('#', undefined, new Error('could not start'));
      expectObservable(limit(b)).toBe('-(b|)');
    });
  });
});
