import { defer, map, merge, share, Subject, tap, withLatestFrom, type Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { PipelineSettings } from '../lib/config/pipeline-settings.ts';
import { withChangesOf } from '../lib/pipeline/changes.ts';
import type { Endpoint, FleetInput, ResourceEvent, Trigger, Validated, WatchedType } from '../lib/pipeline/model.ts';
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
  readonly settings: PipelineSettings;
  /** The HAProxy endpoints, as whole sets. */
  readonly endpoints: Observable<readonly Endpoint[]>;
  readonly render: RenderEffect;
  readonly validate: ValidateEffect;
  readonly deploy: DeployEffect;
  readonly report: Report;
  readonly scheduler?: SchedulerLike;
  readonly random?: () => number;
  /** Whether the endpoints run haproxy.cfg line for line as rendered (a local HAProxy), so a refused reload's lines can be read (see refusals.ts). */
  readonly exactConfigLines?: boolean;
}

/** Configurations kept by hash after validation, so a refused reload can be read against the one it refused. */
const recentConfigs = 8;

/**
 * The reconciliation pipeline for one controller configuration: resource
 * events in, one outcome per deployment attempt out. Every other outcome
 * goes to `report`. Objects HAProxy refused stay in this pipeline's
 * quarantine until they change: the render leaves them out, the validation
 * puts them there, and so does a reload HAProxy refused, which then asks for
 * a render without them (of the newest snapshot, with the refused
 * configuration's changes still to deliver).
 */
export function reconcile(options: ReconcileOptions): OperatorFunction<ResourceEvent, DeployOutcome> {
  const { settings, report, scheduler } = options;
  return (events) =>
    defer(() => {
      const book = new Quarantine();
      const validated = new Map<string, Validated>();
      const refused = new Subject<Validated>();
      const triggers = events.pipe(
        resources({ watched: options.watched, report, scheduler }),
        trigger({ debounceMs: settings.debounceMs, maxWaitMs: settings.maxWaitMs, leadingEdge: settings.leadingEdge, scheduler }),
        share(),
      );
      const again = refused.pipe(
        withLatestFrom(triggers),
        map(([config, last]): Trigger => ({ snapshot: last.snapshot, changes: config.changes })),
      );
      const configs = merge(triggers, again).pipe(
        render({ render: options.render, report, scheduler, quarantine: book }),
        validate({ validate: options.validate, report, scheduler, retry: settings.retry, random: options.random, quarantine: { book, render: options.render } }),
        tap((config) => {
          validated.delete(config.hash);
          validated.set(config.hash, config);
          for (const hash of validated.keys()) if (validated.size > recentConfigs) validated.delete(hash);
        }),
        schedule({ minIntervalMs: settings.minDeploymentIntervalMs, fold: withChangesOf, scheduler }),
      );
      return merge(configs.pipe(map((config): FleetInput => ({ type: 'config', config }))), options.endpoints.pipe(map((endpoints): FleetInput => ({ type: 'endpoints', endpoints })))).pipe(
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
