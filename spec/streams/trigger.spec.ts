import { map, switchMap, timer } from 'rxjs';
import { trigger } from '../../streams/trigger.ts';
import { change, changes, snapshot } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

// Marbles use debounce 3 and maxWait 10 frames in place of 500 ms and 5 s.
const timing = { debounceMs: 3, maxWaitMs: 10, leadingEdge: false };
const leading = { ...timing, leadingEdge: true };

describe('trigger stage, leading edge', () => {
  it('triggers a lone change at once when idle', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Nothing triggered in the last 3 frames and nothing is pending: a goes out on the frame it came.
      const c1 = change('a', 0);
      const source = hot('  a-------|', { a: snapshot(1, c1) });
      const expected = '    t-------|';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        t: { snapshot: snapshot(1, c1), changes: changes([c1]) },
      });
    });
  });

  it('folds the changes that arrive together into the leading trigger', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // a, b and c come in one turn (the documents of one manifest file, a relist): one trigger at 0
      // naming all three, and nothing after it.
      const [c1, c2, c3] = [change('a', 0), change('b', 0), change('c', 0)];
      const source = hot('  (abc)----|', { a: snapshot(1, c1), b: snapshot(2, c2), c: snapshot(3, c3) });
      const expected = '    t--------|';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        t: { snapshot: snapshot(3, c3), changes: changes([c1, c2, c3]) },
      });
    });
  });

  it('triggers the first change of a burst at once and folds the rest into one trigger after the quiet period', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // a triggers at 0; b and c come within the window and wait for 3 frames of quiet after c.
      const [c1, c2, c3] = [change('a', 0), change('b', 2), change('c', 4)];
      const source = hot('  a-b-c------|', { a: snapshot(1, c1), b: snapshot(2, c2), c: snapshot(3, c3) });
      const expected = '    s------t---|';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        s: { snapshot: snapshot(1, c1), changes: changes([c1]) },
        t: { snapshot: snapshot(3, c3), changes: changes([c2, c3]) },
      });
    });
  });

  it('is idle again once a window passes without a change after a trigger', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The burst a, b ends with a trailing trigger at 5; d comes 3 frames later (a whole window of
      // silence) and triggers at once; e, 2 frames after d, waits for the quiet period again.
      const [c1, c2, c4, c5] = [change('a', 0), change('b', 2), change('d', 8), change('e', 10)];
      const source = hot('  a-b-----d-e-----|', { a: snapshot(1, c1), b: snapshot(2, c2), d: snapshot(4, c4), e: snapshot(5, c5) });
      const expected = '    s----t--u----v--|';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        s: { snapshot: snapshot(1, c1), changes: changes([c1]) },
        t: { snapshot: snapshot(2, c2), changes: changes([c2]) },
        u: { snapshot: snapshot(4, c4), changes: changes([c4]) },
        v: { snapshot: snapshot(5, c5), changes: changes([c5]) },
      });
    });
  });

  it('keeps a change made while the render of a leading trigger runs from superseding that render', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Downstream, the render stage is a switchMap: a trigger arriving while a render runs discards it.
      // A render here takes 2 frames. a triggers at 0 and renders until 2; b at 1 comes during that
      // render, inside the window, so it waits for quiet (trigger at 4, rendered at 6) and revision 1
      // is delivered rather than discarded.
      const renders = switchMap((t: { snapshot: { revision: number } }) => timer(2).pipe(map(() => t.snapshot.revision)));
      const source = hot('  ab--------|', { a: snapshot(1, change('a', 0)), b: snapshot(2, change('b', 1)) });
      const expected = '    --x---y---|';
      expectObservable(source.pipe(trigger(leading), renders)).toBe(expected, { x: 1, y: 2 });
    });
  });

  it('keeps the maximum wait under constant churn', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // A change every 2 frames: a triggers at once, then the window never sees 3 frames of quiet;
      // the deadline anchored at a's trigger fires at 10 and the next one at 20.
      const values = Object.fromEntries([...'abcdefghijk'].map((k, i) => [k, snapshot(i + 1, change(k, i * 2))]));
      const source = hot('  a-b-c-d-e-f-g-h-i-j-k-|', values);
      const expected = '    s---------x---------y-|';
      const refs = (keys: string, from: number) => [...keys].map((k, i) => change(k, from + i * 2));
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        s: { snapshot: values['a'], changes: changes(refs('a', 0)) },
        x: { snapshot: values['f'], changes: changes(refs('bcdef', 2)) },
        y: { snapshot: values['k'], changes: changes(refs('ghijk', 12)) },
      });
    });
  });

  it('triggers the initial sync at once', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The initial-sync snapshot carries no change; an idle controller renders it without waiting.
      const source = hot('  a-------|', { a: snapshot(1) });
      const expected = '    t-------|';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        t: { snapshot: snapshot(1), changes: changes([], 0) },
      });
    });
  });

  it('delivers a change pending in the window when the source completes', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // a triggered at once; b waits in the window and is flushed by the completion at 2.
      const [c1, c2] = [change('a', 0), change('b', 1)];
      const source = hot('  ab|', { a: snapshot(1, c1), b: snapshot(2, c2) });
      const expected = '    s-(t|)';
      expectObservable(source.pipe(trigger(leading))).toBe(expected, {
        s: { snapshot: snapshot(1, c1), changes: changes([c1]) },
        t: { snapshot: snapshot(2, c2), changes: changes([c2]) },
      });
    });
  });
});

describe('trigger stage, trailing edge (leadingEdge: false)', () => {
  it('emits a lone snapshot once the debounce time passed', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The initial-sync snapshot has no change: it still triggers, debounced.
      const source = hot('  a-------|', { a: snapshot(1) });
      const expected = '    ---t----|';
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        t: { snapshot: snapshot(1), changes: changes([], 0) },
      });
    });
  });

  it('folds a burst into one trigger carrying every change', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Three changes two frames apart: one trigger, 3 frames after the last, naming all three.
      const [c1, c2, c3] = [change('a', 0), change('b', 2), change('c', 4)];
      const source = hot('  a-b-c------|', { a: snapshot(1, c1), b: snapshot(2, c2), c: snapshot(3, c3) });
      const expected = '    -------t---|';
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        t: { snapshot: snapshot(3, c3), changes: changes([c1, c2, c3]) },
      });
    });
  });

  it('never lets constant churn delay a trigger past the maximum wait', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // A change every 2 frames never leaves a 3-frame gap; maxWait still fires every 10 frames,
      // the second deadline anchored at the first trigger rather than at the change after it.
      const values = Object.fromEntries([...'abcdefghijk'].map((k, i) => [k, snapshot(i + 1, change(k, i * 2))]));
      const source = hot('  a-b-c-d-e-f-g-h-i-j-k-|', values);
      const expected = '    ----------x---------y-|';
      const refs = (keys: string, from: number) => [...keys].map((k, i) => change(k, from + i * 2));
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        x: { snapshot: values['f'], changes: changes(refs('abcdef', 0)) },
        y: { snapshot: values['k'], changes: changes(refs('ghijk', 12)) },
      });
    });
  });

  it('anchors the deadline at the new change again after a quiet period', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b comes 4 frames after a's trigger (more than the debounce): its window is its own, so the
      // churn from b on triggers at 7 + 10 = 17, not at a's trigger + 10 = 13.
      const values = Object.fromEntries([...'bcdefgh'].map((k, i) => [k, snapshot(i + 2, change(k, 7 + i * 2))]));
      const a = snapshot(1, change('a', 0));
      const source = hot('  a------b-c-d-e-f-g-h----|', { a, ...values });
      const expected = '    ---s-------------t----u-|';
      const refs = (keys: string, from: number) => [...keys].map((k, i) => change(k, from + i * 2));
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        s: { snapshot: a, changes: changes([change('a', 0)]) },
        t: { snapshot: values['g'], changes: changes(refs('bcdefg', 7)) },
        u: { snapshot: values['h'], changes: changes(refs('h', 19)) },
      });
    });
  });

  it('starts a fresh window after each trigger', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b after a's trigger is debounced on its own and reports only its own change.
      const [c1, c2] = [change('a', 0), change('b', 5)];
      const source = hot('  a----b-------|', { a: snapshot(1, c1), b: snapshot(2, c2) });
      const expected = '    ---s----t----|';
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        s: { snapshot: snapshot(1, c1), changes: changes([c1]) },
        t: { snapshot: snapshot(2, c2), changes: changes([c2]) },
      });
    });
  });

  it('caps the change references it keeps but counts every change', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Three changes with a cap of 2: the first two are kept for trace links, the count says 3.
      const [c1, c2, c3] = [change('a', 0), change('b', 0), change('c', 0)];
      const source = hot('  (abc)---|', { a: snapshot(1, c1), b: snapshot(2, c2), c: snapshot(3, c3) });
      const expected = '    ---t----|';
      expectObservable(source.pipe(trigger({ ...timing, maxChangeRefs: 2 }))).toBe(expected, {
        t: { snapshot: snapshot(3, c3), changes: { count: 3, firstAt: 0, refs: [c1, c2] } },
      });
    });
  });

  it('delivers a pending snapshot when the source completes', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Completing inside the debounce window flushes, as debounceTime does.
      const c1 = change('a', 0);
      const source = hot('  a-|', { a: snapshot(1, c1) });
      const expected = '    --(t|)';
      expectObservable(source.pipe(trigger(timing))).toBe(expected, {
        t: { snapshot: snapshot(1, c1), changes: changes([c1]) },
      });
    });
  });

  it('passes errors through and leaves no timer behind on unsubscribe', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // An upstream error is not swallowed; after unsubscription at 2 nothing is emitted.
      const failing = hot(' a-#', { a: snapshot(1) });
      expectObservable(failing.pipe(trigger(timing))).toBe('--#');
      const quiet = hot('   a-----', { a: snapshot(1) });
      expectObservable(quiet.pipe(trigger(timing)), '--!').toBe('');
      expectSubscriptions(quiet.subscriptions).toBe('^-!');
    });
  });

  it('errors with what reading a snapshot throws, rather than leaving it unhandled', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // A snapshot that is not one (a bug upstream) arrives at frame 2: the output errors there.
      const source = hot('  a-x------|', { a: snapshot(1), x: null as unknown as ReturnType<typeof snapshot> });
      const expected = '    --#';
      expectObservable(source.pipe(trigger(timing))).toBe(expected, undefined, new TypeError("Cannot read properties of null (reading 'change')"));
    });
  });
});
