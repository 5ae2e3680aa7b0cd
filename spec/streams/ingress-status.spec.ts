import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { map, type Observable } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { IngressStatusWrite } from '../../lib/kube/ingress-status.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import type { RoutingOutcome } from '../../lib/routing-view/routing-outcome.ts';
import { routingView } from '../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../lib/store/build-stores.ts';
import { ingressStatus, type IngressStatusInput } from '../../streams/ingress-status.ts';
import { backend, ingress, path, rule } from '../lib/ingress/fixtures.ts';
import { testScheduler } from '../support/marbles.ts';

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const publishing = (object: KubeObject, ip: string): KubeObject => ({ ...object, status: { loadBalancer: { ingress: [{ ip }] } } });
const hosted = (name: string, host: string, namespace = 'default', created?: string) =>
  ingress(name, { namespace, ...(created ? { created } : {}), rules: [rule(host, path('/', 'web', 80))] });

/** Stores of these Ingresses (another controller's among them), and a render of them with its own caches, as the render stage hands its outcome to the state. */
function world(ingresses: readonly KubeObject[]) {
  const stores = buildStores(
    config.watchedResources,
    new Map<string, KubeObject[]>([['ingresses', [...ingresses, ingress('theirs', { className: 'nginx', defaultBackend: backend('web', 80) })]]]),
    config.ignoreFields,
  );
  const view = routingView(config);
  return { stores, ingresses: stores.get('ingresses')!, render: () => view(stores).outcome as RoutingOutcome };
}

const service = (ip: string): KubeObject => ({ metadata: { namespace: 'haproxy', name: 'haproxy' }, spec: { clusterIP: ip } });
const input = (routing: RoutingOutcome | undefined, ip = '10.0.0.1', leader = true): IngressStatusInput => ({ leader, routing, service: service(ip) });
/** What a write asked, in a line: the Ingress and the addresses it publishes. */
const said = ({ ingress: object, addresses }: IngressStatusWrite) => `${object.metadata.name} [${addresses.map((address) => address.ip).join(',')}]`;
/** A write effect answering with `marble`, and what each write asked, in a line. */
function recording(cold: RunHelpers['cold'], marble: string, line: (asked: IngressStatusWrite) => string = said) {
  const writes: string[] = [];
  const write = (asked: IngressStatusWrite): Observable<unknown> => {
    writes.push(line(asked));
    return cold(marble);
  };
  return { writes, write };
}

describe('ingress status stage', () => {
  it('writes only while leading, and only once a render translated the objects', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const routing = world([hosted('ours', 'ours.example.com')]).render();
      const write = (): Observable<unknown> => cold('--(w|)');
      // f: a follower's input; r: nothing rendered yet; l: the leader's, whose one Ingress publishes nothing yet.
      const source = hot('f-r-l------|', { f: input(routing, '10.0.0.1', false), r: input(undefined), l: input(routing) });
      const expected = '  ------n----|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 1 });
    });
  });

  it('writes one Ingress after a render that changed one: the others already publish the addresses', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world(['a', 'b', 'c'].map((name) => publishing(hosted(name, `${name}.example.com`), '10.0.0.1')));
      const { writes, write } = recording(cold, '-(w|)');
      const steps = {
        // The render after b changed: b, a new object, publishes nothing yet.
        c: () => {
          live.ingresses.upsert({ ...hosted('b', 'b.example.com'), metadata: { ...hosted('b', 'b.example.com').metadata, resourceVersion: '2' } });
          return input(live.render());
        },
      };
      const source = hot('c---|', steps).pipe(map((step) => step()));
      const expected = '  -n--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 1 });
      flush();
      expect(writes).to.deep.equal(['b [10.0.0.1]']);
    });
  });

  it('writes nothing after a render that changed no Ingress, and says so with 0', () => {
    testScheduler().run(({ hot, expectObservable, flush }) => {
      const live = world(['a', 'b'].map((name) => publishing(hosted(name, `${name}.example.com`), '10.0.0.1')));
      const writes: string[] = [];
      const write = (asked: IngressStatusWrite): Observable<unknown> => {
        writes.push(said(asked));
        throw new Error('no write expected');
      };
      // r: a render (of an EndpointSlice change, say); s: the next, the same again.
      const source = hot('r--s--|', { r: input(live.render()), s: input(live.render()) });
      const expected = '  z--z--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { z: 0 });
      flush();
      expect(writes).to.deep.equal([]);
    });
  });

  it('writes every served Ingress when the published addresses change', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world(['a', 'b', 'c'].map((name) => publishing(hosted(name, `${name}.example.com`), '10.0.0.1')));
      const { writes, write } = recording(cold, '-(w|)');
      // The Service got another address; theirs, another controller's, is left alone.
      const source = hot('s---|', { s: input(live.render(), '10.0.0.2') });
      const expected = '  -n--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 3 });
      flush();
      expect(writes).to.deep.equal(['a [10.0.0.2]', 'b [10.0.0.2]', 'c [10.0.0.2]']);
    });
  });

  it('takes back the addresses of an Ingress the map model left out: a host of another namespace, an invalid path', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world([
        hosted('owner', 'shared.example.com', 'other', '2023-01-01T00:00:00Z'),
        publishing(hosted('late', 'shared.example.com'), '10.0.0.1'),
        publishing(ingress('evil', { rules: [rule('evil.example.com', path('/x"y', 'web', 80))] }), '10.0.0.1'),
        publishing(hosted('fine', 'fine.example.com'), '10.0.0.1'),
      ]);
      const { writes, write } = recording(cold, '-(w|)');
      // owner publishes nothing yet; late (refused its one host) and evil (left out whole) are cleared; fine stays.
      const source = hot('r---|', { r: input(live.render()) });
      const expected = '  -n--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 3 });
      flush();
      expect(writes.toSorted()).to.deep.equal(['evil []', 'late []', 'owner [10.0.0.1]']);
    });
  });

  it('tries a failed write again after a backoff, inside the round: the error never reaches the output', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const routing = world([hosted('ours', 'ours.example.com')]).render();
      const warnings: string[] = [];
      let calls = 0;
      const write = (): Observable<unknown> => (calls++ === 0 ? cold('-#', undefined, new Error('500 Internal Server Error')) : cold('-(w|)'));
      // The first attempt fails at 1 ms; the second starts 2 s later and succeeds 1 ms after.
      const source = hot('a', { a: input(routing) });
      const expected = '  2002ms n';
      expectObservable(source.pipe(ingressStatus({ write, warn: (line) => warnings.push(line) }))).toBe(expected, { n: 1 });
      flush();
      expect([calls, warnings]).to.deep.equal([2, []]);
    });
  });

  it('gives up on a write that keeps failing, says which, and goes on with the next input', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const routing = world([hosted('ours', 'ours.example.com')]).render();
      const warnings: string[] = [];
      let calls = 0;
      const write = (): Observable<unknown> => (calls++ < 6 ? cold('#', undefined, new Error('403 Forbidden')) : cold('(w|)'));
      // Six attempts, 2 + 4 + 8 + 16 + 30 s apart: the round writes nothing; the next input's round writes it.
      const source = hot('a 60s b', { a: input(routing), b: input(routing) });
      const expected = '  60s z n';
      expectObservable(source.pipe(ingressStatus({ write, warn: (line) => warnings.push(line) }))).toBe(expected, { z: 0, n: 1 });
      flush();
      expect(warnings).to.deep.equal(['status of Ingress default/ours not written: 403 Forbidden']);
    });
  });

  it('writes an Ingress once while its write has yet to come back to the store, and again once the store holds another', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world([hosted('ours', 'ours.example.com')]);
      const routing = live.render();
      const { writes, write } = recording(cold, '-(w|)', (asked) => `${said(asked)} ${asked.ingress.metadata.resourceVersion}`);
      const steps = {
        a: () => input(routing),
        // Another deployment's round before the watch brought the written Ingress: the store holds it as it was.
        b: () => input(routing),
        // Someone took the address off since (its status alone changed): written again.
        c: () => {
          const ours = live.ingresses.get('default', 'ours')!;
          live.ingresses.upsert({ ...ours, metadata: { ...ours.metadata, resourceVersion: '3' }, status: { loadBalancer: {} } });
          return input(routing);
        },
      };
      const source = hot('a--b--c---|', steps).pipe(map((step) => step()));
      const expected = '  -n-z---n--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 1, z: 0 });
      flush();
      expect(writes).to.deep.equal(['ours [10.0.0.1] 1', 'ours [10.0.0.1] 3']);
    });
  });

  it('runs the newest waiting input next and drops the inputs it replaced', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const routing = world([hosted('ours', 'ours.example.com')]).render();
      const { writes, write } = recording(cold, '----(w|)');
      // a starts a round; b and c arrive while it runs: c replaces b.
      const source = hot('a-b-c--------|', { a: input(routing, '10.0.0.1'), b: input(routing, '10.0.0.2'), c: input(routing, '10.0.0.3') });
      const expected = '  ----n---n----|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 1 });
      flush();
      expect(writes).to.deep.equal(['ours [10.0.0.1]', 'ours [10.0.0.3]']);
    });
  });

  it('compares with each Ingress as stored now, not as rendered, and writes none the render did not translate', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world([hosted('ours', 'ours.example.com')]);
      const { writes, write } = recording(cold, '-(w|)', (asked) => `${said(asked)} ${asked.ingress.metadata.resourceVersion}`);
      const firstRender = live.render();
      const steps = {
        // After the first render's deployment: ours publishes nothing yet.
        a: () => input(firstRender),
        // Ours written (its status comes back alone), and a new Ingress not rendered yet: nothing to write, the new one waits.
        b: () => {
          const ours = live.ingresses.get('default', 'ours')!;
          live.ingresses.upsert({ ...publishing(ours, '10.0.0.1'), metadata: { ...ours.metadata, resourceVersion: '2' } });
          live.ingresses.upsert(hosted('later', 'later.example.com'));
          return input(firstRender);
        },
        // Its render: the new one alone.
        c: () => input(live.render()),
      };
      const source = hot('a---b---c---|', steps).pipe(map((step) => step()));
      const expected = '  -n--z----n--|';
      expectObservable(source.pipe(ingressStatus({ write, warn: () => undefined }))).toBe(expected, { n: 1, z: 0 });
      flush();
      expect(writes).to.deep.equal(['ours [10.0.0.1] 1', 'later [10.0.0.1] 1']);
    });
  });
});
