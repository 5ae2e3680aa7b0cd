import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { TracerProvider } from '@opentelemetry/api';
import {
  catchError,
  concat,
  concatWith,
  debounceTime,
  defer,
  EMPTY,
  merge,
  NEVER,
  of,
  retry,
  Subject,
  timer,
  type Observable,
  type Subscription,
} from 'rxjs';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { RetrySettings } from '../lib/config/pipeline-settings.ts';
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { CommandOutput } from '../lib/cli/output.ts';
import { errorMessage } from '../lib/error-message.ts';
import { dataplaneFleet, type DataplaneFleetOptions } from '../lib/deploy/dataplane-fleet.ts';
import type { Fleet } from '../lib/deploy/fleet.ts';
import { localFleet } from '../lib/deploy/local-fleet.ts';
import type { LocalTarget } from '../lib/deploy/local-target.ts';
import type { SupervisedMaster } from '../lib/haproxy/master-supervisor.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import { ManifestWatchdog } from '../lib/kube/manifest-watchdog.ts';
import { ManifestFolder } from '../lib/kube/manifests.ts';
import { watchedType } from '../lib/kube/select.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import type { LogSettings } from '../lib/telemetry/logger.ts';
import { startObserver, type Observer } from '../lib/telemetry/observer.ts';
import { controller } from './controller.ts';
import { manifestSource } from './manifest-source.ts';
import { reconcile } from './reconcile.ts';
import { serialLatest } from './operators/serial-latest.ts';
import { HAPROXY_RUNNING, superviseLocalHaproxy } from './supervise-master.ts';
import { watchPath } from './watch-path.ts';

export interface LocalModeOptions {
  readonly manifests: string;
  /** The controller configuration file, watched; the shipped one when absent (then not watched). */
  readonly config: { readonly path: string; readonly watch: boolean };
  readonly workDir: string;
  readonly bindAddress: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly statusPort: number;
  /** Controller /healthz, /readyz and /debug/* (0: any free port, see LocalMode.observer). */
  readonly healthPort: number;
  /** Controller /metrics (0: any free port). */
  readonly metricsPort: number;
  /** How long file changes settle before the folder is re-read. */
  readonly settleMs?: number;
  /** The safety net: how often the manifest folder is read whatever its watch says; 10 s when absent. */
  readonly rereadMs?: number;
  /** Deploy to these Data Plane APIs instead of a HAProxy on this machine. */
  readonly dataplane?: DataplaneFleetOptions;
  /** How failed deployments are retried; the pipeline's default (5 attempts, from 1 s apart) when absent. */
  readonly retry?: RetrySettings;
  /** Work without progress for this long fails /healthz; 5 minutes when absent. */
  readonly stallAfterMs?: number;
  /** Where logs go; JSON lines at level info to `output` when absent. */
  readonly log?: LogSettings;
  /** Set up by the entry point when traces are wanted; nothing is traced without it. */
  readonly tracerProvider?: TracerProvider;
  readonly output: CommandOutput;
}

export interface LocalMode {
  /** Resolves once HAProxy is stopped and every watch closed. */
  stop(options?: { readonly keepHaproxy?: boolean }): Promise<void>;
  /** The HAProxy on this machine; absent when deploying to Data Plane APIs. */
  readonly target: LocalTarget | undefined;
  readonly fleet: Fleet;
  /** Logs, metrics, traces, health and debug views: their ports and the logger. */
  readonly observer: Observer;
  /** Every outcome, for callers that wait on them (tests, the demo). */
  readonly outcomes: Observable<Outcome>;
}

/**
 * Local mode: the whole pipeline, with a folder of manifests as the resource
 * source and, as the fleet, a HAProxy on this machine (local settings: work
 * directory, ports, the runtime socket are laid over the configuration) or
 * HAProxy hosts behind Data Plane APIs. The controller configuration is the
 * shipped one or a watched file.
 */
export async function startLocalMode(options: LocalModeOptions): Promise<LocalMode> {
  const { output } = options;
  const workDir = resolve(options.workDir);
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const initialText = await readFile(options.config.path, 'utf8');
  const initial = loadControllerConfig(initialText);
  const dirs = initial.ok
    ? initial.config.dataplane
    : { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };

  const dataplane = options.dataplane;
  // What the debug views read once the fleet exists and a configuration is in force.
  let fleet: Fleet | undefined;
  let dataplaneStatuses: () => ReadonlyMap<string, unknown> = () => new Map();
  let current: ControllerConfig | undefined;
  const observer = await startObserver({
    health: { host: '127.0.0.1', port: options.healthPort },
    metrics: { host: '127.0.0.1', port: options.metricsPort },
    log: options.log ?? { level: 'info', format: 'json', write: output.out },
    ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
    config: () => current,
    settings: () => ({
      mode: 'local',
      manifests: resolve(options.manifests),
      config: options.config.path,
      workDir,
      bindAddress: options.bindAddress,
      ports: { http: options.httpPort, https: options.httpsPort, status: options.statusPort },
      ...(dataplane ? { dataplane: { urls: dataplane.urls, username: dataplane.username, password: dataplane.password, tls: dataplane.tls } } : {}),
    }),
    endpoints: () => fleet?.endpoints ?? [],
    ...(dataplane ? { endpointDetails: () => dataplaneStatuses() } : {}),
    ...(options.stallAfterMs !== undefined ? { stallAfterMs: options.stallAfterMs } : {}),
    secrets: dataplane?.password !== undefined ? [dataplane.password, `${dataplane.username ?? ''}:${dataplane.password}`] : [],
  });
  const log = observer.logger;
  let target: LocalTarget | undefined;
  let master: SupervisedMaster | undefined;
  let attached = false;
  try {
    if (dataplane) {
      const remote = dataplaneFleet(dataplane);
      dataplaneStatuses = () => remote.statuses();
      fleet = remote;
    } else {
      const haproxyLog = log.child({ stage: 'haproxy' });
      const local = await localFleet({
        workDir,
        dirs,
        bindAddress: options.bindAddress,
        httpPort: options.httpPort,
        httpsPort: options.httpsPort,
        statusPort: options.statusPort,
        log: (line) => haproxyLog.info(line),
      });
      if (local.attached) log.info(`attached to the HAProxy already running in ${workDir}`);
      target = local.target;
      master = local.master;
      attached = local.attached;
      fleet = local;
    }
  } catch (error) {
    await observer.stop();
    throw error;
  }
  const activeFleet: Fleet = fleet;

  const load = (text: string): ConfigLoad<ControllerConfig> => {
    // The text read at start was loaded already (for the fleet's directories): not parsed twice.
    const loaded = text === initialText ? initial : loadControllerConfig(text);
    return loaded.ok ? { ok: true, config: activeFleet.prepare(loaded.config) } : { ok: false, errors: loaded.errors.map((e) => `${options.config.path}: ${e}`) };
  };

  const settle = options.settleMs ?? 100;
  // A watch that fails is reported and set up again, never an error that stops the pipeline.
  // Each time a watch is (re)established it ticks once, so what changed while nothing watched is read too.
  const keepWatching = (watch: () => Observable<unknown>, what: string, report: (error: string) => void) =>
    defer(() => merge(watch(), of(undefined))).pipe(
      retry({
        delay: (error: unknown) => {
          report(`watching ${what} failed: ${errorMessage(error)}; trying again in 1 s`);
          return timer(1_000);
        },
      }),
      debounceTime(settle),
    );
  const configLog = log.child({ stage: 'config' });
  const readConfig = () =>
    defer(() => readFile(options.config.path, 'utf8')).pipe(
      catchError((error: unknown) => {
        configLog.error(`${options.config.path}: ${errorMessage(error)} (the running configuration keeps serving)`);
        return EMPTY;
      }),
    );
  const configTexts: Observable<string> = options.config.watch
    ? keepWatching(() => watchPath(options.config.path), options.config.path, (error) => configLog.error(error)).pipe(serialLatest(readConfig))
    : of(initialText).pipe(concatWith(NEVER));

  const manifestDir = resolve(options.manifests);
  const folder = new ManifestFolder(manifestDir);
  const rereadMs = options.rereadMs ?? 10_000;
  // Reads happen every rereadMs at the least: a running source far past that is stuck on its folder.
  const watchdog = new ManifestWatchdog({ folder: manifestDir, staleAfterMs: Math.max(60_000, 3 * rereadMs) });
  observer.addLivenessCheck(() => watchdog.problem());
  const resourcesLog = log.child({ stage: 'resources' });
  const pipeline = (config: ControllerConfig, report: (o: Outcome) => void) => {
    current = config;
    const renderer = createRenderer(config);
    const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
    return manifestSource({
      folder: manifestDir,
      resources: config.watchedResources,
      ignoreFields: config.ignoreFields,
      watch: () => watchPath(manifestDir),
      read: () => defer(() => folder.read()),
      settleMs: settle,
      rereadMs,
      retryMs: 1_000,
      graceMs: 1_000,
      report,
      watchdog: (event) => {
        watchdog.apply(event);
        if (event.type !== 'missed') return;
        observer.metrics.manifestWatchRestarted();
        resourcesLog.warn(`the watch of ${manifestDir} missed a change the periodic re-read found; watching it anew`);
      },
    }).pipe(
      reconcile({
        watched: config.watchedResources.map(watchedType),
        settings: options.retry ? { ...config.pipeline, retry: options.retry } : config.pipeline,
        endpoints: concat(of(activeFleet.endpoints), NEVER),
        render: (snapshot) => defer(() => of(renderer({ stores: snapshot.stores }))),
        validate: (rendered) => defer(() => validator.validate(rendered)),
        deploy: (request) => defer(() => activeFleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason)),
        report,
        // A HAProxy on this machine runs haproxy.cfg as rendered; the Data Plane API rewrites it.
        exactConfigLines: !dataplane,
      }),
    );
  };

  // The only controller on its fleet: it always leads, nothing worth a log line.
  observer.metrics.leader(true);
  log.info(
    `${activeFleet.describe()}; controller health http://127.0.0.1:${observer.healthPort}/healthz, ` +
      `metrics http://127.0.0.1:${observer.metricsPort}/metrics; manifests ${resolve(options.manifests)}`,
  );

  const observed = new Subject<Outcome>();
  const subscription: Subscription = configTexts.pipe(controller({ load, pipeline })).subscribe({
    next: (outcome) => {
      observer.observe(outcome);
      observed.next(outcome);
      // A deployment to the HAProxy on this machine leaves it running (it starts one that is not).
      if (master && outcome.type === 'deployed') observer.setReadiness(HAPROXY_RUNNING, true);
    },
    error: (error: unknown) => observer.pipelineStopped(errorMessage(error)),
    complete: () => observer.pipelineStopped('the configuration source ended'),
  });
  const supervision = master ? superviseLocalHaproxy(master, observer, attached) : undefined;

  return {
    target,
    fleet: activeFleet,
    observer,
    outcomes: observed.asObservable(),
    stop: async ({ keepHaproxy = false } = {}) => {
      observer.beginShutdown();
      // Not started again while it stops, or after the controller let go of it.
      supervision?.unsubscribe();
      subscription.unsubscribe();
      if (master && keepHaproxy) {
        const pid = await master.pid();
        log.info(
          `leaving HAProxy${pid === undefined ? '' : ` master ${pid}`} running in ${workDir}: a controller started on the same --work-dir attaches to it`,
        );
      }
      await activeFleet.stop({ keepHaproxy });
      await observer.stop();
    },
  };
}
