import { expect } from 'chai';
import { withChangesOf } from '../../lib/pipeline/changes.ts';
import type { Rendered, RenderedFiles, ValidationVerdict } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { validate } from '../../streams/validate.ts';
import { change, rendered } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

const valid: ValidationVerdict = { status: 'valid' };
const invalid: ValidationVerdict = { status: 'invalid', message: "[ALERT] unable to load certificate 'ssl/shop.pem'", alerts: [] };

/** Stands in for the planner: a configuration whose text starts with `rt` differs from the last valid one only in what the runtime applies. */
const runtimeOnly = (_validated: RenderedFiles, next: RenderedFiles): boolean => next.config.startsWith('rt');

describe('validate stage, runtime-first (runtime-only changes deployed while haproxy -c runs)', () => {
  it('passes a runtime-only change on at once, pending, and again, confirmed, when its validation passes', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // a is the first configuration: nothing validated to compare with, so it waits for its verdict (frame 3).
      // b differs from a only at runtime: out at frame 6, when it arrives, pending (its files wait), not at
      // frame 9 when its verdict comes; then it leaves again, confirmed and with no changes of its own (B).
      const [a, b] = [rendered(1, 'a'), rendered(2, 'rt b', [change('b', 6)])];
      const source = hot('  a-----b-----|', { a, b });
      const check = cold('  ---(v|)', { v: valid });
      const expected = '    ---a--b--B--|';
      expectObservable(source.pipe(validate({ validate: () => check, report: (o) => reports.push(o), runtimeFirst: runtimeOnly }))).toBe(expected, {
        a,
        b: { ...b, runtimeFirst: 'pending' },
        B: { ...b, runtimeFirst: 'confirmed', changes: { count: 0, firstAt: 9, refs: [] } },
      });
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['validated', 'runtimeFirst', 'validated']);
  });

  it('reverts to the last valid configuration when the runtime-only change is refused, and reports the failure', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b goes out at once (frame 6); haproxy -c refuses it at frame 9: a goes out again, carrying b's
      // change, so the deploy stage plans b -> a, exactly the runtime operations that undo b's.
      const [a, b] = [rendered(1, 'a'), rendered(2, 'rt b', [change('b', 6)])];
      const source = hot('  a-----b-----|', { a, b });
      const check = (r: Rendered) => cold('---(v|)', { v: r.revision === 2 ? invalid : valid });
      const expected = '    ---a--b--A--|';
      expectObservable(source.pipe(validate({ validate: check, report: (o) => reports.push(o), runtimeFirst: runtimeOnly }))).toBe(expected, {
        a,
        b: { ...b, runtimeFirst: 'pending' },
        A: { ...a, changes: b.changes },
      });
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['validated', 'runtimeFirst', 'validationFailed', 'runtimeReverted']);
    expect(reports[3]).to.deep.equal({ type: 'runtimeReverted', revision: 2, hash: rendered(2, 'rt b').hash, to: rendered(1, 'a').hash });
  });

  it('holds a change the runtime cannot apply until its validation passes, as without the setting', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // c needs a reload: it leaves at its verdict (frame 9), never before.
      const [a, c] = [rendered(1, 'a'), rendered(2, 'c')];
      const source = hot('  a-----c-----|', { a, c });
      const check = cold('  ---(v|)', { v: valid });
      const expected = '    ---a-----c--|';
      expectObservable(source.pipe(validate({ validate: () => check, report: () => undefined, runtimeFirst: runtimeOnly }))).toBe(expected, { a, c });
    });
  });

  it('keeps latest-wins: a newer change while one is validated waits, only the newest, compared with the last valid', () => {
    const validatedRevisions: number[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // A check takes 4 frames here. b goes out at 6 and is validated until 10; c and d arrive meanwhile, c is
      // superseded. b passes and leaves again, confirmed (B); d is compared with b, goes out right after (10)
      // and is validated until 14 (D).
      const [a, b, c, d] = [rendered(1, 'a'), rendered(2, 'rt b'), rendered(3, 'rt c'), rendered(4, 'rt d')];
      const source = hot('  a-----bcd------|', { a, b, c, d });
      const check = cold('  ----(v|)', { v: valid });
      const effect = (r: Rendered) => (validatedRevisions.push(r.revision), check);
      const expected = '    ----a-b---(Bd)D|';
      const none = (at: number) => ({ count: 0, firstAt: at, refs: [] });
      expectObservable(source.pipe(validate({ validate: effect, report: () => undefined, runtimeFirst: runtimeOnly }))).toBe(expected, {
        a,
        b: { ...b, runtimeFirst: 'pending' },
        B: { ...b, runtimeFirst: 'confirmed', changes: none(10) },
        d: { ...d, runtimeFirst: 'pending', changes: withChangesOf(c, d).changes },
        D: { ...d, runtimeFirst: 'confirmed', changes: none(14) },
      });
    });
    expect(validatedRevisions).to.deep.equal([1, 2, 4]);
  });

  it('reverts a runtime-only change that is never judged because a newer one replaced it, before the newer one waits for its verdict', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b goes out at 6, its validation cannot run (backoff 200 frames); c, which needs a reload, arrives at 8
      // and cuts the backoff: b, never judged, is reverted to a at once (its change delivered by the revert,
      // not carried into c), then c waits for its verdict (11).
      const [a, b, c] = [rendered(1, 'a'), rendered(2, 'rt b'), rendered(3, 'c')];
      const source = hot('  a-----b-c------|', { a, b, c });
      const unavailable = cold<ValidationVerdict>('-(v|)', { v: { status: 'unavailable', message: 'EMFILE: too many open files' } });
      const check = cold('  ---(v|)', { v: valid });
      const effect = (r: Rendered) => (r.revision === 2 ? unavailable : check);
      const expected = '    ---a--b-A--c---|';
      const stage = validate({ validate: effect, report: () => undefined, runtimeFirst: runtimeOnly, retry: { baseDelayMs: 200, maxDelayMs: 1_000 }, random: () => 0 });
      expectObservable(source.pipe(stage)).toBe(expected, { a, b: { ...b, runtimeFirst: 'pending' }, A: { ...a, changes: b.changes }, c });
    });
  });
});
