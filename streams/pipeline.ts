import { BehaviorSubject, defer, of, Subject, Subscription, tap, type Observable } from 'rxjs';
import type { PipelineSettings } from '../lib/config/pipeline-settings.ts';
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { Fleet } from '../lib/deploy/fleet.ts';
import { errorMessage } from '../lib/error-message.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import type { RuntimeOperation } from '../lib/haproxy/plan-types.ts';
import { storesKey, watchedType } from '../lib/kube/select.ts';
import type { Endpoint, ResourceEvent, StoreReader } from '../lib/pipeline/model.ts';
import type { DeployOutcome, Outcome, Report } from '../lib/pipeline/outcome.ts';
import { cacheInputs } from '../lib/render/cache-inputs.ts';
import { keptViews } from '../lib/render/kept-views.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { RoutingOutcome } from '../lib/routing-view/routing-outcome.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import type { Observer } from '../lib/telemetry/observer.ts';
import { controller } from './controller.ts';
import { kept, type KeptWatches } from './kept.ts';
import { replayingStores } from './operators/replaying.ts';
import { reconcile } from './reconcile.ts';
import { resources } from './resources.ts';

/** A fleet, and what it keeps per endpoint when it keeps anything (a Data Plane API endpoint's convergence status). */
export interface PipelineFleet extends Fleet {
  statuses?(): ReadonlyMap<string, unknown>;
}

/**
 * What the pipeline holds now. Everything that is not the pipeline reads
 * it here (Events, Ingress status, the debug views, an admission check on
 * every replica) rather than from variables the pipeline's effects write.
 */
export interface PipelineState<Raw> {
  /** The newest configuration candidate, valid or not. */
  readonly candidate: Raw | undefined;
  /** The controller configuration in force; undefined until one is applied. */
  readonly config: ControllerConfig | undefined;
  /** Its fleet. */
  readonly fleet: PipelineFleet | undefined;
  /** The resource stores of the configuration in force, live; undefined until every watched type has listed. */
  readonly stores: ReadonlyMap<string, StoreReader> | undefined;
  /** What the last render's routing translation made of those stores: what the status side streams read. */
  readonly routing: RoutingOutcome | undefined;
  /** The endpoints deployed to now. */
  readonly endpoints: readonly Endpoint[];
}

/** What a mode brings to the pipeline of one valid configuration. */
export interface ModeParts {
  /** The configuration as the mode runs it (a local HAProxy's ports and directories laid over it). */
  readonly config: ControllerConfig;
  readonly fleet: PipelineFleet;
  /** The resource events: informers, or a folder of manifests. */
  readonly events: (report: Report) => Observable<ResourceEvent>;
  /** The endpoints, as whole sets. */
  readonly endpoints: Observable<readonly Endpoint[]>;
  /** The fleet's instances whether or not this controller deploys to them (see reconcile.ts); the endpoints by default. */
  readonly members?: Observable<readonly Endpoint[]>;
  /** The configuration's own pipeline settings, unless the mode overrides them. */
  readonly settings?: PipelineSettings;
  /** Whether the endpoints run haproxy.cfg line for line as rendered (see reconcile.ts). */
  readonly exactConfigLines?: boolean;
  /** Runtime operations the endpoints may still turn into a reload (see reconcile.ts); every map update by default. */
  readonly mayReload?: (operation: RuntimeOperation) => boolean;
}

export interface PipelineOptions<Raw, Loaded> {
  /** Candidates for the controller configuration: a ConfigMap with its Secret, or a file. */
  readonly candidates: Observable<Raw>;
  /** Checks a candidate completely (see controller.ts). */
  readonly load: (raw: Raw) => ConfigLoad<Loaded>;
  /** The mode's parts for a valid configuration; called when its pipeline starts. */
  readonly parts: (loaded: Loaded) => ModeParts;
}

export interface Pipeline<Raw> {
  /** Every outcome, once started; subscribers that came late miss what came before. */
  readonly outcomes: Observable<Outcome>;
  /** What the pipeline holds, now and at every change. */
  readonly state: Observable<PipelineState<Raw>>;
  /** The same, for readers that cannot wait (an HTTP handler). */
  current(): PipelineState<Raw>;
  /**
   * Runs the pipeline: the observer sees every outcome first, then the
   * side streams (Events, Ingress status, leadership, supervision), which
   * are subscribed before anything runs. A side stream that fails is
   * logged and fails liveness; it stops nothing else. Unsubscribe to stop.
   */
  start(observer: Observer, sides?: Readonly<Record<string, Observable<unknown>>>): Subscription;
}

/**
 * How long the stores of the last configuration wait for the next one to
 * take them over (see kept.ts). The next pipeline starts as the last one
 * stops, so it asks at once; when it watches something else, two sets of
 * stores live only this long.
 */
const KEEP_STORES_MS = 1_000;

const idle = { candidate: undefined, config: undefined, fleet: undefined, stores: undefined, routing: undefined, endpoints: [] };

/**
 * The pipeline of either mode: the controller stage (a new pipeline per
 * valid configuration) over reconcile.ts, with the renderer, the validator
 * and the fleet's deployments as effects. A mode brings its configuration
 * candidates and, per configuration, its resource events, endpoints and
 * fleet (informers, HAProxy pods and their Data Plane APIs in a cluster; a
 * folder of manifests and a HAProxy on this machine, or Data Plane APIs,
 * locally). Nothing runs before `start`. A configuration that watches what
 * the last one did takes over its stores, with the watches that keep them
 * (kept.ts), and one that reads them as the last one did takes over its
 * renderer's views with their caches (kept-views.ts, cache-inputs.ts): an
 * edit of the templates lists nothing and renders anew only what the
 * templates make of the objects.
 */
export function buildPipeline<Raw, Loaded>(options: PipelineOptions<Raw, Loaded>): Pipeline<Raw> {
  const state = new BehaviorSubject<PipelineState<Raw>>(idle);
  const update = (change: Partial<PipelineState<Raw>>) => state.next({ ...state.value, ...change });
  const outcomes = new Subject<Outcome>();
  // The views of the configuration last in force, with their caches, for the next one when they hold for it.
  const views = keptViews(routingViews, cacheInputs);
  // The stores (with the watches that fill them), for the next configuration when it watches the same.
  const keptStores: KeptWatches = new Map();
  const released = new Subject<void>();

  const pipelineOf = (loaded: Loaded, report: Report): Observable<DeployOutcome> =>
    defer(() => {
      const parts = options.parts(loaded);
      const { config, fleet } = parts;
      update({ config, fleet, stores: undefined, routing: undefined });
      const renderer = createRenderer(config, views);
      const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
      const reported: Report = (outcome) => {
        if (outcome.type === 'synced') update({ stores: outcome.stores });
        report(outcome);
      };
      const watched = config.watchedResources.map(watchedType);
      return parts.events(reported).pipe(
        reconcile({
          watched,
          // A configuration that watches what the last one did takes over its stores, listed and up to date.
          snapshots: (events) =>
            events.pipe(
              resources({ watched, report: reported }),
              kept({
                key: storesKey(config.watchedResources, config.ignoreFields),
                kept: keptStores,
                connector: () => replayingStores((last) => reported({ type: 'synced', revision: last.revision, kinds: [...last.stores.keys()], stores: last.stores, kept: true })),
                graceMs: KEEP_STORES_MS,
                released,
              }),
            ),
          settings: parts.settings ?? config.pipeline,
          endpoints: parts.endpoints.pipe(tap((endpoints) => update({ endpoints }))),
          ...(parts.members === undefined ? {} : { members: parts.members }),
          render: (snapshot) =>
            defer(() => {
              // The translation goes to the state, not down the pipeline: a configuration kept for deploying keeps no model alive.
              const { outcomes: translated, ...output } = renderer({ stores: snapshot.stores, peers: snapshot.peers ?? [] });
              update({ routing: Object.values(translated ?? {}).find((outcome) => outcome instanceof RoutingOutcome) });
              return of(output);
            }),
          validate: (rendered) => defer(() => validator.validate(rendered)),
          deploy: (request) => defer(() => fleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason, request.config.runtimeFirst !== 'pending')),
          report: reported,
          exactConfigLines: parts.exactConfigLines ?? false,
          ...(parts.mayReload === undefined ? {} : { mayReload: parts.mayReload }),
          ...(fleet.plan === undefined ? {} : { plan: fleet.plan }),
        }),
      );
    });

  const run = options.candidates.pipe(
    // Before the candidate is judged: what its outcome says is read against it.
    tap((candidate) => update({ candidate })),
    controller({ load: options.load, pipeline: pipelineOf }),
  );

  return {
    outcomes: outcomes.asObservable(),
    state: state.asObservable(),
    current: () => state.value,
    start: (observer, sides = {}) => {
      const subscription = new Subscription();
      for (const [name, side] of Object.entries(sides)) {
        subscription.add(
          side.subscribe({
            error: (error: unknown) => {
              const problem = `${name} stopped: ${errorMessage(error)}`;
              observer.logger.error({ stage: 'reconcile' }, problem);
              observer.addLivenessCheck(() => problem);
            },
          }),
        );
      }
      subscription.add(
        run.subscribe({
          next: (outcome) => {
            observer.observe(outcome);
            outcomes.next(outcome);
          },
          error: (error: unknown) => observer.pipelineStopped(errorMessage(error)),
          complete: () => observer.pipelineStopped('the configuration source ended'),
        }),
      );
      // Stopped, the pipeline hands its stores to nobody: their watches stop now.
      subscription.add(() => released.next());
      return subscription;
    },
  };
}
