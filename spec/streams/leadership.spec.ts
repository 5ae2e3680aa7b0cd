import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { leadership } from '../../streams/leadership.ts';
import { testScheduler } from '../support/marbles.ts';

// Marbles use a renew deadline of 5 frames in place of 10 s; ticks stand for the 2 s retry period.
const renewDeadlineMs = 5;
const values = { t: true, f: false };

/** Hands out the given attempt results, one per attempt, in order. */
function attempts(results: readonly Observable<boolean>[]): () => Observable<boolean> {
  let next = 0;
  return () => results[next++]!;
}

describe('leadership stage', () => {
  it('leads from the first attempt that takes the lease and stays leader while renewals succeed', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Every attempt takes or renews the lease: one true, nothing more.
      const ticks = hot('  x-x-x-|');
      const expected = '   t-----|';
      const attempt = attempts([cold('(t|)', values), cold('(t|)', values), cold('(t|)', values)]);
      expectObservable(ticks.pipe(leadership({ attempt, renewDeadlineMs, onError: () => {} }))).toBe(expected, values);
    });
  });

  it('follows while another replica holds the lease, and leads once it can take it', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Two attempts find the lease held elsewhere; the third takes it.
      const ticks = hot('  x-x-x-|');
      const expected = '   f---t-|';
      const attempt = attempts([cold('(f|)', values), cold('(f|)', values), cold('(t|)', values)]);
      expectObservable(ticks.pipe(leadership({ attempt, renewDeadlineMs, onError: () => {} }))).toBe(expected, values);
    });
  });

  it('keeps leading through failed renewals shorter than the renew deadline', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Renewals at 2 and 4 fail; 4 frames since the last success is within the deadline of 5.
      const ticks = hot('  x-x-x-x-|');
      const expected = '   t-------|';
      const errors: string[] = [];
      const attempt = attempts([cold('(t|)', values), cold<boolean>('#'), cold<boolean>('#'), cold('(t|)', values)]);
      expectObservable(ticks.pipe(leadership({ attempt, renewDeadlineMs, onError: (e) => errors.push(e) }))).toBe(expected, values);
      // Each failed renewal is reported, even when leadership holds.
      return () => expect(errors).to.have.length(2);
    });
  });

  it('steps down when no renewal succeeded within the renew deadline, and leads again after a later success', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Renewals fail at 2, 4 and 6; at 6 the last success (0) is 6 frames old: step down. 8 takes it back.
      const ticks = hot('  x-x-x-x-x-|');
      const expected = '   t-----f-t-|';
      const attempt = attempts([cold('(t|)', values), cold<boolean>('#'), cold<boolean>('#'), cold<boolean>('#'), cold('(t|)', values)]);
      expectObservable(ticks.pipe(leadership({ attempt, renewDeadlineMs, onError: () => {} }))).toBe(expected, values);
    });
  });

  it('abandons an attempt that hangs at the renew deadline and does not start another meanwhile', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      // The renewal at 2 never answers: it times out at 7 (2 + 5), 7 frames after the last success,
      // so the replica steps down; ticks at 4 and 6 start nothing while it hangs; 8 leads again.
      const ticks = hot('  x-x-x-x-x-|');
      const expected = '   t------ft-|';
      const hanging = cold<boolean>('-');
      const attempt = attempts([cold('(t|)', values), hanging, cold('(t|)', values)]);
      expectObservable(ticks.pipe(leadership({ attempt, renewDeadlineMs, onError: () => {} }))).toBe(expected, values);
      expectSubscriptions(hanging.subscriptions).toBe('--^----!');
    });
  });
});
