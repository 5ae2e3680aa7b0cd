import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { map, throwError, type Observable } from 'rxjs';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ServedIngress } from '../../lib/kube/ingress-status-writer.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { routingSources } from '../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../lib/store/build-stores.ts';
import { ingressStatus, type IngressStatusInput } from '../../streams/ingress-status.ts';
import { backend, ingress } from '../lib/ingress/fixtures.ts';
import { testScheduler } from '../support/marbles.ts';

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const world = () =>
  buildStores(
    config.watchedResources,
    new Map<string, KubeObject[]>([['ingresses', [ingress('ours', { defaultBackend: backend('web', 80) }), ingress('theirs', { className: 'nginx', defaultBackend: backend('web', 80) })]]]),
    config.ignoreFields,
  );
/** What a render's translation made of the stores, as the render stage hands it to the state. */
const rendered = (stores: ReturnType<typeof world>) => routingSources(config, stores).outcome;
const routing = rendered(world());
const service = (ip: string): KubeObject => ({ metadata: { namespace: 'haproxy', name: 'haproxy' }, spec: { clusterIP: ip } });
const input = (leader: boolean, ip = '10.0.0.1'): IngressStatusInput => ({ leader, routing, service: service(ip) });
const names = (served: readonly ServedIngress[]) => served.map(({ ingress: object }) => object.metadata.name).join(',');

describe('ingress status stage', () => {
  it('writes only while leading, and only once a render translated the objects', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const sync = (served: readonly ServedIngress[]): Observable<number> => cold('--(n|)', { n: served.length });
      // f: a follower's input; r: nothing rendered yet; l: the leader's.
      const source = hot('f-r-l------|', { f: input(false), r: { ...input(true), routing: undefined }, l: input(true) });
      const expected = '  ------n----|';
      expectObservable(source.pipe(ingressStatus({ sync, warn: () => undefined }))).toBe(expected, { n: 1 });
    });
  });

  it('runs the newest waiting input next and drops the inputs it replaced', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const addresses: string[] = [];
      const sync = (served: readonly ServedIngress[], published: KubeObject | undefined): Observable<number> => {
        addresses.push((published!['spec'] as { clusterIP: string }).clusterIP);
        return cold('----(n|)', { n: served.length });
      };
      // a starts a round; b and c arrive while it runs: c replaces b.
      const source = hot('a-b-c--------|', { a: input(true, '10.0.0.1'), b: input(true, '10.0.0.2'), c: input(true, '10.0.0.3') });
      const expected = '  ----n---m----|';
      expectObservable(source.pipe(ingressStatus({ sync, warn: () => undefined }))).toBe(expected, { n: 1, m: 1 });
      flush();
      expect(addresses).to.deep.equal(['10.0.0.1', '10.0.0.3']);
    });
  });

  it('logs a failed round and goes on with the next input', () => {
    testScheduler().run(({ hot, cold, expectObservable, flush }) => {
      const warnings: string[] = [];
      let calls = 0;
      const sync = (served: readonly ServedIngress[]): Observable<number> => (calls++ === 0 ? throwError(() => new Error('403 Forbidden')) : cold('(n|)', { n: served.length }));
      const source = hot('a--b--|', { a: input(true), b: input(true) });
      const expected = '  ---n--|';
      expectObservable(source.pipe(ingressStatus({ sync, warn: (line) => warnings.push(line) }))).toBe(expected, { n: 1 });
      flush();
      expect(warnings).to.deep.equal(['ingress status not written: 403 Forbidden']);
    });
  });

  it("hands the writer the Ingresses of the class the render's translation served, each as stored now, not what came since", () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = world();
      const handed: string[] = [];
      const sync = (served: readonly ServedIngress[]): Observable<number> => {
        handed.push(`${names(served)} ${served.map(({ ingress: object }) => object.metadata.resourceVersion).join(',')}`);
        return cold('-(n|)', { n: served.length });
      };
      const firstRender = rendered(live);
      const steps = {
        // After the first render's deployment: ours, of the class served; theirs is another controller's.
        a: () => ({ leader: true, routing: firstRender, service: service('10.0.0.1') }),
        // Ours written (its status comes back alone), and a new Ingress not rendered yet: ours as stored now, the new one waits.
        b: () => {
          const ingresses = live.get('ingresses')!;
          const ours = ingresses.get('default', 'ours')!;
          ingresses.upsert({ ...ours, metadata: { ...ours.metadata, resourceVersion: '2' }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } });
          ingresses.upsert(ingress('later', { defaultBackend: backend('web', 80) }));
          return { leader: true, routing: firstRender, service: service('10.0.0.2') };
        },
        // Its render: the new one is served too.
        c: () => ({ leader: true, routing: rendered(live), service: service('10.0.0.2') }),
      };
      const source = hot('a---b---c---|', steps).pipe(map((step) => step()));
      const expected = '  -n---n---m--|';
      expectObservable(source.pipe(ingressStatus({ sync, warn: () => undefined }))).toBe(expected, { n: 1, m: 2 });
      flush();
      expect(handed).to.deep.equal(['ours 1', 'ours 2', 'ours,later 2,1']);
    });
  });
});
