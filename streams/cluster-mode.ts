import type { KubeConnection } from '../lib/kube/kube-connection.ts';
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
  shareReplay,
  Subject,
  tap,
  timer,
  withLatestFrom,
  type Observable,
} from 'rxjs';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { CommandOutput } from '../lib/cli/output.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { DataplaneTlsOptions } from '../lib/dataplane/tls.ts';
import { discoveredFleet, type DiscoveredFleet } from '../lib/deploy/dataplane-fleet.ts';
import { errorMessage } from '../lib/error-message.ts';
import { controllerCandidate, sameCandidate, type ControllerCandidate } from '../lib/kube/controller-candidate.ts';
import { EventRecorder, type EventSubject } from '../lib/kube/event-recorder.ts';
import type { EventSeriesOptions } from '../lib/kube/event-series.ts';
import { defaultInformerOptions, ResilientInformer, type InformerOptions } from '../lib/kube/informer.ts';
import { LeaseLock } from '../lib/kube/lease-lock.ts';
import { outcomeEvents } from '../lib/kube/outcome-events.ts';
import { podEndpoint } from '../lib/kube/pod-endpoints.ts';
import { watchKey } from '../lib/kube/select.ts';
import { servesResource } from '../lib/kube/served-resource.ts';
import type { Endpoint, KubeObject } from '../lib/pipeline/model.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { LogSettings } from '../lib/telemetry/logger.ts';
import { startObserver, type Observer } from '../lib/telemetry/observer.ts';
import { gatewayStatusWrites } from './gateway-status.ts';
import { ingressStatusWrites } from './ingress-status.ts';
import { informerEvents, type StartInformer } from './informer-events.ts';
import { kept, type KeptWatches } from './kept.ts';
import { optionalResourceEvents } from './optional-resources.ts';
import { leadership } from './leadership.ts';
import { replayingEvents, replayingLast } from './operators/replaying.ts';
import { buildPipeline, type ModeParts, type PipelineState } from './pipeline.ts';
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
  readonly kubeConnection: KubeConnection;
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
  /** How often discovery is asked again about an optional resource it did not serve (a CRD installed later); 60 s by default. */
  readonly rediscoverEveryMs?: number;
  /** Wall-clock time for what the controller writes (status conditions' lastTransitionTime); real time by default. */
  readonly clock?: Clock;
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
  /** What the pipeline holds: the configuration in force, its stores, its endpoints. */
  readonly state: Observable<PipelineState<ControllerCandidate>>;
  /** The admission webhook's port once it serves; undefined without a webhook. */
  readonly webhookPort: Promise<number> | undefined;
}

interface Loaded {
  readonly config: ControllerConfig;
  readonly candidate: ControllerCandidate;
}

/**
 * How long a watch the last controller configuration had waits for the next
 * one to take it over (see kept.ts): the next asks for it once discovery has
 * answered about its optional resources, which takes an API server round
 * trip or a few.
 */
const KEEP_WATCHES_MS = 30_000;

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
  const { kubeConnection, namespace, output } = options;
  const restarts = new Map<string, number>();
  const informerOptions = options.informer ?? defaultInformerOptions;
  const start: StartInformer = (spec, handlers) => {
    const informer = new ResilientInformer(kubeConnection, spec, handlers, informerOptions);
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
  const leading = new BehaviorSubject<boolean>(options.lease === undefined);
  // A controller configuration edit keeps every watch the next configuration has too: no LIST again.
  const watches: KeptWatches = new Map();
  const released = new Subject<void>();

  const candidates = combineLatest([watchedObjects(start, inNamespace('configmaps'), restarting('configmaps')), watchedObjects(start, inNamespace('secrets'), restarting('secrets'))]).pipe(
    map(([configMaps, secrets]) => controllerCandidate(options.configMap, options.credentialsSecret, byName(configMaps), byName(secrets))),
    distinctUntilChanged(sameCandidate),
    // Learnt credentials join the redaction list before anything could log them.
    tap((candidate) => candidate.password && observer.redactor.add(candidate.password)),
  );

  const load = (candidate: ControllerCandidate): ConfigLoad<Loaded> => {
    if (candidate.problems.length > 0) return { ok: false, errors: candidate.problems };
    const loaded = loadControllerConfig(candidate.text!);
    if (!loaded.ok) return { ok: false, errors: loaded.errors.map((e) => `ConfigMap ${options.configMap}: ${e}`) };
    return { ok: true, config: { config: loaded.config, candidate } };
  };

  // Kept while the credentials stay: it knows what each HAProxy runs, so the next configuration's first
  // deployment reads nothing back first, and one still in progress finishes rather than being cut off.
  let keptFleet: { readonly access: string; readonly fleet: DiscoveredFleet } | undefined;
  const fleetFor = (candidate: ControllerCandidate): DiscoveredFleet => {
    const access = JSON.stringify([candidate.username, candidate.password]);
    if (keptFleet?.access === access) return keptFleet.fleet;
    void keptFleet?.fleet.stop();
    const deployLog = observer.logger.child({ stage: 'deploy' });
    const log = (message: string): void => deployLog.warn(message);
    keptFleet = { access, fleet: discoveredFleet({ username: candidate.username, password: candidate.password, tls: options.dataplaneTls, log }) };
    return keptFleet.fleet;
  };

  const parts = ({ config, candidate }: Loaded): ModeParts => {
    const fleet = fleetFor(candidate);
    const podSelector = labelSelector(config.podSelector.matchLabels);
    const pods = watchedObjects(start, { apiVersion: 'v1', kind: 'Pod', resource: 'pods', namespace, labelSelector: podSelector }, restarting('pods')).pipe(
      kept({ key: `pods ${podSelector}`, kept: watches, connector: replayingLast<ReadonlyMap<string, KubeObject>>, graceMs: KEEP_WATCHES_MS, released }),
      map((found) =>
        [...found.values()]
          .map((pod) => podEndpoint(pod, { scheme: config.dataplane.scheme, port: config.dataplane.port, container: options.dataplaneContainer }))
          .filter((endpoint): endpoint is Endpoint => endpoint !== undefined)
          .toSorted((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      ),
      // One watch for the endpoints and the members.
      shareReplay({ bufferSize: 1, refCount: true }),
    );
    return {
      config,
      fleet,
      // Every replica renders the pods' peers section, so a new leader deploys what it rendered as a follower.
      members: pods,
      // Only the leader's endpoint set is non-empty: only the leader deploys.
      endpoints: combineLatest([pods, leading]).pipe(
        map(([found, leader]) => (leader ? found : [])),
        distinctUntilChanged(sameEndpoints),
        tap((found) => fleet.retain(found)),
      ),
      events: () =>
        optionalResourceEvents({
          resources: config.watchedResources,
          served: (resource) => defer(() => servesResource(kubeConnection, resource.apiVersion, resource.resource)),
          log: (level, line) => observer.logger.child({ stage: 'kubernetes' })[level](line),
          recheck: { everyMs: options.rediscoverEveryMs ?? 60_000 },
          // One informer per resource, each kept by what it watches, so the next configuration takes over those it has too.
          events: (resources) =>
            merge(
              ...resources.map((resource) =>
                informerEvents({
                  resources: [resource],
                  ignoreFields: config.ignoreFields,
                  start,
                  restarting: (name, reason, delayMs) => restarting(name)(reason, delayMs),
                }).pipe(kept({ key: `resource ${watchKey(resource, config.ignoreFields)}`, kept: watches, connector: replayingEvents, graceMs: KEEP_WATCHES_MS, released })),
              ),
            ),
        }),
    };
  };

  // Built before the observer reads its state; nothing of it runs before it is started.
  const pipeline = buildPipeline({ candidates, load, parts });
  const observer = await startObserver({
    health: { host: options.bindAddress, port: options.healthPort },
    metrics: { host: options.bindAddress, port: options.metricsPort },
    log: options.log ?? { level: 'info', format: 'json', write: output.out },
    ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
    ...(options.stallAfterMs !== undefined ? { stallAfterMs: options.stallAfterMs } : {}),
    config: () => pipeline.current().config,
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
    endpoints: () => pipeline.current().endpoints,
    endpointDetails: () => pipeline.current().fleet?.statuses?.() ?? new Map(),
  });
  const log = observer.logger;
  for (const note of options.notes ?? []) log.info(note);
  const kubeLog = log.child({ stage: 'kubernetes' });

  const lock = options.lease ? new LeaseLock(kubeConnection, { namespace, name: options.lease.name, identity: options.identity, leaseDurationMs: options.lease.durationMs }) : undefined;
  const lease = options.lease;
  const leadership$ =
    lock && lease
      ? timer(0, lease.retryMs).pipe(
          leadership({
            attempt: () => defer(() => lock.tryAcquireOrRenew()),
            renewDeadlineMs: lease.renewDeadlineMs,
            onError: (error) => kubeLog.warn(`lease ${namespace}/${lease.name}: ${error}`),
          }),
          tap((leader) => {
            observer.leaderChanged(leader);
            leading.next(leader);
          }),
          // Leadership no longer followed is leadership given up: never two replicas deploying.
          finalize(() => leading.next(false)),
        )
      : EMPTY;

  const recorder = new EventRecorder(kubeConnection, {
    controller: 'haproxy-template-ic',
    instance: options.identity,
    ...(options.eventSeries ? { series: options.eventSeries } : {}),
    active: () => leading.value,
    trailing: (write) => {
      if ('error' in write) kubeLog.warn(`event ${write.event.reason} on ${write.event.regarding.kind} ${write.event.regarding.name}: repeats not written: ${write.error}`);
    },
  });
  const configMapSubject: EventSubject = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: options.configMap };
  const configSources = (candidate: ControllerCandidate | undefined): readonly EventSubject[] => [
    configMapSubject,
    ...(candidate?.sources ?? []).map((source) => ({ apiVersion: 'v1', kind: source.kind, namespace, name: source.name })),
  ];

  // Events: only the leader writes them, a few at a time, and a failed write is logged, never fatal.
  const eventWrites = pipeline.outcomes.pipe(
    withLatestFrom(leading, pipeline.state),
    filter(([, leader]) => leader),
    mergeMap(([outcome, , state]) => from(outcomeEvents(outcome, { configSources: configSources(state.candidate), resources: state.config?.watchedResources ?? [] }))),
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
  const publishedService = publish
    ? watchedObjects(
        start,
        { apiVersion: 'v1', kind: 'Service', resource: 'services', namespace: publish.namespace, fieldSelector: `metadata.name=${publish.name}` },
        restarting('publish-service'),
      ).pipe(
        map((services) => services.get(`${publish.namespace}/${publish.name}`)),
        shareReplay({ bufferSize: 1, refCount: true }),
      )
    : of(undefined);
  const statusWrites = publish ? ingressStatusWrites({ kubeConnection, pipeline, publishedService, publish, leading, log: kubeLog }) : EMPTY;

  const subscription = pipeline.start(observer, {
    leadership: leadership$,
    Events: eventWrites,
    'Ingress status': statusWrites,
    'Gateway API status': gatewayStatusWrites({ kubeConnection, pipeline, publishedService, leading, log: kubeLog, now: () => (options.clock ?? systemClock).now() }),
  });

  // Every replica judges admissions, leader or not, over the configuration in force and the live stores.
  const webhook =
    options.webhook &&
    startWebhook({
      settings: options.webhook,
      namespace,
      bindAddress: options.bindAddress,
      kubeConnection,
      start,
      restarting,
      state: () => {
        const { config, stores } = pipeline.current();
        return config && stores ? { config, stores } : undefined;
      },
      observer,
    });

  if (!options.lease) observer.leaderChanged(true);
  log.info(
    `watching ConfigMap ${namespace}/${options.configMap} and Secret ${namespace}/${options.credentialsSecret}; ` +
      `health on ${options.bindAddress}:${observer.healthPort}, metrics on ${options.bindAddress}:${observer.metricsPort}`,
  );

  return {
    outcomes: pipeline.outcomes,
    leading: leading.asObservable(),
    restarts,
    observer,
    state: pipeline.state,
    webhookPort: webhook?.listening,
    stop: async () => {
      observer.beginShutdown();
      subscription.unsubscribe();
      released.next();
      await keptFleet?.fleet.stop();
      await webhook?.stop();
      leading.next(false);
      recorder.close();
      await lock?.release().catch((error: unknown) => kubeLog.warn(`lease not released: ${errorMessage(error)}`));
      await observer.stop();
    },
  };
}
