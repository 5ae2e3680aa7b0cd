import { expect } from 'chai';
import { map, of } from 'rxjs';
import type { Rendered, RenderOutput, Snapshot, ValidationVerdict } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { Quarantine } from '../../lib/pipeline/quarantine.ts';
import { renderedFrom } from '../../lib/pipeline/rendered.ts';
import { IndexedStore } from '../../lib/store/indexed-store.ts';
import { validate } from '../../streams/validate.ts';
import { change, changes, output, rendered } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

const valid: ValidationVerdict = { status: 'valid' };

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
      const rejected = cold<ValidationVerdict>('-(v|)', { v: { status: 'invalid', message: "[ALERT] parsing [haproxy.cfg:3]: unknown keyword 'bnd'", alerts: [] } });
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

  it('retries a validation that could not run with backoff, never calling it invalid, until it runs', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Attempt 1 errors (no process), attempt 2 has no space for the copy: backoff of 10 then 20
      // frames (no jitter), then attempt 3 runs and the same configuration is delivered, no new change needed.
      const a = rendered(1, 'a');
      const source = hot('  a---------------------------------------|', { a });
      const broken = cold<ValidationVerdict>('  -#', {}, new Error('spawn haproxy EAGAIN'));
      const full = cold<ValidationVerdict>('    -(v|)', { v: { status: 'unavailable', message: 'ENOSPC: no space left on device' } });
      const working = cold<ValidationVerdict>('-(v|)', { v: valid });
      const attempts = [broken, full, working];
      let calls = 0;
      const effect = () => attempts[calls++]!;
      const expected = '    ---------------------------------a------|';
      const stage = validate({ validate: effect, report: (o) => reports.push(o), retry: { baseDelayMs: 20, maxDelayMs: 1_000 }, random: () => 0 });
      expectObservable(source.pipe(stage)).toBe(expected, { a });
    });
    expect(reports).to.deep.equal([
      { type: 'validationUnavailable', revision: 1, hash: rendered(1, 'a').hash, error: 'spawn haproxy EAGAIN', attempt: 1, retryInMs: 10 },
      { type: 'validationUnavailable', revision: 1, hash: rendered(1, 'a').hash, error: 'ENOSPC: no space left on device', attempt: 2, retryInMs: 20 },
      { type: 'validated', revision: 1, hash: rendered(1, 'a').hash, durationMs: 33 },
    ]);
  });

  it('gives way to a newer configuration while it waits to retry, which then carries the changes of both', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // a cannot be validated; b arrives during a's 50-frame backoff, which is cut short: b is
      // validated at once, and its deployment delivers a's change too.
      const [a, b] = [rendered(1, 'a', [change('a', 0)]), rendered(2, 'b', [change('b', 5)])];
      const source = hot('  a----b----------|', { a, b });
      const unavailable = cold<ValidationVerdict>('-(v|)', { v: { status: 'unavailable', message: 'EMFILE: too many open files' } });
      const working = cold<ValidationVerdict>('  -(v|)', { v: valid });
      const effect = (r: Rendered) => (r.revision === 1 ? unavailable : working);
      const expected = '    ------B---------|';
      const stage = validate({ validate: effect, report: (o) => reports.push(o), retry: { baseDelayMs: 100, maxDelayMs: 1_000 }, random: () => 0 });
      expectObservable(source.pipe(stage)).toBe(expected, { B: { ...b, changes: changes([change('a', 0), change('b', 5)]) } });
      expectSubscriptions(unavailable.subscriptions).toBe('^!');
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['validationUnavailable', 'validated']);
  });

  it('sends a refused configuration through the quarantine and delivers it without the objects at fault', () => {
    const reports: Outcome[] = [];
    const store = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
    const bad = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'bad', namespace: 'default' } };
    store.upsert(bad);
    const snapshot = { revision: 1, stores: new Map([['things', store]]), change: undefined };
    const source = { label: 'Thing default/bad', field: 'spec.value', object: bad };
    const refusedOutput: RenderOutput = {
      ...output('  weight 999'),
      origins: new Map([['haproxy.cfg', [{ template: 't', line: 4, objects: [source.label], sources: [source] }]]]),
    };
    const first = renderedFrom(refusedOutput, { snapshot, changes: changes([]) }, []);
    const book = new Quarantine();
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // HAProxy refuses line 1, which holds the value of Thing default/bad: rendered again without
      // it (1 frame) and validated again (1 frame), the repaired configuration leaves at frame 3.
      const input = hot('   a-----|', { a: first });
      const alert = { message: 'parsing [haproxy.cfg:1] : weight too high', detail: 'weight too high', locations: [{ file: 'haproxy.cfg', line: 1 }], files: [], sections: [] };
      const effect = (r: Rendered) => cold<ValidationVerdict>('-(v|)', { v: r.files.config.includes('999') ? { status: 'invalid', message: alert.message, alerts: [alert] } : valid });
      const renderAgain = (s: Snapshot) => cold('-(o|)', { o: output(s.stores.get('things')!.size === 0 ? 'fine' : 'still bad 999') });
      const stage = validate({ validate: effect, report: (o) => reports.push(o), quarantine: { book, render: renderAgain } });
      const expected = '    ---r--|';
      expectObservable(
        input.pipe(
          stage,
          map((r) => r.files.config),
        ),
      ).toBe(expected, { r: 'fine' });
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['quarantined', 'validated']);
    expect(reports[1]).to.deep.include({ revision: 1, durationMs: 3 });
    expect(book.problems.map((p) => `${p.object} ${p.field}`)).to.deep.equal(['Thing default/bad spec.value']);
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
