import { expect } from 'chai';
import type { DeployReason, Endpoint, FleetCommand, FleetInput, Validated } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { discovery } from '../../streams/discovery.ts';
import { testScheduler } from '../support/marbles.ts';
import { rendered } from '../support/pipeline-values.ts';

function endpoint(id: string, url = `http://${id}:5555`): Endpoint {
  return { id, url };
}

function configInput(validated: Validated): FleetInput {
  return { type: 'config', config: validated };
}

function endpointsInput(...endpoints: Endpoint[]): FleetInput {
  return { type: 'endpoints', endpoints };
}

function deploy(target: Endpoint, validated: Validated, reason: DeployReason): FleetCommand {
  return { type: 'deploy', request: { endpoint: target, config: validated, reason } };
}

function remove(endpointId: string): FleetCommand {
  return { type: 'remove', endpointId };
}

const c1 = rendered(1, '# config 1');
const c2 = rendered(2, '# config 2');
const a = endpoint('a');
const b = endpoint('b');

describe('discovery', () => {
  it('fans every config out to all current endpoints', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The first config meets no endpoints; the second reaches both endpoints as a change.
      const source = hot('  1-e----2----|', { 1: configInput(c1), e: endpointsInput(a, b), 2: configInput(c2) });
      const expected = '    --(ab)-(cd)-|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, {
        a: deploy(a, c1, 'discovered'),
        b: deploy(b, c1, 'discovered'),
        c: deploy(a, c2, 'change'),
        d: deploy(b, c2, 'change'),
      });
    });
  });

  it('deploys the current config to an endpoint added mid-run at once', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // b appears at frame 6 and gets c1 there, without waiting for another config; a stays quiet.
      const source = hot('  1-e---f---|', { 1: configInput(c1), e: endpointsInput(a), f: endpointsInput(a, b) });
      const expected = '    --a---b---|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, {
        a: deploy(a, c1, 'discovered'),
        b: deploy(b, c1, 'discovered'),
      });
    });
  });

  it('holds endpoints seen before any config until the first config arrives', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Nothing can be deployed at frame 0; the first config reaches both endpoints as a change.
      const source = hot('  e--1-----|', { e: endpointsInput(a, b), 1: configInput(c1) });
      const expected = '    ---(ab)--|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, {
        a: deploy(a, c1, 'change'),
        b: deploy(b, c1, 'change'),
      });
    });
  });

  it('removes endpoints that left the set and deploys nothing more to them', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // a leaves at frame 7; the config at frame 10 reaches only b.
      const source = hot('  1-e----f--2---|', {
        1: configInput(c1),
        e: endpointsInput(a, b),
        f: endpointsInput(b),
        2: configInput(c2),
      });
      const expected = '    --(ab)-r--c---|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, {
        a: deploy(a, c1, 'discovered'),
        b: deploy(b, c1, 'discovered'),
        r: remove('a'),
        c: deploy(b, c2, 'change'),
      });
    });
  });

  it('replaces an endpoint whose url changed: remove, then deploy to the new url', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The pod was recreated under the same name: its old deploy stream must go before the new one starts.
      const moved = endpoint('a', 'http://10.0.0.9:5555');
      const source = hot('  1-e---f-----|', { 1: configInput(c1), e: endpointsInput(a), f: endpointsInput(moved) });
      const expected = '    --a---(rm)--|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, {
        a: deploy(a, c1, 'discovered'),
        r: remove('a'),
        m: deploy(moved, c1, 'discovered'),
      });
    });
  });

  it('emits nothing for an endpoint set equal to the current one', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // f and g are new arrays (and objects) with the same ids and urls as e: content counts, not identity.
      const source = hot('  1-e---f---g---|', {
        1: configInput(c1),
        e: endpointsInput(a),
        f: endpointsInput(endpoint('a')),
        g: endpointsInput({ ...a }),
      });
      const expected = '    --a-----------|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, { a: deploy(a, c1, 'discovered') });
    });
  });

  it('keeps the last endpoint when one set repeats an id', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // A set listing a twice is one endpoint, at the url listed last.
      const later = endpoint('a', 'http://10.0.0.9:5555');
      const source = hot('  1-e---|', { 1: configInput(c1), e: endpointsInput(a, later) });
      const expected = '    --a---|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, { a: deploy(later, c1, 'discovered') });
    });
  });

  it('passes completion through and leaves the source', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('  1-e-|', { 1: configInput(c1), e: endpointsInput(a) });
      const expected = '    --a-|';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, { a: deploy(a, c1, 'discovered') });
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });

  it('passes an error through and leaves the source', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const failure = new Error('endpoint watch failed');
      const source = hot('  1-e-#', { 1: configInput(c1), e: endpointsInput(a) }, failure);
      const expected = '    --a-#';
      expectObservable(source.pipe(discovery({ report: () => undefined }))).toBe(expected, { a: deploy(a, c1, 'discovered') }, failure);
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });

  it('reports each fan-out with the endpoints it reached', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ hot, expectObservable }) => {
      // c1 meets no endpoint (an empty fan-out is reported too); e discovers a and b; c2 reaches both; f adds c.
      const c = endpoint('c');
      const source = hot('  1-e----2-----f-|', { 1: configInput(c1), e: endpointsInput(a, b), 2: configInput(c2), f: endpointsInput(a, b, c) });
      const expected = '    --(ab)-(cd)--f-|';
      expectObservable(source.pipe(discovery({ report: (o) => reports.push(o) }))).toBe(expected, {
        a: deploy(a, c1, 'discovered'),
        b: deploy(b, c1, 'discovered'),
        c: deploy(a, c2, 'change'),
        d: deploy(b, c2, 'change'),
        f: deploy(c, c2, 'discovered'),
      });
    });
    expect(reports).to.deep.equal([
      { type: 'deploying', revision: 1, hash: c1.hash, reason: 'change', endpoints: [] },
      { type: 'deploying', revision: 1, hash: c1.hash, reason: 'discovered', endpoints: ['a', 'b'] },
      { type: 'deploying', revision: 2, hash: c2.hash, reason: 'change', endpoints: ['a', 'b'] },
      { type: 'deploying', revision: 2, hash: c2.hash, reason: 'discovered', endpoints: ['c'] },
    ]);
  });

  it('deploys a runtime-first configuration confirmed valid again as a confirmation, not a change, and reports it so', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ hot, expectObservable }) => {
      // p leaves before its verdict (pending) as a change; P is the same configuration confirmed: its deployment
      // only writes files, so it is reported and sent as 'confirmed'; a new endpoint c gets it as discovered.
      const c = endpoint('c');
      const pending: Validated = { ...c2, runtimeFirst: 'pending' };
      const confirmed: Validated = { ...c2, runtimeFirst: 'confirmed' };
      const source = hot('  e-p----P---f-|', { e: endpointsInput(a), p: configInput(pending), P: configInput(confirmed), f: endpointsInput(a, c) });
      const expected = '    --p----P---f-|';
      expectObservable(source.pipe(discovery({ report: (o) => reports.push(o) }))).toBe(expected, {
        p: deploy(a, pending, 'change'),
        P: deploy(a, confirmed, 'confirmed'),
        f: deploy(c, confirmed, 'discovered'),
      });
    });
    expect(reports.map((o) => (o.type === 'deploying' ? o.reason : o.type))).to.deep.equal(['change', 'confirmed', 'discovered']);
  });

  it('keeps its state per subscription', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      // The second subscriber, starting at frame 6, discovers a afresh; shared state would make it see nothing new.
      const source = cold(' 1-e-|', { 1: configInput(c1), e: endpointsInput(a) });
      const stage = source.pipe(discovery({ report: () => undefined }));
      const first = '       --a-|';
      const late = '        ------^';
      const second = '      --------a-|';
      expectObservable(stage).toBe(first, { a: deploy(a, c1, 'discovered') });
      expectObservable(stage, late).toBe(second, { a: deploy(a, c1, 'discovered') });
    });
  });

  it('errors with what its report throws, rather than leaving it unhandled', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Reporting the fan-out of c1 at frame 2 throws: the output errors there instead of deploying.
      const source = hot('  e-1---|', { e: endpointsInput(a), 1: configInput(c1) });
      const expected = '    --#';
      const report = () => {
        throw new Error('report failed');
      };
      expectObservable(source.pipe(discovery({ report }))).toBe(expected, undefined, new Error('report failed'));
    });
  });
});
