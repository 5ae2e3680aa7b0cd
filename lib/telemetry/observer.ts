import type { Server } from 'node:http';
import type { TracerProvider } from '@opentelemetry/api';
import type { ControllerConfig } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import type { Endpoint, Problem, StoreReader } from '../pipeline/model.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { configView, endpointsView, renderedView, resourcesView, type LastRender, type ValidationState } from './debug-views.ts';
import { EndpointStates } from './endpoint-states.ts';
import { configurationLoaded, Health, initialSyncDone } from './health.ts';
import { closeServer, portOf, serveHealth, serveMetrics } from './http-endpoints.ts';
import { createLogger, type Logger, type LogSettings } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { outcomeLog, reconciliationLog, type LogEntry, type Stage } from './outcome-log.ts';
import { ReconciliationTracker } from './reconciliation-tracker.ts';
import type { TrackerEvent } from './reconciliations.ts';
import { Redactor } from './redaction.ts';
import { secretValues } from './secret-values.ts';
import { exemplarLabels, ReconciliationTracing, type TracedEvent } from './tracing.ts';
import type { AdmissionRecord } from '../webhook/admission-handler.ts';
import { AdmissionTracing, type AdmissionTiming } from './admission-tracing.ts';

export interface ListenAddress {
  readonly host: string;
  /** 0 lets the kernel pick one; the observer reports the port it got. */
  readonly port: number;
}

export interface ObserverOptions {
  /** /healthz, /readyz and /debug/*. */
  readonly health: ListenAddress;
  readonly metrics: ListenAddress;
  readonly log: LogSettings;
  /** The tracer provider the entry point set up; without one nothing is traced and nothing is spent on it. */
  readonly tracerProvider?: TracerProvider;
  /** The controller configuration in force. */
  readonly config: () => ControllerConfig | undefined;
  /** How this mode runs (its flags, where it deploys), shown redacted under /debug/config. */
  readonly settings?: () => Readonly<Record<string, unknown>>;
  /** The endpoints deployed to now. */
  readonly endpoints: () => readonly Endpoint[];
  /** Whatever the fleet keeps per endpoint (a Data Plane API endpoint's convergence status), by endpoint id. */
  readonly endpointDetails?: () => ReadonlyMap<string, unknown>;
  /** Credentials to keep out of every log line, span and debug view. */
  readonly secrets?: readonly string[];
  /** Work without progress for this long makes /healthz fail. Default 5 minutes. */
  readonly stallAfterMs?: number;
  /** Objects per type whose index keys /debug/resources lists. Default 1000. */
  readonly resourceKeysLimit?: number;
  /** Distinct endpoint label values in the metrics. Default 50. */
  readonly maxEndpointLabels?: number;
  /** Milliseconds since the epoch, the clock change times in the outcomes come from. Default Date.now. */
  readonly now?: () => number;
}

export interface Observer {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Credentials learnt after the start (a rotated password read from a Secret) are added here. */
  readonly redactor: Redactor;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** One pipeline outcome, for the logs, metrics, traces, health and debug views. */
  observe(outcome: Outcome): void;
  /** The outcome stream ended (an error reached its top, or it completed): liveness fails from now on. */
  pipelineStopped(reason: string): void;
  /** A watch that stopped was started again (in-cluster informers). */
  informerRestarted(resource: string, reason: string): void;
  leaderChanged(isLeader: boolean): void;
  /** One AdmissionReview the webhook answered; `headers` are the request's, for the caller's trace context. */
  admissionReviewed(record: AdmissionRecord, timing: AdmissionTiming, headers: Readonly<Record<string, unknown>>): void;
  /** Sets a readiness condition; the built-in ones ('configuration loaded', 'initial sync done') follow the outcomes. */
  setReadiness(condition: string, holds: boolean): void;
  /** A part that can tell it cannot do its job: while `check` names a problem, liveness fails with it. */
  addLivenessCheck(check: () => string | undefined): void;
  /** Readiness fails from now on; liveness and the debug views keep answering. */
  beginShutdown(): void;
  /** Ends what is still open (exported as abandoned) and closes the servers. */
  stop(): Promise<void>;
}

/**
 * Everything that watches the pipeline, for any mode: given the outcome
 * stream (one `observe` call per outcome), the fleet's endpoints and the
 * configuration in force, it logs (pino, a child logger per stage and per
 * endpoint), counts (prom-client), traces (OpenTelemetry, one trace per
 * reconciliation), answers health and readiness, and serves the debug views.
 * Credentials and Secret data are redacted on every way out.
 */
export async function startObserver(options: ObserverOptions): Promise<Observer> {
  const now = options.now ?? Date.now;
  let stores: ReadonlyMap<string, StoreReader> | undefined;
  let lastRender: LastRender | undefined;
  /** Quarantined objects, by object: what /debug/rendered lists. */
  const quarantine = new Map<string, Problem>();
  let lastValidation: ValidationState | undefined;

  const redactor = new Redactor();
  for (const secret of options.secrets ?? []) redactor.add(secret);
  redactor.setSource(
    secretValues(
      () => stores,
      (name) => options.config()?.watchedResources.some((r) => r.name === name && r.apiVersion === 'v1' && (r.kind === 'Secret' || r.resource === 'secrets')) ?? false,
    ),
  );

  const logger = createLogger(options.log, redactor);
  const stageLoggers = new Map<Stage, Logger>();
  const endpointLoggers = new Map<string, Logger>();
  const loggerFor = (entry: LogEntry): Logger => {
    let stage = stageLoggers.get(entry.stage);
    if (!stage) stageLoggers.set(entry.stage, (stage = logger.child({ stage: entry.stage })));
    if (entry.endpoint === undefined) return stage;
    const key = `${entry.stage}\u0000${entry.endpoint}`;
    let endpoint = endpointLoggers.get(key);
    if (!endpoint) endpointLoggers.set(key, (endpoint = stage.child({ endpoint: entry.endpoint })));
    return endpoint;
  };
  const log = (entry: LogEntry) => loggerFor(entry)[entry.level](entry.fields, entry.msg);

  const tracker = new ReconciliationTracker();
  const tracing = options.tracerProvider ? new ReconciliationTracing({ tracerProvider: options.tracerProvider, redactor }) : undefined;
  const admissionTracing = options.tracerProvider ? new AdmissionTracing({ tracerProvider: options.tracerProvider, redactor }) : undefined;
  const webhookLogger = logger.child({ stage: 'webhook' });
  const metrics = createMetrics({ exemplars: tracing !== undefined, maxEndpointLabels: options.maxEndpointLabels, stores: () => stores });
  const endpointStates = new EndpointStates();
  const health = new Health({ stalled: (at, afterMs) => tracker.stalled(at, afterMs), stallAfterMs: options.stallAfterMs ?? 5 * 60_000, now });

  /** Traces what the tracker saw (when tracing), counts finished reconciliations with their root span as exemplar. */
  const followReconciliations = (events: readonly TrackerEvent[]): readonly TracedEvent[] => {
    const traced = tracing ? tracing.apply(events) : events.map((event) => ({ event, span: undefined }));
    for (const { event, span } of traced) if (event.type === 'closed') metrics.reconciliation(event.reconciliation, exemplarLabels(span));
    return traced;
  };
  const logClosed = (traced: readonly TracedEvent[]) => {
    for (const { event } of traced) if (event.type === 'closed') log(reconciliationLog(event.reconciliation));
  };

  /**
   * The quarantine and the latest verdict, for /debug/rendered, and
   * readiness: a configuration that cannot be validated, or is invalid with
   * no object at fault, leaves the controller unable to deploy any change
   * until that is fixed, which no restart would do.
   */
  const followValidation = (outcome: Outcome, at: number) => {
    switch (outcome.type) {
      case 'quarantined':
        for (const problem of outcome.objects) quarantine.set(problem.object, problem);
        return;
      case 'released':
        for (const problem of outcome.objects) quarantine.delete(problem.object);
        return;
      case 'validated':
        lastValidation = { status: 'valid', revision: outcome.revision, hash: outcome.hash, at };
        health.setProblem(validationProblem, undefined);
        return;
      case 'validationFailed':
        lastValidation = { status: 'invalid', revision: outcome.revision, hash: outcome.hash, at, message: outcome.error };
        health.setProblem(validationProblem, `revision ${outcome.revision} is invalid and no object is at fault (see /debug/rendered); the last good configuration keeps serving`);
        return;
      case 'validationUnavailable':
        lastValidation = { status: 'unavailable', revision: outcome.revision, hash: outcome.hash, at, message: outcome.error };
        health.setProblem(validationProblem, `validation cannot run (attempt ${outcome.attempt}, trying again): ${outcome.error}`);
        return;
      case 'validationSkipped':
        if (outcome.valid) health.setProblem(validationProblem, undefined);
        return;
      default:
        return;
    }
  };

  const redactedView = (view: () => unknown) => () => redactor.redact(view());
  const healthServer = await serveHealth(options.health.port, options.health.host, {
    liveness: () => health.liveness(),
    readiness: () => health.readiness(),
    debug: {
      '/debug/config': redactedView(() => {
        const config = options.config();
        return { controller: config ? configView(config) : null, settings: options.settings?.() ?? {} };
      }),
      '/debug/rendered': redactedView(() => renderedView(lastRender, [...quarantine.values()], lastValidation)),
      '/debug/endpoints': redactedView(() => endpointsView(options.endpoints(), endpointStates.states, options.endpointDetails?.() ?? new Map())),
      '/debug/resources': redactedView(() => resourcesView(stores, options.config()?.watchedResources ?? [], options.resourceKeysLimit ?? 1000)),
    },
  });
  let metricsServer: Server;
  try {
    metricsServer = await serveMetrics(options.metrics.port, options.metrics.host, (accept) => metrics.expose(accept));
  } catch (error) {
    await closeServer(healthServer);
    throw error;
  }

  return {
    logger,
    metrics,
    redactor,
    healthPort: portOf(healthServer),
    metricsPort: portOf(metricsServer),
    observe(outcome) {
      // Watching the pipeline must never stop it: a failure here is logged, not thrown into the stream.
      try {
        const at = now();
        if (outcome.type === 'configApplied') {
          stores = undefined;
          health.setCondition(configurationLoaded, true);
          // A new pipeline: its own quarantine, and its own verdicts to come.
          quarantine.clear();
          lastValidation = undefined;
          health.setProblem(validationProblem, undefined);
        } else if (outcome.type === 'synced') {
          stores = outcome.stores;
          health.setCondition(initialSyncDone, true);
        } else if (outcome.type === 'rendered' || (outcome.type === 'quarantined' && outcome.by === 'validation')) {
          lastRender = { revision: outcome.revision, hash: outcome.hash, files: outcome.files, excluded: outcome.excluded, warnings: outcome.warnings };
        }
        followValidation(outcome, at);
        endpointStates.apply(outcome, at);
        const traced = followReconciliations(tracker.apply(outcome, at));
        metrics.outcome(outcome, exemplarLabels(spanEndedBy(outcome, traced)));
        for (const entry of outcomeLog(outcome)) log(entry);
        logClosed(traced);
      } catch (error) {
        logger.error({ stage: 'reconcile' }, `observing a ${outcome.type} outcome failed: ${errorMessage(error)}`);
      }
    },
    pipelineStopped(reason) {
      health.pipelineStopped(reason);
      logger.error({ stage: 'reconcile' }, `the pipeline stopped: ${reason}`);
    },
    informerRestarted(resource, reason) {
      metrics.informerRestarted(resource);
      logger.warn({ stage: 'resources', resource }, `watch of ${resource} restarted: ${reason}`);
    },
    leaderChanged(isLeader) {
      metrics.leader(isLeader);
      logger.info({ stage: 'reconcile', leader: isLeader }, isLeader ? 'became the leader' : 'is not the leader');
    },
    admissionReviewed(record, timing, headers) {
      try {
        const span = admissionTracing?.trace(record, timing, headers);
        metrics.admission(record.resource, record.result, Math.max(0, timing.end - timing.start) / 1000, exemplarLabels(span));
        const { uid, resource, operation, namespace, name, result, check } = record;
        const fields = { uid, resource, operation, namespace, name, result, check, durationMs: Math.round(timing.end - timing.start) };
        const object = `${resource} ${namespace === undefined ? '' : `${namespace}/`}${name}`;
        if (result === 'denied') webhookLogger.warn(fields, `denied ${operation} of ${object}: ${record.reason}`);
        else if (result === 'error') webhookLogger.warn(fields, `could not judge ${operation ?? 'a request'} of ${object}: ${record.reason}`);
        else
          webhookLogger.debug(
            fields,
            `${result === 'allowed' ? 'admitted' : 'left alone'} ${operation} of ${object}${record.reason === undefined ? '' : ` (${record.reason})`}${record.warnings.length > 0 ? `, with warnings: ${record.warnings.join('; ')}` : ''}`,
          );
      } catch (error) {
        webhookLogger.error(`observing an admission review failed: ${errorMessage(error)}`);
      }
    },
    setReadiness(condition, holds) {
      health.setCondition(condition, holds);
    },
    addLivenessCheck(check) {
      health.addCheck(check);
    },
    beginShutdown() {
      health.beginShutdown();
    },
    async stop() {
      health.beginShutdown();
      logClosed(followReconciliations(tracker.closeAll(now())));
      await Promise.all([closeServer(healthServer), closeServer(metricsServer)]);
    },
  };
}

const validationProblem = 'validation';

/** The span an outcome ended: its render, its validation, or (for a deployment) its endpoint's deploy span. */
function spanEndedBy(outcome: Outcome, traced: readonly TracedEvent[]) {
  const found = traced.find(({ event }) => {
    switch (outcome.type) {
      case 'rendered':
      case 'renderFailed':
        return event.type === 'rendered';
      case 'validated':
      case 'validationFailed':
        return event.type === 'validated';
      case 'deployed':
        return (event.type === 'endpointDone' || event.type === 'standaloneDone') && event.deploy.endpoint === outcome.endpoint && event.deploy.ended === 'deployed';
      default:
        return false;
    }
  });
  return found?.span;
}
