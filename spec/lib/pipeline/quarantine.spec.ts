import { expect } from 'chai';
import { Bisection } from '../../../lib/pipeline/bisection.ts';
import { blame } from '../../../lib/pipeline/blame.ts';
import type { ConfigAlert, KubeObject, LineOrigin, ValueSource } from '../../../lib/pipeline/model.ts';
import { Quarantine } from '../../../lib/pipeline/quarantine.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';

const object = (kind: string, name: string, version = '1'): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name, namespace: 'default', resourceVersion: version } });
const source = (of: KubeObject, field = 'spec.x'): ValueSource => ({ label: `${of.kind} default/${of.metadata.name}`, field, object: of });
const origin = (template: string, line: number, ...sources: ValueSource[]): LineOrigin => ({ template, line, objects: sources.map((s) => s.label), sources });
const alert = (file: string | undefined, line: number, detail: string, extra: Partial<ConfigAlert> = {}): ConfigAlert => ({
  message: file ? `parsing [${file}:${line}] : ${detail}` : detail,
  detail,
  locations: file ? [{ file, line }] : [],
  files: [],
  sections: [],
  ...extra,
});

describe('blame', () => {
  const [a, b, c, secret] = [object('Ingress', 'a'), object('Ingress', 'b'), object('Ingress', 'c'), object('Secret', 'tls')];
  const input = {
    files: {
      config: 'frontend f\n  bind :443 ssl crt-list general/crt-list.txt\n  use a\n  use b c\nbackend x\n  mode http\n',
      maps: {},
      certificates: { 'tls.pem': 'PEM' },
      files: { 'crt-list.txt': 'ssl/tls.pem a.example.com\n' },
    },
    origins: new Map([
      ['haproxy.cfg', [origin('t', 1), origin('t', 2), origin('t', 3, source(a)), origin('t', 4, source(b), source(c)), origin('t', 5), origin('t', 6)]],
      ['general/crt-list.txt', [origin('c', 1, source(secret, 'data'))]],
    ]),
  };

  it('blames the object alone on the refused line, with the place and what HAProxy said', () => {
    expect(blame(input, [alert('haproxy.cfg', 3, 'bad value')])).to.deep.equal({
      culprits: [{ source: source(a), message: 'haproxy.cfg:3: bad value' }],
      suspects: [],
      unexplained: [],
    });
  });

  it('makes suspects of several objects on a line, of the section of a line without objects, or of the proxies named', () => {
    expect(blame(input, [alert('haproxy.cfg', 4, 'x')]).suspects.map((s) => s.sources.map((v) => v.label))).to.deep.equal([['Ingress default/b', 'Ingress default/c']]);
    expect(blame(input, [alert('haproxy.cfg', 2, 'x')]).suspects.map((s) => s.sources.map((v) => v.label))).to.deep.equal([['Ingress default/a', 'Ingress default/b', 'Ingress default/c']]);
    expect(blame(input, [alert(undefined, 0, "Proxy 'f': y", { sections: ['f'] })]).suspects.map((s) => s.sources.length)).to.deep.equal([3]);
    // backend x holds no object values: the search widens to the whole configuration.
    expect(blame(input, [alert(undefined, 0, "Proxy 'x': y", { sections: ['x'] })]).suspects.map((s) => s.sources.map((v) => v.label))).to.deep.equal([
      ['Ingress default/a', 'Ingress default/b', 'Ingress default/c', 'Secret default/tls'],
    ]);
  });

  it('follows a file the alert quotes to the line that names it', () => {
    const found = blame(input, [alert(undefined, 0, "unable to load SSL certificate into SSL Context 'ssl/tls.pem'", { files: ['ssl/tls.pem'] })]);
    expect(found.culprits.map((culprit) => culprit.source.label)).to.deep.equal(['Secret default/tls']);
  });

  it('blames the template when every line a template line made is refused', () => {
    const twice = { ...input, origins: new Map([['haproxy.cfg', [origin('t', 1), origin('t', 2), origin('t', 3, source(a)), origin('t', 3, source(b))]]]) };
    const found = blame(twice, [alert('haproxy.cfg', 3, 'x'), alert('haproxy.cfg', 4, 'x')]);
    expect(found.culprits).to.deep.equal([]);
    expect(found.unexplained).to.have.length(2);
  });
});

describe('bisection', () => {
  const suspects = ['a', 'b', 'c', 'd', 'e'].map((name) => source(object('Ingress', name)));
  /** Runs a search where leaving out any of `guilty` (all of them, if several) makes the configuration valid. */
  function search(guilty: readonly string[]) {
    const bisection = new Bisection(suspects);
    const trials: string[][] = [];
    for (;;) {
      const step = bisection.next();
      if (step.type !== 'try') return { step, trials };
      const without = step.without.map((s) => s.object.metadata.name);
      trials.push(without);
      bisection.record(guilty.every((name) => without.includes(name)));
    }
  }

  it('finds one culprit in about log2(n) + 1 trials, keeping the halves found innocent', () => {
    const { step, trials } = search(['d']);
    expect(step.type === 'found' && step.culprit.object.metadata.name).to.equal('d');
    expect(trials).to.deep.equal([
      ['a', 'b', 'c', 'd', 'e'],
      ['a', 'b'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c', 'd'],
    ]);
  });

  it('says no suspect is at fault when leaving them all out does not help', () => {
    const { step, trials } = search(['z']);
    expect(step).to.deep.equal({ type: 'unexplained' });
    expect(trials).to.have.length(1);
  });
});

describe('quarantine book', () => {
  function world() {
    const store = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
    const [good, bad] = [object('Ingress', 'good'), object('Ingress', 'bad')];
    store.upsert(good);
    store.upsert(bad);
    return { stores: new Map([['ingresses', store]]), store, good, bad };
  }

  it('hides a quarantined object from every read of its store, with views that stay the same while nothing changes', () => {
    const { stores, bad } = world();
    const book = new Quarantine();
    expect(book.hide(stores)).to.equal(stores);
    expect(book.add([{ source: source(bad), message: 'haproxy.cfg:3: refused' }], stores)).to.deep.equal([
      { object: 'Ingress default/bad', field: 'spec.x', message: 'HAProxy refused the configuration with it, left out until it changes: haproxy.cfg:3: refused' },
    ]);
    const view = book.hide(stores);
    const ingresses = view.get('ingresses')!;
    expect(ingresses.list().map((o) => o.metadata.name)).to.deep.equal(['good']);
    expect(ingresses.get('default', 'bad')).to.equal(undefined);
    expect(ingresses.lookup('default').map((o) => o.metadata.name)).to.deep.equal(['good']);
    expect(ingresses.size).to.equal(1);
    expect(book.hide(stores)).to.equal(view);
    // A trial leaves more out, without touching the quarantine.
    expect(
      book
        .hide(stores, [ingresses.get('default', 'good')!])
        .get('ingresses')!
        .list(),
    ).to.deep.equal([]);
    expect(book.size).to.equal(1);
  });

  it('releases an object once it changes or goes, and never quarantines one that changed since it was rendered', () => {
    const { stores, store, bad, good } = world();
    const book = new Quarantine();
    book.add([{ source: source(bad), message: 'm' }], stores);
    expect(book.release(stores)).to.deep.equal([]);
    store.upsert(object('Ingress', 'bad', '2'));
    expect(book.release(stores).map((p) => p.object)).to.deep.equal(['Ingress default/bad']);
    expect(book.hide(stores)).to.equal(stores);
    store.upsert(object('Ingress', 'good', '2'));
    expect(book.add([{ source: source(good), message: 'm' }], stores)).to.deep.equal([]);
  });
});
