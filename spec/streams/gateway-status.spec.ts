import { expect } from 'chai';
import { map, throwError, type Observable } from 'rxjs';
import { compilePath } from '../../lib/config/json-path.ts';
import type { ControllerConfig, WatchedResource } from '../../lib/config/types.ts';
import { DEFAULT_CONTROLLER_NAME } from '../../lib/gateway/api.ts';
import type { StatusWrite } from '../../lib/gateway/status-writer.ts';
import { routingSources } from '../../lib/routing-view/model-sources.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { IndexedStore } from '../../lib/store/indexed-store.ts';
import { gatewayStatus, type GatewayStatusInput } from '../../streams/gateway-status.ts';
import { gateway, gatewayClass, httpListener } from '../lib/gateway/fixtures.ts';
import { testScheduler } from '../support/marbles.ts';

function resource(name: string, apiVersion: string, kind: string): WatchedResource {
  return {
    name,
    apiVersion,
    kind,
    resource: name,
    namespace: undefined,
    labelSelector: undefined,
    fieldSelector: [],
    indexBy: [compilePath('metadata.namespace'), compilePath('metadata.name')],
    relations: [],
    validationWebhook: false,
  };
}

const resources = [resource('gatewayclasses', 'gateway.networking.k8s.io/v1', 'GatewayClass'), resource('gateways', 'gateway.networking.k8s.io/v1', 'Gateway')];
// The stage reads only what it needs of the configuration.
const config = { watchedResources: resources, gatewayApi: { controllerName: DEFAULT_CONTROLLER_NAME, httpPort: 80, httpsPort: 443 } } as unknown as ControllerConfig;

function stores(objects: Record<string, readonly KubeObject[]>) {
  return new Map(
    resources.map((watched) => {
      const store = new IndexedStore([(object) => object.metadata.namespace, (object) => object.metadata.name]);
      for (const object of objects[watched.name] ?? []) store.upsert(object);
      return [watched.name, store];
    }),
  );
}

const world = stores({ gatewayclasses: [gatewayClass()], gateways: [gateway('gw', [httpListener()])] });
const service: KubeObject = { metadata: { namespace: 'haproxy', name: 'haproxy' }, spec: { clusterIP: '10.0.0.1' } };
/** What a render's translation made of the stores, as the render stage hands it to the state. */
const rendered = (from: ReturnType<typeof stores>) => routingSources(config, from).outcome;
const routing = rendered(world);
const input = (leader: boolean, deployment: GatewayStatusInput['deployment'] = 'deployed'): GatewayStatusInput => ({ leader, routing, config, service, deployment });

describe('gateway status stage', () => {
  it('writes only while leading, and only once a render translated the objects', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const written: (readonly StatusWrite[])[] = [];
      const write = (writes: readonly StatusWrite[]): Observable<number> => {
        written.push(writes);
        return cold('--(n|)', { n: writes.length });
      };
      // f: a follower's input; r: nothing rendered yet; l: the leader's.
      const source = hot('f-r-l------|', { f: input(false), r: { ...input(true), routing: undefined }, l: input(true) });
      const expected = '  ------n----|';
      expectObservable(source.pipe(gatewayStatus({ write, now: () => 0, warn: () => undefined }))).toBe(expected, { n: 2 });
    });
  });

  it('runs the newest waiting input next and drops the inputs it replaced', () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const deployments: string[] = [];
      const write = (writes: readonly StatusWrite[]): Observable<number> => {
        const programmed = (writes.find((w) => w.resource === 'gateways')!.status['conditions'] as { type: string; reason: string }[])[1]!;
        deployments.push(programmed.reason);
        return cold('----(n|)', { n: writes.length });
      };
      // a starts a round; b and c arrive while it runs: c replaces b.
      const source = hot('a-b-c--------|', { a: input(true, 'pending'), b: input(true, 'failed'), c: input(true, 'deployed') });
      const expected = '  ----n---m----|';
      expectObservable(source.pipe(gatewayStatus({ write, now: () => 0, warn: () => undefined }))).toBe(expected, { n: 2, m: 2 });
      flush();
      // The Gateway's Programmed condition follows the inputs run: a's pending deployment, then c's done one; b never ran.
      expect(deployments).to.deep.equal(['Pending', 'Programmed']);
    });
  });

  it('logs a failed round and goes on with the next input', () => {
    testScheduler().run(({ hot, cold, expectObservable, flush }) => {
      const warnings: string[] = [];
      let calls = 0;
      const write = (writes: readonly StatusWrite[]): Observable<number> => (calls++ === 0 ? throwError(() => new Error('409 Conflict')) : cold('(n|)', { n: writes.length }));
      const source = hot('a--b--|', { a: input(true), b: input(true) });
      const expected = '  ---n--|';
      expectObservable(source.pipe(gatewayStatus({ write, now: () => 0, warn: (line) => warnings.push(line) }))).toBe(expected, { n: 2 });
      flush();
      expect(warnings).to.deep.equal(['gateway API status not written: 409 Conflict']);
    });
  });

  it("writes what the render's translation says on each object as stored now: a status written since is not written again, an object changed since waits for its render", () => {
    testScheduler().run(({ cold, hot, expectObservable, flush }) => {
      const live = stores({ gatewayclasses: [gatewayClass()], gateways: [gateway('gw', [httpListener()])] });
      const written: string[] = [];
      // The API server's answer comes back to the stores as a change of the status alone.
      const write = (writes: readonly StatusWrite[]): Observable<number> => {
        for (const { resource: stored, object, status } of writes) {
          written.push(`${stored} ${object.metadata.name}`);
          live.get(stored)!.upsert({ ...object, metadata: { ...object.metadata, resourceVersion: `${written.length}` }, status });
        }
        return cold('--(n|)', { n: writes.length });
      };
      const firstRender = rendered(live);
      const steps = {
        // After the first render: the GatewayClass and the Gateway get their status.
        a: () => ({ ...input(true), routing: firstRender }),
        // Deployed, the same render: both were written since and come back as such; nothing to write.
        b: () => ({ ...input(true), routing: firstRender }),
        // The Gateway gains a listener, not rendered yet: the old render's round leaves it to the next.
        c: () => {
          live.get('gateways')!.upsert(gateway('gw', [httpListener(), httpListener('more', { port: 8080 })]));
          return { ...input(true), routing: firstRender };
        },
        // Its render: the Gateway's status follows it.
        d: () => ({ ...input(true), routing: rendered(live) }),
      };
      const source = hot('a-----b---c---d-----|', steps).pipe(map((step) => step()));
      const expected = '  --n---z---z-----m---|';
      expectObservable(source.pipe(gatewayStatus({ write, now: () => 0, warn: () => undefined }))).toBe(expected, { n: 2, z: 0, m: 1 });
      flush();
      expect(written).to.deep.equal(['gatewayclasses haproxy', 'gateways gw', 'gateways gw']);
    });
  });
});
