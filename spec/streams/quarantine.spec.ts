import { expect } from 'chai';
import { map, type Observable } from 'rxjs';
import type { ConfigAlert, KubeObject, LineOrigin, Rendered, RenderOutput, Snapshot, ValidationVerdict } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { Quarantine } from '../../lib/pipeline/quarantine.ts';
import { renderedFrom } from '../../lib/pipeline/rendered.ts';
import { IndexedStore } from '../../lib/store/indexed-store.ts';
import { quarantine, type Judged } from '../../streams/quarantine.ts';
import { testScheduler } from '../support/marbles.ts';
import { changes } from '../support/pipeline-values.ts';

/**
 * A small world for the quarantine stage: Ingresses whose render puts one
 * line per Ingress under `frontend f` (template line 2, the Ingress's name on
 * it), and a check that refuses the lines of the Ingresses named bad. The
 * check's alerts can name the line, or only the section.
 */

const ingress = (name: string): KubeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: 'default', resourceVersion: '1' } });
const label = (object: KubeObject) => `Ingress default/${object.metadata.name}`;

function world(names: readonly string[]): { snapshot: Snapshot; store: IndexedStore; objects: Map<string, KubeObject> } {
  const store = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
  const objects = new Map(names.map((name) => [name, ingress(name)]));
  for (const object of objects.values()) store.upsert(object);
  return { snapshot: { revision: 7, stores: new Map([['ingresses', store]]), change: undefined }, store, objects };
}

function renderOf(snapshot: Snapshot): RenderOutput {
  const list = snapshot.stores.get('ingresses')!.list();
  const config = ['frontend f', '  mode http', ...list.map((object) => `  use ${object.metadata.name}`)].join('\n');
  const origins: LineOrigin[] = [
    { template: 't', line: 1, objects: [], sources: [] },
    { template: 't', line: 2, objects: [], sources: [] },
    ...list.map((object) => ({ template: 't', line: 3, objects: [label(object)], sources: [{ label: label(object), field: 'metadata.name', object }] })),
  ];
  return { files: { config, maps: {}, certificates: {}, files: {} }, excluded: [], warnings: [], origins: new Map([['haproxy.cfg', origins]]) };
}

/** Alerts for the lines of bad Ingresses: located at the line, or naming only the proxy. */
function verdictOf(config: Rendered, bad: ReadonlySet<string>, located: boolean): ValidationVerdict {
  const alerts: ConfigAlert[] = [];
  config.files.config.split('\n').forEach((line, index) => {
    const name = /^ {2}use (\S+)$/.exec(line)?.[1];
    if (name === undefined || !bad.has(name)) return;
    const detail = `no such thing '${name}'`;
    alerts.push(
      located
        ? { message: `parsing [haproxy.cfg:${index + 1}] : ${detail}`, detail, locations: [{ file: 'haproxy.cfg', line: index + 1 }], files: [], sections: [] }
        : { message: `Proxy 'f': ${detail}`, detail: `Proxy 'f': ${detail}`, locations: [], files: [], sections: ['f'] },
    );
  });
  return alerts.length === 0 ? { status: 'valid' } : { status: 'invalid', message: alerts.map((a) => a.message).join('\n'), alerts };
}

const lines = (judged: Judged) =>
  judged.config.files.config
    .split('\n')
    .filter((line) => line.startsWith('  use '))
    .map((line) => line.slice(6));

describe('quarantine stage', () => {
  function setup(names: readonly string[], bad: readonly string[], located = true) {
    const { snapshot, store, objects } = world(names);
    const book = new Quarantine();
    const reports: Outcome[] = [];
    const renders: string[][] = [];
    const checks: string[][] = [];
    const badSet = new Set(bad);
    const first = renderedFrom(renderOf(snapshot), { snapshot, changes: changes([]) }, []);
    const judged: Judged = { config: first, verdict: verdictOf(first, badSet, located), validations: 1 };
    return { snapshot, store, objects, book, reports, renders, checks, badSet, judged };
  }

  it('passes a valid configuration through untouched, rendering and checking nothing more', () => {
    const { judged, book, reports } = setup(['a', 'b'], []);
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Nothing to repair: the judged configuration is the output, at once.
      const source = hot('  j--|', { j: judged });
      const render = () => cold<RenderOutput>('#');
      const check = () => cold<ValidationVerdict>('#');
      const expected = '    j--|';
      expectObservable(source.pipe(quarantine({ render, check, book, report: (o) => reports.push(o) }))).toBe(expected, { j: judged });
    });
    expect(reports).to.deep.equal([]);
  });

  it('quarantines the object alone on the refused line: one render and one validation more, and the rest deploys', () => {
    const s = setup(['a', 'b', 'c'], ['b']);
    let output: Judged | undefined;
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // The render again takes 2 frames, the check 3: the repaired configuration leaves at frame 5.
      const source = hot('  j-------|', { j: s.judged });
      const render = (snapshot: Snapshot): Observable<RenderOutput> => {
        s.renders.push(
          snapshot.stores
            .get('ingresses')!
            .list()
            .map((o) => o.metadata.name),
        );
        return cold('--(o|)', { o: renderOf(snapshot) });
      };
      const check = (config: Rendered): Observable<ValidationVerdict> => {
        s.checks.push(lines({ config, verdict: { status: 'valid' }, validations: 0 }));
        return cold('---(v|)', { v: verdictOf(config, s.badSet, true) });
      };
      const expected = '    -----r--|';
      const stage = quarantine({ render, check, book: s.book, report: (o) => s.reports.push(o) });
      expectObservable(
        source.pipe(
          stage,
          map((judged) => ((output = judged), 'done')),
        ),
      ).toBe(expected, { r: 'done' });
    });
    expect(s.renders).to.deep.equal([['a', 'c']]);
    expect(s.checks).to.deep.equal([['a', 'c']]);
    expect(output!.verdict).to.deep.equal({ status: 'valid' });
    expect(output!.validations).to.equal(2);
    expect(output!.config.revision).to.equal(7);
    expect(s.book.entries.map((entry) => [entry.store, entry.object])).to.deep.equal([['ingresses', s.objects.get('b')]]);
    const problem = {
      object: 'Ingress default/b',
      field: 'metadata.name',
      message: "HAProxy refused the configuration with it, left out until it changes: haproxy.cfg:4: no such thing 'b'",
    };
    expect(output!.config.excluded).to.deep.equal([problem]);
    expect(s.reports).to.deep.equal([
      {
        type: 'quarantined',
        by: 'validation',
        revision: 7,
        hash: output!.config.hash,
        objects: [problem],
        files: output!.config.files,
        excluded: [problem],
        warnings: [],
        total: 1,
        validations: 2,
      },
    ]);
  });

  it('quarantines every object alone on a refused line at once', () => {
    const s = setup(['a', 'b', 'c', 'd'], ['a', 'd']);
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Two refused lines, two culprits, still one render and one validation more.
      const source = hot('  j----|', { j: s.judged });
      const render = (snapshot: Snapshot) => (s.renders.push([]), cold('-(o|)', { o: renderOf(snapshot) }));
      const check = (config: Rendered) => cold('-(v|)', { v: verdictOf(config, s.badSet, true) });
      const expected = '    --r--|';
      expectObservable(source.pipe(quarantine({ render, check, book: s.book, report: () => undefined }), map(lines))).toBe(expected, { r: ['b', 'c'] });
    });
    expect(s.renders.length).to.equal(1);
    expect(s.book.entries.map((entry) => entry.problem.object)).to.deep.equal(['Ingress default/a', 'Ingress default/d']);
  });

  it('finds the object at fault by bisection when the alert names only the section', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const s = setup(names, ['f'], false);
    let output: Judged | undefined;
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Without all 8: accepted. Without a-d: refused, so f is in e-h (a-d stay out of the trials).
      // Without e,f too: accepted, so it is e or f. Without e too: refused, so f. f is quarantined,
      // rendered and checked once more: five renders at once and five checks of two frames.
      const source = hot('  j-----------|', { j: s.judged });
      const render = (snapshot: Snapshot) => {
        s.renders.push(
          snapshot.stores
            .get('ingresses')!
            .list()
            .map((o) => o.metadata.name),
        );
        return cold('(o|)', { o: renderOf(snapshot) });
      };
      const check = (config: Rendered) => cold('--(v|)', { v: verdictOf(config, s.badSet, false) });
      const expected = '    ----------r-|';
      expectObservable(
        source.pipe(
          quarantine({ render, check, book: s.book, report: () => undefined }),
          map((j) => ((output = j), 'r')),
        ),
      ).toBe(expected, { r: 'r' });
    });
    expect(s.renders).to.deep.equal([[], ['e', 'f', 'g', 'h'], ['g', 'h'], ['f', 'g', 'h'], ['a', 'b', 'c', 'd', 'e', 'g', 'h']]);
    expect(output!.verdict.status).to.equal('valid');
    expect(output!.validations).to.equal(6);
    expect(s.book.entries.map((entry) => entry.problem)).to.deep.equal([
      { object: 'Ingress default/f', field: 'metadata.name', message: "HAProxy refused the configuration with it, left out until it changes: Proxy 'f': no such thing 'f'" },
    ]);
  });

  it('leaves a refusal no object explains as it is: nothing quarantined, the configuration invalid', () => {
    const s = setup(['a', 'b'], []);
    const alert: ConfigAlert = {
      message: "parsing [haproxy.cfg:2] : unknown keyword 'mode'",
      detail: "unknown keyword 'mode'",
      locations: [{ file: 'haproxy.cfg', line: 2 }],
      files: [],
      sections: [],
    };
    const refused: Judged = { ...s.judged, verdict: { status: 'invalid', message: alert.message, alerts: [alert] } };
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // The template's own line: the section's objects are left out in one trial, which HAProxy
      // still refuses, so none of them is at fault; the refused configuration is the output.
      const source = hot('  j---|', { j: refused });
      const render = (snapshot: Snapshot) => (s.renders.push([]), cold('-(o|)', { o: renderOf(snapshot) }));
      const check = () => cold('-(v|)', { v: refused.verdict });
      const expected = '    --j-|';
      expectObservable(source.pipe(quarantine({ render, check, book: s.book, report: (o) => s.reports.push(o) }))).toBe(expected, { j: { ...refused, validations: 2 } });
    });
    expect(s.renders.length).to.equal(1);
    expect(s.book.size).to.equal(0);
    expect(s.reports).to.deep.equal([]);
  });

  it('blames the template, not the objects, when every line a template line made is refused', () => {
    const s = setup(['a', 'b', 'c'], ['a', 'b', 'c']);
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // All three lines of template line 3 refused: the template writes something HAProxy never takes.
      const source = hot('  j-|', { j: s.judged });
      const render = () => cold<RenderOutput>('#');
      const check = () => cold<ValidationVerdict>('#');
      const expected = '    j-|';
      expectObservable(source.pipe(quarantine({ render, check, book: s.book, report: () => undefined }))).toBe(expected, { j: s.judged });
    });
    expect(s.book.size).to.equal(0);
  });

  it('gives up after its validation budget, leaving the configuration invalid', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const s = setup(names, ['b', 'c', 'f', 'h'], false);
    let output: Judged | undefined;
    testScheduler().run(({ hot, cold, expectObservable }) => {
      // Four objects at fault found one by one would take about 16 validations; the budget is 6.
      const source = hot('  j---------|', { j: s.judged });
      const render = (snapshot: Snapshot) => cold('(o|)', { o: renderOf(snapshot) });
      const check = (config: Rendered) => cold('-(v|)', { v: verdictOf(config, s.badSet, false) });
      const stage = quarantine({ render, check, book: s.book, report: () => undefined, maxValidations: 6 });
      const expected = '    -----r----|';
      expectObservable(
        source.pipe(
          stage,
          map((j) => ((output = j), 'r')),
        ),
      ).toBe(expected, { r: 'r' });
    });
    expect(output!.verdict.status).to.equal('invalid');
    expect(output!.validations).to.equal(6);
    expect(output!.verdict.status === 'invalid' && output!.verdict.message).to.match(/^gave up looking for the objects at fault after 6 validations/);
  });
});
