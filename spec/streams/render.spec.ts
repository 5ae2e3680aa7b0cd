import { expect } from 'chai';
import { map, of, type Observable } from 'rxjs';
import type { KubeObject, RenderOutput, Snapshot } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { Quarantine } from '../../lib/pipeline/quarantine.ts';
import { IndexedStore } from '../../lib/store/indexed-store.ts';
import { render } from '../../streams/render.ts';
import { change, changes, output, rendered, trigger } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

const byRevision = (snapshot: Snapshot) => output(`cfg-${snapshot.revision}`);

describe('render stage', () => {
  it('renders each trigger and reports how long it took', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Rendering takes 2 frames; the result carries the revision, hash and changes of its trigger.
      const c1 = change('a', 0);
      const source = hot('  a------|', { a: trigger(1, [c1]) });
      const work = cold('   --(x|)');
      const effect = (s: Snapshot): Observable<RenderOutput> => work.pipe(map(() => byRevision(s)));
      const expected = '    --r----|';
      expectObservable(source.pipe(render({ render: effect, report: (o) => reports.push(o) }))).toBe(expected, {
        r: rendered(1, 'cfg-1', [c1]),
      });
    });
    const c1 = change('a', 0);
    expect(reports).to.deep.equal([
      {
        type: 'rendered',
        revision: 1,
        hash: rendered(1, 'cfg-1').hash,
        durationMs: 2,
        changes: changes([c1]),
        files: rendered(1, 'cfg-1').files,
        excluded: [],
        warnings: [],
      },
    ]);
  });

  it('reports the template lines a render found reading a name about to go, with its outcome', () => {
    const reports: Outcome[] = [];
    const deprecations = ['templates.haproxyConfig: line 2: reads `ingress`, the old name of `routes`'];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // a's render is the first to read the old name and says so; b's says nothing (the renderer tells each once).
      const source = hot('  a---b---|', { a: trigger(1), b: trigger(2) });
      const work = cold('   -(x|)');
      const effect = (s: Snapshot): Observable<RenderOutput> => work.pipe(map(() => (s.revision === 1 ? { ...byRevision(s), deprecations } : byRevision(s))));
      const expected = '    -r---s--|';
      expectObservable(source.pipe(render({ render: effect, report: (o) => reports.push(o) }))).toBe(expected, {
        r: { ...rendered(1, 'cfg-1'), deprecations },
        s: rendered(2, 'cfg-2'),
      });
    });
    expect(reports.map((report) => (report.type === 'rendered' ? report.deprecations : report.type))).to.deep.equal([deprecations, undefined]);
  });

  it('lets a newer trigger supersede a render not yet delivered', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // b arrives while a renders: a's render is cancelled and only b's result is delivered.
      const source = hot('  a-b-------|', { a: trigger(1), b: trigger(2) });
      const work = cold('   ---(x|)');
      const effect = (s: Snapshot) => work.pipe(map(() => byRevision(s)));
      const expected = '    -----r----|';
      expectObservable(source.pipe(render({ render: effect, report: () => undefined }))).toBe(expected, {
        r: rendered(2, 'cfg-2'),
      });
      expectSubscriptions(work.subscriptions).toBe(['^-!', '--^--!']);
    });
  });

  it('reports a failed render and keeps rendering later triggers', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // a's template fails: nothing is delivered for it, the error is reported, b renders normally.
      const source = hot('  a---b---|', { a: trigger(1), b: trigger(2) });
      const failing = cold<RenderOutput>('-#', {}, new Error('template haproxy.cfg line 3: unclosed section'));
      const working = cold('-(x|)');
      const effect = (s: Snapshot) => (s.revision === 1 ? failing : working.pipe(map(() => byRevision(s))));
      const expected = '    -----r--|';
      expectObservable(source.pipe(render({ render: effect, report: (o) => reports.push(o) }))).toBe(expected, {
        r: rendered(2, 'cfg-2'),
      });
    });
    expect(reports.map((o) => (o.type === 'renderFailed' ? o.error : o.type))).to.deep.equal(['template haproxy.cfg line 3: unclosed section', 'rendered']);
  });

  it('treats an effect that ends without a result as a failure', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // A render effect must produce files; completing empty is reported, not silently ignored.
      const source = hot('  a---|', { a: trigger(1) });
      const expected = '    ----|';
      expectObservable(source.pipe(render({ render: () => cold<RenderOutput>('-|'), report: (o) => reports.push(o) }))).toBe(expected);
    });
    expect(reports.map((o) => o.type)).to.deep.equal(['renderFailed']);
  });

  it('leaves quarantined objects out of every render, listed as excluded, until they change', () => {
    const reports: Outcome[] = [];
    const store = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
    const thing = (name: string, version: string): KubeObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name, namespace: 'default', resourceVersion: version } });
    const [good, bad] = [thing('good', '1'), thing('bad', '1')];
    store.upsert(good);
    store.upsert(bad);
    const stores = new Map([['things', store]]);
    const book = new Quarantine();
    book.add([{ source: { label: 'Thing default/bad', field: 'spec.x', object: bad }, message: 'haproxy.cfg:3: refused' }], stores);
    const problem = book.problems[0]!;
    const seen: string[][] = [];
    testScheduler().run(({ hot, expectObservable }) => {
      // Revision 1 renders without bad and lists it; before revision 2, bad changes: it is
      // released (reported) and rendered again.
      const source = hot('  a---b--|', {
        a: { snapshot: { revision: 1, stores, change: undefined }, changes: changes([]) },
        b: { snapshot: { revision: 2, stores, change: undefined }, changes: changes([]) },
      });
      const effect = (s: Snapshot) => {
        const names = s.stores
          .get('things')!
          .list()
          .map((o) => o.metadata.name);
        seen.push(names);
        return of(output(names.join(',')));
      };
      const expected = '    a---b--|';
      const stage = render({ render: effect, report: (o) => reports.push(o), quarantine: book });
      expectObservable(
        source.pipe(
          stage,
          map((r) => r.excluded),
        ),
      ).toBe(expected, { a: [problem], b: [] });
      hot('---x').subscribe(() => store.upsert(thing('bad', '2')));
    });
    expect(seen).to.deep.equal([['good'], ['good', 'bad']]);
    expect(reports.filter((o) => o.type === 'released')).to.deep.equal([{ type: 'released', revision: 2, objects: [problem], total: 0 }]);
  });
});
