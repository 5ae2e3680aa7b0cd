import { expect } from 'chai';
import { map, Observable, take } from 'rxjs';
import { serialLatest } from '../../../streams/operators/serial-latest.ts';
import { testScheduler } from '../../support/marbles.ts';

describe('serialLatest', () => {
  it('runs one at a time and then only the newest value queued meanwhile', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b is superseded by c while a runs: b never starts.
      const source = hot('  a-b-c-----------|');
      const work = cold('   -----(x|)');
      const expected = '    -----A----C-----|';
      expectObservable(source.pipe(serialLatest((v) => work.pipe(map(() => v.toUpperCase()))))).toBe(expected);
    });
  });

  it('folds a value replaced in the pending slot into the one that replaces it', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b waits, then c takes its place: c runs carrying b, so what b stood for is not lost.
      const source = hot('  a-b-c-----------|');
      const work = cold('   -----(x|)');
      const expected = '    -----A----C-----|';
      const fold = (dropped: string, next: string) => `${dropped}+${next}`;
      expectObservable(source.pipe(serialLatest((v) => work.pipe(map(() => v)), fold))).toBe(expected, { A: 'a', C: 'b+c' });
    });
  });

  it('starts a value at once when nothing runs', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Each value arrives after the previous one finished: no waiting, no dropping.
      const source = hot('  a-----b-----|');
      const work = cold('   --(x|)');
      const expected = '    --a-----b---|';
      expectObservable(source.pipe(serialLatest((v) => work.pipe(map(() => v))))).toBe(expected);
    });
  });

  it('completes only after the running and the pending work are done', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // The source completes while a runs and b waits: both still deliver.
      const source = hot('  ab|');
      const work = cold('   ---(x|)');
      const expected = '    ---a--(b|)';
      expectObservable(source.pipe(serialLatest((v) => work.pipe(map(() => v))))).toBe(expected);
    });
  });

  it('tells the running work when a newer value is waiting', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // a listens to its superseded notifier and stops early when b arrives at frame 3.
      const source = hot('  a--b------|');
      const bWork = cold('     -----(x|)');
      const work = (v: string, superseded: Observable<void>) =>
        v === 'a'
          ? superseded.pipe(
              take(1),
              map(() => 'a-superseded'),
            )
          : bWork.pipe(map(() => v));
      const expected = '    ---s----b-|';
      expectObservable(source.pipe(serialLatest(work))).toBe(expected, { s: 'a-superseded', b: 'b' });
    });
  });

  it('forwards an error of the work', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Stages catch inside the work; an error that escapes it is not swallowed here.
      const source = hot('  a---|');
      const expected = '    --#';
      expectObservable(source.pipe(serialLatest(() => cold('--#')))).toBe(expected);
    });
  });

  it('unsubscribes from the source and the running work when unsubscribed', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Nothing is left subscribed after the consumer leaves at frame 4.
      const source = hot('  a-------|');
      const work = cold('   ------x|');
      const unsub = '       ----!';
      expectObservable(source.pipe(serialLatest(() => work)), unsub).toBe('');
      expectSubscriptions(source.subscriptions).toBe('^---!');
      expectSubscriptions(work.subscriptions).toBe('^---!');
    });
  });

  it('handles work that completes synchronously without recursion', () => {
    const seen: number[] = [];
    new Observable<number>((s) => {
      for (let i = 0; i < 20_000; i++) s.next(i);
      s.complete();
    })
      .pipe(serialLatest((v: number) => new Observable<number>((s) => (s.next(v), s.complete()))))
      .subscribe((v) => seen.push(v));
    expect(seen).to.have.length(20_000);
  });

  it('errors with what the work throws, rather than leaving it unhandled', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // b's work throws when b starts at frame 3, after a finished: the output errors there and leaves the source.
      const source = hot('  a--b----|');
      const work = (v: string) => {
        if (v === 'b') throw new Error('work failed');
        return cold('--(x|)', { x: v });
      };
      expectObservable(source.pipe(serialLatest(work))).toBe('  --a#', undefined, new Error('work failed'));
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('errors with what the work throws when it starts after the running one (from its completion)', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b waits behind a; a completes at frame 4 and starting b throws there.
      const source = hot('  ab------|');
      const work = (v: string) => {
        if (v === 'b') throw new Error('work failed');
        return cold('----(x|)', { x: v });
      };
      expectObservable(source.pipe(serialLatest(work))).toBe('  ----(a#)', undefined, new Error('work failed'));
    });
  });

  it('errors with what the fold throws', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // c replaces b in the pending slot at frame 2 and the fold throws: the output errors there.
      const source = hot('  abc-----|');
      const fold = (): string => {
        throw new Error('fold failed');
      };
      expectObservable(source.pipe(serialLatest((v) => cold('-----(x|)', { x: v }), fold))).toBe('  --#', undefined, new Error('fold failed'));
    });
  });
});
