import type { KubeConfig } from '@kubernetes/client-node';
import type { TracerProvider } from '@opentelemetry/api';
import {
  BehaviorSubject,
  catchError,
  combineLatest,
  defer,
  distinctUntilChanged,
  EMPTY,
  filter,
  finalize,
  from,
  map,
  merge,
  mergeMap,
  of,
  Subject,
  tap,
  timer,
  type Observable,
} from 'rxjs';
import type { CommandOutput } from '../lib/cli/output.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ConfigLoad, ControllerConfig, WatchedResource } from '../lib/config/types.ts';
import type { DataplaneTlsOptions } from '../lib/dataplane/tls.ts';
import { discoveredFleet, type DiscoveredFleet } from '../lib/deploy/dataplane-fleet.ts';
import { errorMessage } from '../lib/error-message.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { controllerCandidate, sameCandidate, type ControllerCandidate } from '../lib/kube/controller-candidate.ts';
import { EventRecorder, type EventSubject } from '../lib/kube/event-recorder.ts';
import type { EventSeriesOptions } from '../lib/kube/event-series.ts';
import { defaultInformerOptions, ResilientInformer, type InformerOptions } from '../lib/kube/informer.ts';
import { IngressStatusWriter } from '../lib/kube/ingress-status-writer.ts';
import { LeaseLock } from '../lib/kube/lease-lock.ts';
import { outcomeEvents } from '../lib/kube/outcome-events.ts';
import { podEndpoint } from '../lib/kube/pod-endpoints.ts';
import { watchedType } from '../lib/kube/select.ts';
import type { Endpoint, KubeObject, StoreReader } from '../lib/pipeline/model.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { LogSettings } from '../lib/telemetry/logger.ts';
import { startObserver, type Observer } from '../lib/telemetry/observer.ts';
import { controller } from './controller.ts';
import { informerEvents, type StartInformer } from './informer-events.ts';
import { leadership } from './leadership.ts';
import { serialLatest } from './operators/serial-latest.ts';
import { reconcile } from './reconcile.ts';
import { watchedObjects } from './watched-objects.ts';
import { startWebhook } from './webhook.ts';
import type { WebhookSettings } from '../lib/webhook/settings.ts';

export interface LeaseSettings {
  readonly name: string;
  readonly durationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryMs: number;
}

export interface ClusterModeOptions {
  readonly kubeConfig: KubeConfig;
  /** Where the controller's ConfigMap, Secret, Lease and the HAProxy pods live. */
  readonly namespace: string;
  readonly configMap: string;
  readonly credentialsSecret: string;
  /** This replica's name (its pod name): the lease holder identity and the events' reporting instance. */
  readonly identity: string;
  /** Undefined: this replica always leads (one replica, or tests). */
  readonly lease: LeaseSettings | undefined;
  /** The HAProxy Service whose address Ingresses publish in their status. */
  readonly publishService: { readonly namespace: string; readonly name: string } | undefined;
  readonly dataplaneTls: DataplaneTlsOptions | undefined;
  /** The container in HAProxy pods whose readiness means the Data Plane API can take a deployment. */
  readonly dataplaneContainer: string;
  readonly bindAddress: string;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly informer?: InformerOptions;
  readonly eventSeries?: EventSeriesOptions;
  readonly output: CommandOutput;
  /** JSON lines to `output` by default. */
  readonly log?: LogSettings;
  /** Set up at the entry point when an OTLP endpoint is configured. */
  readonly tracerProvider?: TracerProvider;
  /** Work without progress for this long makes /healthz fail. */
  readonly stallAfterMs?: number;
  /** Lines the entry point found before logging started (the container's limits), logged first. */
  readonly notes?: readonly string[];
  /** The validating admission webhook; none when undefined. */
  readonly webhook?: WebhookSettings | undefined;
}

export interface ClusterMode {
  /** Stops everything and releases the lease if held; resolves when done. */
  stop(): Promise<void>;
  readonly outcomes: Observable<Outcome>;
  readonly leading: Observable<boolean>;
  /** Logs, metrics, traces, health and debug views. */
  readonly observer: Observer;
  /** Number of informer restarts so far, by watched resource. */
  readonly restarts: ReadonlyMap<string, number>;
  /** The resource stores as last rendered; undefined before the first render. */
  stores(): ReadonlyMap<string, StoreReader> | undefined;
  /** The admission webhook's port once it serves; undefined without a webhook. */
  readonly webhookPort: Promise<number> | undefined;
}

interface Loaded {
  readonly config: ControllerConfig;
  readonly candidate: ControllerCandidate;
}

function labelSelector(matchLabels: Readonly<Record<string, string>>): string {
  return Object.entries(matchLabels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

function sameEndpoints(a: readonly Endpoint[], b: readonly Endpoint[]): boolean {
  return a.length === b.length && a.every((endpoint, i) => endpoint.id === b[i]!.id && endpoint.url === b[i]!.url);
}

/**
 * In-cluster mode: the controller configuration and Data Plane API
 * credentials come from a watched ConfigMap and Secret, resources from one
 * informer per watched resource, endpoints from the HAProxy pods. Every
 * replica watches, renders and validates, so a new leader has the current
 * configuration at hand; only the leader's endpoint set is non-empty, so
 * only the leader deploys, and only it writes Events and Ingress status.
 */
export async function startClusterMode(options: ClusterModeOptions): Promise<ClusterMode> {
  const { kubeConfig, namespace, output } = options;
  const restarts = new Map<string, number>();
  let current: ControllerConfig | undefined;
  let fleet: DiscoveredFleet | undefined;
  let endpointsNow: readonly Endpoint[] = [];
  const observer = await startObserver({
    health: { host: options.bindAddress, port: options.healthPort },
    metrics: { host: options.bindAddress, port: options.metricsPort },
    log: options.log ?? { level: 'info', format: 'json', write: output.out },
    ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
    ...(options.stallAfterMs !== undefined ? { stallAfterMs: options.stallAfterMs } : {}),
    config: () => current,
    settings: () => ({
      mode: 'cluster',
      namespace,
      configMap: options.configMap,
      credentialsSecret: options.credentialsSecret,
      identity: options.identity,
      lease: options.lease,
      publishService: options.publishService,
      dataplaneTls: options.dataplaneTls,
      dataplaneContainer: options.dataplaneContainer,
    }),
    endpoints: () => endpointsNow,
    endpointDetails: () => fleet?.statuses() ?? new Map(),
  });
  const log = observer.logger;
  for (const note of options.notes ?? []) log.info(note);
  const kubeLog = log.child({ stage: 'kubernetes' });
  const informerOptions = options.informer ?? defaultInformerOptions;
  const start: StartInformer = (spec, handlers) => {
    const informer = new ResilientInformer(kubeConfig, spec, handlers, informerOptions);
    informer.start();
    return informer;
  };
  const restarting = (resource: string) => (reason: string, delayMs: number) => {
    restarts.set(resource, (restarts.get(resource) ?? 0) + 1);
    observer.informerRestarted(resource, `${reason}; starting again in ${Math.round(delayMs)} ms`);
  };
  // Every ConfigMap and Secret of the namespace: templates may be kept in any of them (GitOps).
  const inNamespace = (resource: string) => ({ apiVersion: 'v1', kind: resource === 'configmaps' ? 'ConfigMap' : 'Secret', resource, namespace });
  const byName = (objects: ReadonlyMap<string, KubeObject>) => new Map([...objects.values()].map((object) => [object.metadata.name, object]));

  const configMapSubject: EventSubject = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: options.configMap };
  let configSources: readonly EventSubject[] = [configMapSubject];
  const leading = new BehaviorSubject<boolean>(options.lease === undefined);
  const lock = options.lease
    ? new LeaseLock(kubeConfig, { namespace, name: options.lease.name, identity: options.identity, leaseDurationMs: options.lease.durationMs })
    : undefined;
  const leadership$ = lock && options.lease
    ? timer(0, options.lease.retryMs).pipe(
        leadership({
          attempt: () => defer(() => lock.tryAcquireOrRenew()),
          renewDeadlineMs: options.lease.renewDeadlineMs,
          onError: (error) => kubeLog.warn(`lease ${namespace}/${options.lease!.name}: ${error}`),
        }),
      )
    : EMPTY;

  const candidates = combineLatest([
    watchedObjects(start, inNamespace('configmaps'), restarting('configmaps')),
    watchedObjects(start, inNamespace('secrets'), restarting('secrets')),
  ]).pipe(
    map(([configMaps, secrets]) => controllerCandidate(options.configMap, options.credentialsSecret, byName(configMaps), byName(secrets))),
    distinctUntilChanged(sameCandidate),
    tap((candidate) => {
      // Learnt credentials join the redaction list before anything could log them.
      if (candidate.password) observer.redactor.add(candidate.password);
      configSources = [configMapSubject, ...candidate.sources.map((source) => ({ apiVersion: 'v1', kind: source.kind, namespace, name: source.name }))];
    }),
  );

  const load = (candidate: ControllerCandidate): ConfigLoad<Loaded> => {
    if (candidate.problems.length > 0) return { ok: false, errors: candidate.problems };
    const loaded = loadControllerConfig(candidate.text!);
    if (!loaded.ok) return { ok: false, errors: loaded.errors.map((e) => `ConfigMap ${options.configMap}: ${e}`) };
    return { ok: true, config: { config: loaded.config, candidate } };
  };

  let resources: readonly WatchedResource[] = [];
  let className = '';
  let stores: ReadonlyMap<string, StoreReader> | undefined;
  const statusWriter = options.publishService ? new IngressStatusWriter(kubeConfig) : undefined;

  const pipeline = ({ config, candidate }: Loaded, report: (outcome: Outcome) => void) => {
    current = config;
    const pipelineFleet = discoveredFleet({ username: candidate.username, password: candidate.password, tls: options.dataplaneTls });
    fleet = pipelineFleet;
    const renderer = createRenderer(config);
    const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
    resources = config.watchedResources;
    className = config.ingress.className;
    const pods = watchedObjects(
      start,
      { apiVersion: 'v1', kind: 'Pod', resource: 'pods', namespace, labelSelector: labelSelector(config.podSelector.matchLabels) },
      restarting('pods'),
    ).pipe(
      map((found) =>
        [...found.values()]
          .map((pod) => podEndpoint(pod, { scheme: config.dataplane.scheme, port: config.dataplane.port, container: options.dataplaneContainer }))
          .filter((endpoint): endpoint is Endpoint => endpoint !== undefined)
          .toSorted((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      ),
    );
    const endpoints = combineLatest([pods, leading]).pipe(
      map(([found, leader]) => (leader ? found : [])),
      distinctUntilChanged(sameEndpoints),
      tap((found) => {
        endpointsNow = found;
        pipelineFleet.retain(found);
      }),
    );
    const events = informerEvents({
      resources: config.watchedResources,
      ignoreFields: config.ignoreFields,
      start,
      restarting: (resource, reason, delayMs) => restarting(resource)(reason, delayMs),
    });
    return events.pipe(
      reconcile({
        watched: config.watchedResources.map(watchedType),
        settings: config.pipeline,
        endpoints,
        render: (snapshot) =>
          defer(() => {
            stores = snapshot.stores;
            return of(renderer({ stores: snapshot.stores }));
          }),
        validate: (rendered) => defer(() => validator.validate(rendered)),
        deploy: (request) => defer(() => pipelineFleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason)),
        report,
      }),
      finalize(() => void pipelineFleet.stop()),
    );
  };

  const recorder = new EventRecorder(kubeConfig, {
    controller: 'haproxy-template-ic',
    instance: options.identity,
    ...(options.eventSeries ? { series: options.eventSeries } : {}),
  });

  const observed = new Subject<Outcome>();
  const outcomes = candidates.pipe(controller({ load, pipeline }));

  // Events: only the leader writes them, a few at a time, and a failed write is logged, never fatal.
  const eventWrites = observed.pipe(
    filter(() => leading.value),
    mergeMap((outcome) => from(outcomeEvents(outcome, { configSources, resources }))),
    mergeMap(
      (event) =>
        defer(() => recorder.record(event)).pipe(
          catchError((error: unknown) => {
            kubeLog.warn(`event ${event.reason} on ${event.regarding.kind} ${event.regarding.name} not written: ${errorMessage(error)}`);
            return EMPTY;
          }),
        ),
      4,
    ),
  );

  // Ingress status: after each deployment and whenever the published Service's address changes.
  const publish = options.publishService;
  const statusWrites =
    statusWriter && publish
      ? combineLatest([
          watchedObjects(
            start,
            { apiVersion: 'v1', kind: 'Service', resource: 'services', namespace: publish.namespace, fieldSelector: `metadata.name=${publish.name}` },
            restarting('publish-service'),
          ).pipe(map((services) => services.get(`${publish.namespace}/${publish.name}`))),
          merge(of(undefined), observed.pipe(filter((outcome) => outcome.type === 'deployed'))),
          leading,
        ]).pipe(
          filter(([, , leader]) => leader && stores !== undefined),
          serialLatest(([service]) =>
            defer(() => statusWriter.sync(stores!, resources, className, service)).pipe(
              tap((written) => {
                if (written > 0) kubeLog.info(`ingress status: ${written} Ingress(es) now publish ${publish.namespace}/${publish.name}`);
              }),
              catchError((error: unknown) => {
                kubeLog.warn(`ingress status not written: ${errorMessage(error)}`);
                return EMPTY;
              }),
            ),
          ),
        )
      : EMPTY;

  const subscription = outcomes.subscribe({
    next: (outcome) => {
      observer.observe(outcome);
      observed.next(outcome);
    },
    error: (error: unknown) => observer.pipelineStopped(errorMessage(error)),
    complete: () => observer.pipelineStopped('the configuration source ended'),
  });
  subscription.add(
    leadership$.subscribe((leader) => {
      observer.leaderChanged(leader);
      leading.next(leader);
    }),
  );
  subscription.add(eventWrites.subscribe());
  subscription.add(statusWrites.subscribe());

  // Every replica judges admissions, leader or not, over the configuration in force and the live stores.
  const webhook = options.webhook && startWebhook({
    settings: options.webhook,
    namespace,
    bindAddress: options.bindAddress,
    kubeConfig,
    start,
    restarting,
    state: () => (current && stores ? { config: current, stores } : undefined),
    observer,
  });

  if (!options.lease) observer.leaderChanged(true);
  log.info(
    `watching ConfigMap ${namespace}/${options.configMap} and Secret ${namespace}/${options.credentialsSecret}; ` +
      `health on ${options.bindAddress}:${observer.healthPort}, metrics on ${options.bindAddress}:${observer.metricsPort}`,
  );

  return {
    outcomes: observed.asObservable(),
    leading: leading.asObservable(),
    restarts,
    observer,
    stores: () => stores,
    webhookPort: webhook?.listening,
    stop: async () => {
      observer.beginShutdown();
      subscription.unsubscribe();
      await webhook?.stop();
      leading.next(false);
      await lock?.release().catch((error: unknown) => kubeLog.warn(`lease not released: ${errorMessage(error)}`));
      await observer.stop();
    },
  };
}
