import { schedule } from '../../streams/schedule.ts';
import { testScheduler } from '../support/marbles.ts';

// Marbles use a minimum interval of 5 frames in place of 2 s.
const minIntervalMs = 5;

describe('schedule stage', () => {
  it('deploys the first config at once', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Nothing deployed recently: no reason to wait.
      const source = hot('  a------|');
      const expected = '    a------|';
      expectObservable(source.pipe(schedule({ minIntervalMs }))).toBe(expected);
    });
  });

  it('deploys the last config of a window at its end and nothing in between', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b and c fall in a's window: only c goes out, when the window ends at 5.
      const source = hot('  a-b-c-------|');
      const expected = '    a----c------|';
      expectObservable(source.pipe(schedule({ minIntervalMs }))).toBe(expected);
    });
  });

  it('keeps the minimum interval after a trailing deployment too', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // c went out at 5 and opened a new window: d at 7 waits until 10.
      const source = hot('  a-b-c--d--------|');
      const expected = '    a----c----d-----|';
      expectObservable(source.pipe(schedule({ minIntervalMs }))).toBe(expected);
    });
  });

  it('folds the configs it drops into the one it sends at the end of the window', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b never goes out, but c (which does) carries it; d after c starts a fresh fold.
      const source = hot('  a-b-c----d------|');
      const expected = '    a----C----d-----|';
      const fold = (dropped: string, next: string) => `${dropped}+${next}`;
      expectObservable(source.pipe(schedule({ minIntervalMs, fold }))).toBe(expected, { a: 'a', C: 'b+c', d: 'd' });
    });
  });

  it('deploys at once again after a quiet period', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b arrives long after a's window closed, so it is not delayed.
      const source = hot('  a---------b---|');
      const expected = '    a---------b---|';
      expectObservable(source.pipe(schedule({ minIntervalMs }))).toBe(expected);
    });
  });

  it('sends a config exempt from the interval at once outside a window, and opens none', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // C (a runtime-first confirmation: it only writes files) comes after a's window: out at once, and b
      // two frames later is not held by it.
      const source = hot('  a------C-b------|');
      const expected = '    a------C-b------|';
      expectObservable(source.pipe(schedule({ minIntervalMs, exempt: (v) => v === 'C' }))).toBe(expected);
    });
  });

  it('holds a config exempt from the interval until the open window ends, and opens no new one', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // C falls in a's window: it waits until 5, as any config would; b at 6 goes out at once, where after a
      // trailing c it would wait until 10.
      const source = hot('  a-C---b---|');
      const expected = '    a----Cb---|';
      expectObservable(source.pipe(schedule({ minIntervalMs, exempt: (v) => v === 'C' }))).toBe(expected);
    });
  });

  it('opens a window for an exempt config folded over one that is not', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b (pending) and C (its confirmation) fall in a's window: folded, they go out at 5 as b would have, and
      // open a window as b would have: d at 8 waits until 10.
      const source = hot('  a-b-C---d-----|');
      const expected = '    a----F----d---|';
      const fold = (dropped: string, next: string) => `${dropped}+${next}`;
      expectObservable(source.pipe(schedule({ minIntervalMs, fold, exempt: (v) => v === 'C' }))).toBe(expected, { a: 'a', F: 'b+C', d: 'd' });
    });
  });
});
