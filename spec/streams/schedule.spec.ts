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
});
