import { expect } from 'chai';
import type { KubeObject, LineOrigin, Validated } from '../../lib/pipeline/model.ts';
import type { DeployOutcome, Outcome } from '../../lib/pipeline/outcome.ts';
import { Quarantine } from '../../lib/pipeline/quarantine.ts';
import { renderedFrom } from '../../lib/pipeline/rendered.ts';
import { IndexedStore } from '../../lib/store/indexed-store.ts';
import { refusals } from '../../streams/refusals.ts';
import { testScheduler } from '../support/marbles.ts';
import { changes } from '../support/pipeline-values.ts';

/**
 * A deployed configuration: haproxy.cfg line 2 holds a value of Thing
 * default/a, crt-list line 1 a value of Secret default/tls.
 */
function deployedWorld() {
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'default' } };
  const thing: KubeObject = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'a', namespace: 'default' } };
  const secrets = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
  const things = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
  secrets.upsert(secret);
  things.upsert(thing);
  const snapshot = {
    revision: 3,
    stores: new Map([
      ['secrets', secrets],
      ['things', things],
    ]),
    change: undefined,
  };
  const line = (template: string, object?: KubeObject, label = ''): LineOrigin => ({
    template,
    line: 1,
    objects: object ? [label] : [],
    sources: object ? [{ label, field: 'data', object }] : [],
  });
  const config: Validated = renderedFrom(
    {
      files: { config: 'frontend f\n  weight 7\n', maps: {}, certificates: { 'tls.pem': 'PEM' }, files: { 'crt-list.txt': 'ssl/tls.pem a.example.com\n' } },
      excluded: [],
      warnings: [],
      origins: new Map([
        ['haproxy.cfg', [line('t'), line('t', thing, 'Thing default/a'), line('t')]],
        ['general/crt-list.txt', [line('c', secret, 'Secret default/tls'), line('c')]],
      ]),
    },
    { snapshot, changes: changes([]) },
    [],
  );
  return { config, secret, thing };
}

function failed(error: string, hash: string): DeployOutcome {
  return { type: 'deployFailed', endpoint: 'local', revision: 3, hash, reason: 'change', error, attempt: 1, final: false };
}

const crtListRefusal =
  "HAProxy rejected the reload (certificate changed): [ALERT] (12) : config : parsing [/work/haproxy.cfg:9] : 'bind *:443' : 'crt-list' : error processing line 1 in file '/work/general/crt-list.txt' : unable to load SSL certificate into SSL Context '/work/ssl/tls.pem'.";
const configRefusal = "HAProxy rejected the reload (x): [ALERT] (12) : config : parsing [/etc/haproxy/haproxy.cfg:2] : 'weight' : out of range";

describe('refusals stage', () => {
  it('quarantines the object on a line of a refused reload and asks for a render without it, passing every outcome on', () => {
    const { config, secret } = deployedWorld();
    const book = new Quarantine();
    const reports: Outcome[] = [];
    const renders: number[] = [];
    testScheduler().run(({ hot, expectObservable }) => {
      // a: refused, the crt-list line names the Secret: quarantined, a render asked for at once.
      // b: refused again (a retry of the same configuration): the Secret is in quarantine already.
      // c: a failure that names no file (the endpoint is down): nothing to blame.
      const a = failed(crtListRefusal, config.hash);
      const b = { ...a, attempt: 2 };
      const c = failed('connect ECONNREFUSED 127.0.0.1:5555', config.hash);
      const source = hot('  a-b-c-|', { a, b, c });
      const expected = '    a-b-c-|';
      const stage = refusals({
        book,
        report: (o) => reports.push(o),
        configOf: (hash) => (hash === config.hash ? config : undefined),
        exactConfigLines: false,
        renderAgain: (refused) => renders.push(refused.revision),
      });
      expectObservable(source.pipe(stage)).toBe(expected, { a, b, c });
    });
    expect(renders).to.deep.equal([3]);
    expect(book.entries.map((entry) => entry.object)).to.deep.equal([secret]);
    expect(reports).to.have.length(1);
    expect(reports[0]).to.deep.include({ type: 'quarantined', by: 'reload', revision: 3, hash: config.hash, total: 1 });
    expect(reports[0]!.type === 'quarantined' && reports[0]!.objects[0]!.message).to.match(
      /refused by HAProxy on local when it reloaded: general\/crt-list\.txt:1: unable to load SSL certificate/,
    );
  });

  it('trusts the line numbers of haproxy.cfg only where the deployed file is the rendered one', () => {
    const { config, thing } = deployedWorld();
    for (const exactConfigLines of [false, true]) {
      const book = new Quarantine();
      testScheduler().run(({ hot, expectObservable }) => {
        // The Data Plane API rewrites haproxy.cfg: its line 2 is not the rendered line 2.
        const a = failed(configRefusal, config.hash);
        const source = hot('  a|', { a });
        const stage = refusals({ book, report: () => undefined, configOf: () => config, exactConfigLines, renderAgain: () => undefined });
        expectObservable(source.pipe(stage)).toBe('a|', { a });
      });
      expect(
        book.entries.map((entry) => entry.object),
        String(exactConfigLines),
      ).to.deep.equal(exactConfigLines ? [thing] : []);
    }
  });
});
