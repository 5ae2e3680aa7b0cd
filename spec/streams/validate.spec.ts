import { expect } from 'chai';
import { of } from 'rxjs';
import type { Rendered, ValidationVerdict } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { validate } from '../../streams/validate.ts';
import { change, changes, rendered } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

const valid: ValidationVerdict = { valid: true };

describe('validate stage', () => {
  it('validates one at a time and only the newest config waiting', () => {
    const validatedRevisions: number[] = [];
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // b and c arrive while a is validated: b is superseded and never validated, c is next.
      const [a, b, c] = [rendered(1, 'a'), rendered(2, 'b'), rendered(3, 'c')];
      const source = hot('  a-b-c-----------|', { a, b, c });
      const check = cold('  -----(v|)', { v: valid });
      const effect = (r: Rendered) => (validatedRevisions.push(r.revision), check);
      const expected = '    -----a----c-----|';
      expectObservable(source.pipe(validate({ validate: effect, report: () => undefined }))).toBe(expected, { a, c });
      expectSubscriptions(check.subscriptions).toBe(['^----!', '-----^----!']);
    });
    expect(validatedRevisions).to.deep.equal([1, 3]);
  });

  it('carries the changes of a superseded config into the one that replaces it', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // b is never validated, yet c's deployment delivers b's change too: c carries it, so latency counts from frame 2.
      const [a, b, c] = [rendered(1, 'a', [change('a', 0)]), rendered(2, 'b', [change('b', 2)]), rendered(3, 'c', [change('c', 4)])];
      const source = hot('  a-b-c-----------|', { a, b, c });
      const check = cold('  -----(v|)', { v: valid });
      const expected = '    -----a----C-----|';
      const C = { ...c, changes: changes([change('b', 2), change('c', 4)]) };
      expectObservable(source.pipe(validate({ validate: () => check, report: () => undefined }))).toBe(expected, { a, C });
    });
  });

  it('does not validate a config identical to the last validated one, and reports the skip', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // a2 renders the same content as a (another revision): neither validated nor passed on again.
      const [a, a2, b] = [rendered(1, 'same'), rendered(2, 'same'), rendered(3, 'other')];
      const source = hot('  a---x---b---|', { a, x: a2, b });
      const check = cold('  -(v|)', { v: valid });
      const expected = '    -a-------b--|';
      expectObservable(source.pipe(validate({ validate: () => check, report: (o) => reports.push(o) }))).toBe(expected, {
        a,
        b,
      });
      expectSubscriptions(check.subscriptions).toBe(['^!', '--------^!']);
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['validated', 'validationSkipped', 'validated']);
    expect(reports[1]).to.deep.equal({ type: 'validationSkipped', revision: 2, hash: rendered(2, 'same').hash, valid: true });
  });

  it('reports an invalid config, keeps it out and does not re-check the same content', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // bad is rejected with HAProxy's message; the identical bad2 is not re-checked; good passes.
      const [bad, bad2, good] = [rendered(1, 'bad'), rendered(2, 'bad'), rendered(3, 'good')];
      const source = hot('  a---b---c---|', { a: bad, b: bad2, c: good });
      const rejected = cold('-(v|)', { v: { valid: false, message: "[ALERT] parsing [haproxy.cfg:3]: unknown keyword 'bnd'" } });
      const accepted = cold('-(v|)', { v: valid });
      const effect = (r: Rendered) => (r.files.config === 'bad' ? rejected : accepted);
      const expected = '    ---------c--|';
      expectObservable(source.pipe(validate({ validate: effect, report: (o) => reports.push(o) }))).toBe(expected, {
        c: good,
      });
      expectSubscriptions(rejected.subscriptions).toBe('^!');
    });
    expect(reports.map((o) => [o.type, 'revision' in o ? o.revision : 0])).to.deep.equal([
      ['validationFailed', 1],
      ['validationSkipped', 2],
      ['validated', 3],
    ]);
    expect(reports[1]).to.deep.equal({ type: 'validationSkipped', revision: 2, hash: rendered(2, 'bad').hash, valid: false });
    expect(reports[0]).to.include({ error: "[ALERT] parsing [haproxy.cfg:3]: unknown keyword 'bnd'", durationMs: 1 });
  });

  it('reports a validator that could not run and checks the same content again next time', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // The first check errors (haproxy could not start): no verdict, so the identical retry is checked.
      const [a, a2] = [rendered(1, 'same'), rendered(2, 'same')];
      const source = hot('  a---b---|', { a, b: a2 });
      const broken = cold<ValidationVerdict>(' -#', {}, new Error('spawn haproxy ENOENT'));
      const working = cold('-(v|)', { v: valid });
      let calls = 0;
      const effect = () => (calls++ === 0 ? broken : working);
      const expected = '    -----b--|';
      expectObservable(source.pipe(validate({ validate: effect, report: (o) => reports.push(o) }))).toBe(expected, {
        b: a2,
      });
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['validationFailed', 'validated']);
    expect(reports[0]).to.include({ error: 'spawn haproxy ENOENT' });
  });

  it('passes the stream on when verdicts arrive synchronously', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // A cached verdict returns at once; every distinct config still flows in order.
      const [a, b] = [rendered(1, 'a'), rendered(2, 'b')];
      const source = hot('  a-b-|', { a, b });
      const expected = '    a-b-|';
      expectObservable(source.pipe(validate({ validate: () => of(valid), report: () => undefined }))).toBe(expected, {
        a,
        b,
      });
    });
  });
});
