import { BehaviorSubject, defer, finalize, of, Subject, Subscription, tap, type Observable } from 'rxjs';
import type { PipelineSettings } from '../lib/config/pipeline-settings.ts';
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { Fleet } from '../lib/deploy/fleet.ts';
import { errorMessage } from '../lib/error-message.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import type { RuntimeOperation } from '../lib/haproxy/plan-types.ts';
import { watchedType } from '../lib/kube/select.ts';
import type { Endpoint, ResourceEvent, StoreReader } from '../lib/pipeline/model.ts';
import type { DeployOutcome, Outcome, Report } from '../lib/pipeline/outcome.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { RoutingOutcome } from '../lib/routing-view/routing-outcome.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import type { Observer } from '../lib/telemetry/observer.ts';
import { controller } from './controller.ts';
import { reconcile } from './reconcile.ts';

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
  /** This configuration's pipeline ended: replaced by the next one's, or stopped. */
  readonly ended?: () => void;
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

const idle = { candidate: undefined, config: undefined, fleet: undefined, stores: undefined, routing: undefined, endpoints: [] };

/**
 * The pipeline of either mode: the controller stage (a new pipeline per
 * valid configuration) over reconcile.ts, with the renderer, the validator
 * and the fleet's deployments as effects. A mode brings its configuration
 * candidates and, per configuration, its resource events, endpoints and
 * fleet (informers, HAProxy pods and their Data Plane APIs in a cluster; a
 * folder of manifests and a HAProxy on this machine, or Data Plane APIs,
 * locally). Nothing runs before `start`.
 */
export function buildPipeline<Raw, Loaded>(options: PipelineOptions<Raw, Loaded>): Pipeline<Raw> {
  const state = new BehaviorSubject<PipelineState<Raw>>(idle);
  const update = (change: Partial<PipelineState<Raw>>) => state.next({ ...state.value, ...change });
  const outcomes = new Subject<Outcome>();

  const pipelineOf = (loaded: Loaded, report: Report): Observable<DeployOutcome> =>
    defer(() => {
      const parts = options.parts(loaded);
      const { config, fleet } = parts;
      update({ config, fleet, stores: undefined, routing: undefined });
      const renderer = createRenderer(config, routingViews);
      const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
      return parts.events(report).pipe(
        reconcile({
          watched: config.watchedResources.map(watchedType),
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
          deploy: (request) => defer(() => fleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason)),
          report: (outcome) => {
            if (outcome.type === 'synced') update({ stores: outcome.stores });
            report(outcome);
          },
          exactConfigLines: parts.exactConfigLines ?? false,
          ...(parts.mayReload === undefined ? {} : { mayReload: parts.mayReload }),
        }),
        finalize(() => parts.ended?.()),
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
      return subscription;
    },
  };
}
