import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type RegistryContentType } from 'prom-client';
import type { StoreReader } from '../pipeline/model.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { openMetricsToPrometheus } from './exposition.ts';
import type { Reconciliation } from './reconciliations.ts';

export const metricPrefix = 'haproxy_template_ic_';
const p = metricPrefix;

/** Trace ids attached to a histogram sample. */
export type Exemplar = Readonly<Record<string, string>> | undefined;

export interface MetricsOptions {
  /** Attach trace ids to histogram samples; the registry then speaks OpenMetrics to those who ask for it. */
  readonly exemplars: boolean;
  /** Distinct endpoint label values; further endpoints share the value `other`, so a large fleet cannot explode the series. */
  readonly maxEndpointLabels?: number;
  /** The live stores, counted per watched type at each scrape. */
  readonly stores: () => ReadonlyMap<string, StoreReader> | undefined;
  /** The registry to fill, a new one when absent: docs/reference/metrics.md is generated from a registry passed here. */
  readonly registry?: Registry<RegistryContentType>;
}

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

export interface Metrics {
  /** Counts and times one pipeline outcome; `exemplar` names the span it ended, when traced. */
  outcome(outcome: Outcome, exemplar?: Exemplar): void;
  /** Counts and times one finished reconciliation. */
  reconciliation(reconciliation: Reconciliation, exemplar?: Exemplar): void;
  informerRestarted(resource: string): void;
  /** The manifest folder's watch was set up anew after it missed a change (local mode). */
  manifestWatchRestarted(): void;
  /** The HAProxy on this machine was started again after it died (local mode). */
  haproxyRestarted(): void;
  leader(isLeader: boolean): void;
  /** One AdmissionReview the webhook answered: its resource (`ingresses`), result (allowed, denied, skipped, error) and time. */
  admission(resource: string, result: string, seconds: number, exemplar?: Exemplar): void;
  /** The exposition for a scrape with this Accept header: OpenMetrics (with exemplars) only when asked for. */
  expose(accept: string | undefined): Promise<Exposition>;
}

const durationBuckets = {
  render: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  validation: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  deploy: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  // The 500 ms debounce and the 2 s minimum deployment interval dominate: resolution around them.
  changeToDeploy: [0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 15, 30, 60, 120],
  reconciliation: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  // The API server waits 5 s by default: resolution below that, around the 100 ms target.
  admission: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5],
};

/** The first `max` endpoints keep their own label value; the rest share one. */
function boundedLabel(max: number): (endpoint: string) => string {
  const kept = new Set<string>();
  return (endpoint) => {
    if (kept.has(endpoint)) return endpoint;
    if (kept.size >= max) return 'other';
    kept.add(endpoint);
    return endpoint;
  };
}

/**
 * The controller's Prometheus metrics, in a registry of its own (never the
 * global one), named with the haproxy_template_ic_ prefix.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = options.registry ?? new Registry<RegistryContentType>();
  // Exemplars exist only in OpenMetrics; expose() converts for scrapers that ask for the Prometheus format.
  if (options.exemplars) registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  collectDefaultMetrics({ register: registry, prefix: p });
  const registers = [registry];
  const endpointLabel = boundedLabel(options.maxEndpointLabels ?? 50);
  // Anyone who reaches the webhook can name a resource: a few distinct values, then `other`.
  const webhookResourceLabel = boundedLabel(20);
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) => {
    const metric = new Histogram<L>({ name, help, labelNames, buckets, registers, enableExemplars: options.exemplars });
    return (labels: Partial<Record<L, string>>, seconds: number, exemplar: Exemplar) => {
      // prom-client types exemplar labels as the metric's own label names; they are trace ids.
      if (options.exemplars) metric.observe({ labels, value: seconds, ...(exemplar ? { exemplarLabels: exemplar as Partial<Record<L, string>> } : {}) });
      else metric.observe(labels, seconds);
    };
  };

  const reconciliations = new Counter({
    name: `${p}reconciliations_total`,
    help: 'Reconciliations by result: deployed, unchanged, render_failed, invalid, deploy_failed, superseded, no_endpoints, abandoned',
    labelNames: ['result'] as const,
    registers,
  });
  const reconciliationDuration = histogram(
    `${p}reconciliation_duration_seconds`,
    'Time from the start of a render to the last endpoint reached (or the stage that ended the reconciliation), by result',
    ['result'],
    durationBuckets.reconciliation,
  );
  const renders = new Counter({ name: `${p}renders_total`, help: 'Renders by result (success, failure)', labelNames: ['result'] as const, registers });
  const renderDuration = histogram(`${p}render_duration_seconds`, 'Time to render the templates', [], durationBuckets.render);
  const validations = new Counter({
    name: `${p}validations_total`,
    help: 'Validations with haproxy -c by result (valid, invalid, unavailable: no verdict, tried again; skipped: identical to the last configuration judged)',
    labelNames: ['result'] as const,
    registers,
  });
  const validationDuration = histogram(`${p}validation_duration_seconds`, 'Time to validate a configuration, by result', ['result'], durationBuckets.validation);
  const quarantines = new Counter({
    name: `${p}quarantines_total`,
    help: 'Objects quarantined because HAProxy refused a configuration with them, by watched kind',
    labelNames: ['kind'] as const,
    registers,
  });
  const quarantined = new Gauge({ name: `${p}quarantined_objects`, help: 'Objects in quarantine now (left out until they change)', registers });
  const deploys = new Counter({
    name: `${p}deploys_total`,
    help: 'Deployment attempts by endpoint, mode (runtime, reload, unchanged, persisted; none for a failed attempt), reason (change, discovered, drift, confirmed) and result',
    labelNames: ['endpoint', 'mode', 'reason', 'result'] as const,
    registers,
  });
  const deployDuration = histogram(
    `${p}deploy_duration_seconds`,
    'Time to deploy a configuration to one endpoint, retries included, by endpoint and mode',
    ['endpoint', 'mode'],
    durationBuckets.deploy,
  );
  const reloads = new Counter({ name: `${p}reloads_total`, help: 'Deployments that reloaded HAProxy, by endpoint', labelNames: ['endpoint'] as const, registers });
  const runtimeDeploys = new Counter({
    name: `${p}runtime_deploys_total`,
    help: 'Deployments applied through the Runtime API without a reload, by endpoint',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const changeToDeploy = histogram(
    `${p}change_to_deploy_seconds`,
    'Time from the first resource change folded into a configuration to its deployment on an endpoint, by endpoint and mode',
    ['endpoint', 'mode'],
    durationBuckets.changeToDeploy,
  );
  const deployedConfig = new Gauge({
    name: `${p}deployed_config_info`,
    help: 'The content hash of the configuration last deployed successfully (value 1)',
    labelNames: ['hash'] as const,
    registers,
  });
  const configLoads = new Counter({
    name: `${p}config_loads_total`,
    help: 'Controller configurations by result (applied, rejected)',
    labelNames: ['result'] as const,
    registers,
  });
  const resourceErrors = new Counter({ name: `${p}resource_errors_total`, help: 'Resources that could not be read', registers });
  registry.registerMetric(
    new Gauge({
      name: `${p}resources`,
      help: 'Objects held per watched type',
      labelNames: ['type'] as const,
      registers: [],
      // Read from the live stores at each scrape: nothing to keep in step on every event.
      collect() {
        this.reset();
        for (const [type, store] of options.stores() ?? []) this.set({ type }, store.size);
      },
    }),
  );
  const informerRestarts = new Counter({
    name: `${p}informer_restarts_total`,
    help: 'Informers restarted after they stopped, by watched resource',
    labelNames: ['resource'] as const,
    registers,
  });
  const manifestWatchRestarts = new Counter({
    name: `${p}manifest_watch_restarts_total`,
    help: 'Watches of the manifest folder set up anew after a periodic re-read found a change they had not reported (local mode)',
    registers,
  });
  const haproxyRestarts = new Counter({
    name: `${p}haproxy_restarts_total`,
    help: 'Times the HAProxy on this machine was found dead and started again (local mode)',
    registers,
  });
  const leader = new Gauge({ name: `${p}leader`, help: '1 while this instance is the leader (the one that deploys), else 0', registers });
  const webhookRequests = new Counter({
    name: `${p}webhook_requests_total`,
    help: 'AdmissionReviews the webhook answered, by resource and result (allowed, denied, skipped: not judged, error: could not judge)',
    labelNames: ['resource', 'result'] as const,
    registers,
  });
  const webhookDuration = histogram(`${p}webhook_request_duration_seconds`, 'Time to answer an AdmissionReview, by resource and result', ['resource', 'result'], durationBuckets.admission);

  return {
    outcome(outcome, exemplar) {
      switch (outcome.type) {
        case 'configApplied':
          configLoads.inc({ result: 'applied' });
          // A new pipeline starts with an empty quarantine.
          quarantined.set(0);
          break;
        case 'configRejected':
          configLoads.inc({ result: 'rejected' });
          break;
        case 'resourceError':
          resourceErrors.inc();
          break;
        case 'rendered':
        case 'renderFailed':
          renders.inc({ result: outcome.type === 'rendered' ? 'success' : 'failure' });
          renderDuration({}, outcome.durationMs / 1000, exemplar);
          break;
        case 'validated':
        case 'validationFailed': {
          const result = outcome.type === 'validated' ? 'valid' : 'invalid';
          validations.inc({ result });
          validationDuration({ result }, outcome.durationMs / 1000, exemplar);
          break;
        }
        case 'validationSkipped':
          validations.inc({ result: 'skipped' });
          break;
        case 'validationUnavailable':
          validations.inc({ result: 'unavailable' });
          break;
        case 'quarantined':
          for (const problem of outcome.objects) quarantines.inc({ kind: problem.object.split(' ', 1)[0]! });
          quarantined.set(outcome.total);
          break;
        case 'released':
          quarantined.set(outcome.total);
          break;
        case 'deployed': {
          const endpoint = endpointLabel(outcome.endpoint);
          const { mode } = outcome.result;
          deploys.inc({ endpoint, mode, reason: outcome.reason, result: 'success' });
          deployDuration({ endpoint, mode }, outcome.durationMs / 1000, exemplar);
          if (mode === 'reload') reloads.inc({ endpoint });
          if (mode === 'runtime') runtimeDeploys.inc({ endpoint });
          if (outcome.latencyMs !== undefined) changeToDeploy({ endpoint, mode }, outcome.latencyMs / 1000, exemplar);
          deployedConfig.reset();
          deployedConfig.set({ hash: outcome.hash }, 1);
          break;
        }
        case 'deployFailed':
          deploys.inc({ endpoint: endpointLabel(outcome.endpoint), mode: 'none', reason: outcome.reason, result: 'failure' });
          break;
        default:
          break;
      }
    },
    reconciliation(reconciliation, exemplar) {
      const result = reconciliation.result ?? 'abandoned';
      reconciliations.inc({ result });
      reconciliationDuration({ result }, Math.max(0, (reconciliation.end ?? reconciliation.render.start) - reconciliation.render.start) / 1000, exemplar);
    },
    informerRestarted(resource) {
      informerRestarts.inc({ resource });
    },
    manifestWatchRestarted() {
      manifestWatchRestarts.inc();
    },
    haproxyRestarted() {
      haproxyRestarts.inc();
    },
    leader(isLeader) {
      leader.set(isLeader ? 1 : 0);
    },
    admission(resource, result, seconds, exemplar) {
      const labels = { resource: webhookResourceLabel(resource), result };
      webhookRequests.inc(labels);
      webhookDuration(labels, seconds, exemplar);
    },
    async expose(accept) {
      // prom-client writes NaN as `Nan`, which OpenMetrics does not allow (Prometheus's parser tolerates it).
      const body = (await registry.metrics()).replace(/ Nan$/gm, ' NaN');
      if (!options.exemplars) return { contentType: registry.contentType, body };
      if (accept?.includes('application/openmetrics-text')) return { contentType: registry.contentType, body };
      return { contentType: Registry.PROMETHEUS_CONTENT_TYPE, body: openMetricsToPrometheus(body) };
    },
  };
}
