import {
  asyncScheduler,
  defer,
  distinctUntilChanged,
  map,
  merge,
  ReplaySubject,
  share,
  Subject,
  tap,
  withLatestFrom,
  type Observable,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import { fleetPeers, samePeers } from '../lib/deploy/fleet-peers.ts';
import type { PipelineSettings } from '../lib/config/pipeline-settings.ts';
import { runtimeOnly } from '../lib/deploy/runtime-only.ts';
import type { Planner } from '../lib/deploy/shared-planner.ts';
import type { RuntimeOperation } from '../lib/haproxy/plan-types.ts';
import { supersededConfig } from '../lib/pipeline/changes.ts';
import type { Endpoint, FleetInput, Peer, ResourceEvent, Snapshot, Trigger, Validated, WatchedType } from '../lib/pipeline/model.ts';
import type { DeployOutcome, Report } from '../lib/pipeline/outcome.ts';
import { Quarantine } from '../lib/pipeline/quarantine.ts';
import { deploy } from './deploy.ts';
import { discovery } from './discovery.ts';
import { drift } from './drift.ts';
import type { DeployEffect, RenderEffect, ValidateEffect } from './effects.ts';
import { refusals } from './refusals.ts';
import { render } from './render.ts';
import { resources } from './resources.ts';
import { schedule } from './schedule.ts';
import { trigger } from './trigger.ts';
import { validate } from './validate.ts';

export interface ReconcileOptions {
  readonly watched: readonly WatchedType[];
  /**
   * The stores as snapshots, from the resource events: the resources stage
   * over `watched` by default. A mode that keeps its stores from one
   * controller configuration to the next passes them in here (see pipeline.ts).
   */
  readonly snapshots?: OperatorFunction<ResourceEvent, Snapshot>;
  readonly settings: PipelineSettings;
  /** The HAProxy endpoints, as whole sets. */
  readonly endpoints: Observable<readonly Endpoint[]>;
  /**
   * The fleet's HAProxy instances whether or not this controller deploys to them, as whole sets: their
   * peers are rendered (the `peers` section), so a follower renders what the leader does. The endpoints
   * by default.
   */
  readonly members?: Observable<readonly Endpoint[]>;
  readonly render: RenderEffect;
  readonly validate: ValidateEffect;
  readonly deploy: DeployEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
  readonly random?: () => number;
  /** Whether the endpoints run haproxy.cfg line for line as rendered (a local HAProxy), so a refused reload's lines can be read (see refusals.ts). */
  readonly exactConfigLines?: boolean;
  /**
   * With settings.runtimeFirst: runtime operations the endpoints may still
   * turn into a reload, which keep a configuration waiting for its verdict.
   * By default every map update (the Data Plane API's entry calls refuse
   * some); a HAProxy on this machine applies every runtime plan as planned.
   */
  readonly mayReload?: (operation: RuntimeOperation) => boolean;
  /** The fleet's planner (fleet.ts `plan`): runtime-first's question then costs the deployment no plan of its own. */
  readonly plan?: Planner;
}

const mapUpdates = (operation: RuntimeOperation): boolean => operation.type === 'updateMap';

/** Configurations kept by hash after validation, so a refused reload can be read against the one it refused. */
const recentConfigs = 8;

/**
 * The reconciliation pipeline for one controller configuration: resource
 * events in, one outcome per deployment attempt out. Every other outcome
 * goes to `report`. Objects HAProxy refused stay in this pipeline's
 * quarantine until they change: the render leaves them out, the validation
 * puts them there, and so does a reload HAProxy refused, which then asks for
 * a render without them (of the newest snapshot, with the refused
 * configuration's changes still to deliver). The fleet's members are part
 * of every render (the `peers` section that shares counters): a change of
 * members renders the newest snapshot again, with no changes of its own.
 */
export function reconcile(options: ReconcileOptions): OperatorFunction<ResourceEvent, DeployOutcome> {
  const { settings, report, scheduler } = options;
  return (events) =>
    defer(() => {
      const book = new Quarantine();
      const validated = new Map<string, Validated>();
      const refused = new Subject<Validated>();
      // One subscription to the endpoints (an informer in a cluster), replayed to the member list and to discovery.
      const endpoints = options.endpoints.pipe(share({ connector: () => new ReplaySubject<readonly Endpoint[]>(1), resetOnRefCountZero: true }));
      let peers: readonly Peer[] = [];
      const members = (options.members ?? endpoints).pipe(
        map(fleetPeers),
        distinctUntilChanged(samePeers),
        tap((current) => (peers = current)),
        share(),
      );
      const triggers = events.pipe(
        options.snapshots ?? resources({ watched: options.watched, report, scheduler }),
        trigger({ debounceMs: settings.debounceMs, maxWaitMs: settings.maxWaitMs, leadingEdge: settings.leadingEdge, scheduler }),
        share(),
      );
      const again = refused.pipe(
        withLatestFrom(triggers),
        map(([config, last]): Trigger => ({ snapshot: last.snapshot, changes: config.changes })),
      );
      // A member list before the first trigger is in the first render (withLatestFrom drops it here); a later one renders again.
      const rejoined = members.pipe(
        withLatestFrom(triggers),
        // Counted from now: the deployment's latency is the fleet change's, not the resources' last one.
        map(([, last]): Trigger => ({ snapshot: last.snapshot, changes: { count: 0, firstAt: (scheduler ?? asyncScheduler).now(), refs: [] } })),
      );
      const configs = merge(rejoined, triggers, again).pipe(
        map((next): Trigger => ({ ...next, snapshot: { ...next.snapshot, peers } })),
        render({ render: options.render, report, scheduler, quarantine: book }),
        validate({
          validate: options.validate,
          report,
          scheduler,
          retry: settings.retry,
          random: options.random,
          quarantine: { book, render: options.render },
          ...(settings.runtimeFirst
            ? { runtimeFirst: (last, next) => runtimeOnly(last, next, { mayReload: options.mayReload ?? mapUpdates, ...(options.plan ? { plan: options.plan } : {}) }) }
            : {}),
        }),
        tap((config) => {
          // A confirmation carries no changes: a refused reload renders again with those of the configuration it confirms.
          if (config.runtimeFirst === 'confirmed' && validated.has(config.hash)) return;
          validated.delete(config.hash);
          validated.set(config.hash, config);
          for (const hash of validated.keys()) if (validated.size > recentConfigs) validated.delete(hash);
        }),
        // A confirmation only writes files: it may wait for the interval, but it never makes the next change wait.
        schedule({ minIntervalMs: settings.minDeploymentIntervalMs, fold: supersededConfig, exempt: (config) => config.runtimeFirst === 'confirmed', scheduler }),
      );
      return merge(configs.pipe(map((config): FleetInput => ({ type: 'config', config }))), endpoints.pipe(map((found): FleetInput => ({ type: 'endpoints', endpoints: found })))).pipe(
        discovery({ report }),
        drift({ intervalMs: settings.driftCheckIntervalMs, scheduler }),
        deploy({
          deploy: options.deploy,
          timeoutMs: settings.deployTimeoutMs,
          maxParallel: settings.maxParallel,
          retry: settings.retry,
          scheduler,
          random: options.random,
        }),
        refusals({
          book,
          report,
          configOf: (hash) => validated.get(hash),
          exactConfigLines: options.exactConfigLines ?? false,
          renderAgain: (config) => refused.next(config),
        }),
      );
    });
}
