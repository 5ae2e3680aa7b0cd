import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concat, defer, filter, firstValueFrom, NEVER, of, Subject, take, throwError, toArray, withLatestFrom, type Observable } from 'rxjs';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ConfigLoad, ControllerConfig } from '../../lib/config/types.ts';
import type { Endpoint, ResourceEvent } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import type { Observer } from '../../lib/telemetry/observer.ts';
import { startSpecObserver } from '../support/spec-observer.ts';
import { buildPipeline, type ModeParts, type PipelineFleet, type PipelineState } from '../../streams/pipeline.ts';
import { RoutingOutcome } from '../../lib/routing-view/routing-outcome.ts';

/**
 * The pipeline builder with the real renderer and validator (`haproxy -c`)
 * on the shipped configuration, a stand-in fleet and resource events played
 * by the spec: what its state says and when, and what a failing side stream
 * does. The stages themselves are specified on virtual time in the other
 * specs of this folder.
 */

type Candidate = 'v1' | 'v2' | 'v3' | 'bad';

const service: ResourceEvent = {
  type: 'added',
  kind: 'services',
  object: { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } },
};

describe('buildPipeline', function () {
  this.timeout(20_000);
  let baseDir: string;
  let shipped: ControllerConfig;
  let observer: Observer;
  let lines: string[];
  const local: Endpoint = { id: 'local', url: 'file:///nowhere' };

  before(async () => {
    const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    shipped = loaded.config;
  });

  beforeEach(async () => {
    baseDir = await mkdtemp(join(tmpdir(), 'pipeline-'));
    lines = [];
    observer = await startSpecObserver(lines);
  });

  afterEach(async () => {
    await observer.stop();
    await rm(baseDir, { recursive: true, force: true });
  });

  const fleet = (deployed: string[]): PipelineFleet => ({
    endpoints: [local],
    prepare: (config) => config,
    deploy: async (_endpoint, _files, hash) => {
      deployed.push(hash);
      return { mode: 'reload', reloadReason: 'spec', operations: 0 };
    },
    describe: () => 'a stand-in',
    stop: async () => undefined,
  });

  /** v1 and v2 differ in their debounce only, v3 in its watched resources too; every watched type lists at once, then `events` follow. */
  const world = (events: Observable<ResourceEvent>, deployed: string[] = []) => {
    const candidates = new Subject<Candidate>();
    const load = (raw: Candidate): ConfigLoad<ControllerConfig> =>
      raw === 'bad'
        ? { ok: false, errors: ['debounce: not a duration'] }
        : {
            ok: true,
            config: {
              ...shipped,
              pipeline: { ...shipped.pipeline, debounceMs: raw === 'v1' ? 10 : 20, minDeploymentIntervalMs: 0 },
              // v3 watches one resource less.
              watchedResources: raw === 'v3' ? shipped.watchedResources.filter((resource) => resource.name !== 'namespaces') : shipped.watchedResources,
              dataplane: { ...shipped.dataplane, baseDir, configFile: join(baseDir, 'haproxy.cfg') },
              templateValues: { ...shipped.templateValues, bindAddress: '127.0.0.1', httpPort: 1, httpsPort: 2, statusPort: 3, runtimeSocket: join(baseDir, 'stats.sock') },
            },
          };
    const parts = (config: ControllerConfig): ModeParts => ({
      config,
      fleet: fleet(deployed),
      events: () => concat(of(...config.watchedResources.map((r): ResourceEvent => ({ type: 'synced', kind: r.name }))), events),
      endpoints: concat(of([local]), NEVER),
    });
    return { candidates, pipeline: buildPipeline<Candidate, ControllerConfig>({ candidates, load, parts }) };
  };

  const next = <T extends Outcome['type']>(outcomes: Observable<Outcome>, type: T) => firstValueFrom(outcomes.pipe(filter((o): o is Extract<Outcome, { type: T }> => o.type === type)));

  it('holds the configuration in force, the live and the rendered stores, their translation and the endpoints, as they come', async () => {
    const deployed: string[] = [];
    const { candidates, pipeline } = world(concat(of(service), NEVER), deployed);
    expect(pipeline.current()).to.deep.include({ candidate: undefined, config: undefined, stores: undefined, endpoints: [] });
    const seen = pipeline.outcomes.pipe(withLatestFrom(pipeline.state), take(4), toArray());
    const done = firstValueFrom(pipeline.outcomes.pipe(filter((o) => o.type === 'deployed')));
    const states = firstValueFrom(seen);
    const subscription = pipeline.start(observer);
    try {
      candidates.next('v1');
      await done;
      const state: PipelineState<Candidate> = pipeline.current();
      expect(state.candidate).to.equal('v1');
      expect(state.config?.pipeline.debounceMs).to.equal(10);
      expect(state.endpoints).to.deep.equal([local]);
      expect(
        state.stores
          ?.get('services')
          ?.list()
          .map((o) => o.metadata.name),
      ).to.deep.equal(['web']);
      // What the render's routing translation made of those stores, for the status side streams.
      expect(state.routing).to.be.instanceOf(RoutingOutcome);
      expect(deployed).to.have.length(1);
      // Each outcome with the state at the time: the configuration is in force from the start of its pipeline on, the stores from the sync on.
      const [[applied, atApplied], [synced, atSynced]] = (await states) as [[Outcome, PipelineState<Candidate>], [Outcome, PipelineState<Candidate>]];
      expect([applied.type, atApplied.candidate, atApplied.config]).to.deep.equal(['configApplied', 'v1', undefined]);
      expect([synced.type, atSynced.config?.pipeline.debounceMs, atSynced.stores !== undefined]).to.deep.equal(['synced', 10, true]);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('names the rejected candidate by the time its rejection is out, and keeps the configuration in force', async () => {
    const { candidates, pipeline } = world(NEVER);
    const subscription = pipeline.start(observer);
    try {
      candidates.next('v1');
      await firstValueFrom(pipeline.state.pipe(filter((s) => s.stores !== undefined)));
      const rejection = firstValueFrom(
        pipeline.outcomes.pipe(
          filter((o) => o.type === 'configRejected'),
          withLatestFrom(pipeline.state),
        ),
      );
      candidates.next('bad');
      const [, state] = await rejection;
      expect(state.candidate).to.equal('bad');
      expect(state.config?.pipeline.debounceMs).to.equal(10);
      // A valid one replaces the configuration; it watches what v1 did, so it takes over v1's stores.
      const applied = next(pipeline.outcomes, 'synced');
      candidates.next('v2');
      await applied;
      expect(pipeline.current().config?.pipeline.debounceMs).to.equal(20);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('hands the stores to an edit that watches the same resources, and lists anew for one that does not', async () => {
    let subscribed = 0;
    const deployed: string[] = [];
    const { candidates, pipeline } = world(
      defer(() => {
        subscribed += 1;
        return concat(of(service), NEVER);
      }),
      deployed,
    );
    const subscription = pipeline.start(observer);
    try {
      const first = next(pipeline.outcomes, 'deployed');
      candidates.next('v1');
      await first;
      const stores = pipeline.current().stores;
      // v2 differs in its debounce only: the events are not subscribed again, the same stores are
      // reported as kept, and the configuration is rendered and deployed again at once.
      const handedOver = next(pipeline.outcomes, 'synced');
      const second = next(pipeline.outcomes, 'deployed');
      candidates.next('v2');
      expect((await handedOver).kept).to.equal(true);
      await second;
      expect(subscribed).to.equal(1);
      expect(pipeline.current().stores).to.equal(stores);
      expect(deployed).to.have.length(2);
      // v3 watches fewer resources: its own stores, from events subscribed again.
      const listed = next(pipeline.outcomes, 'synced');
      candidates.next('v3');
      const synced = await listed;
      expect([synced.kept, subscribed, synced.stores === stores, synced.kinds.includes('namespaces')]).to.deep.equal([undefined, 2, false, false]);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('logs a side stream that fails and fails liveness with it, while the pipeline goes on', async () => {
    const events = new Subject<ResourceEvent>();
    const { candidates, pipeline } = world(events);
    const subscription = pipeline.start(observer, { Events: throwError(() => new Error('recorder broke')) });
    try {
      const healthz = await fetch(`http://127.0.0.1:${observer.healthPort}/healthz`);
      expect([healthz.status, await healthz.text()]).to.deep.equal([503, 'Events stopped: recorder broke\n']);
      expect(lines.join('')).to.include('Events stopped: recorder broke');
      const deployed = next(pipeline.outcomes, 'deployed');
      candidates.next('v1');
      events.next(service);
      expect((await deployed).endpoint).to.equal('local');
    } finally {
      subscription.unsubscribe();
    }
  });
});
