import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TracerProvider } from '@opentelemetry/api';
import { catchError, concat, concatWith, debounceTime, defer, EMPTY, filter, merge, NEVER, of, retry, tap, timer, type Observable } from 'rxjs';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { RetrySettings } from '../lib/config/pipeline-settings.ts';
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { CommandOutput } from '../lib/cli/output.ts';
import { errorMessage } from '../lib/error-message.ts';
import { dataplaneFleet, type DataplaneFleetOptions } from '../lib/deploy/dataplane-fleet.ts';
import type { Fleet } from '../lib/deploy/fleet.ts';
import { localFleet, type LocalFleet, type LocalFleetOptions } from '../lib/deploy/local-fleet.ts';
import type { LocalTarget } from '../lib/deploy/local-target.ts';
import type { FirstSeen } from '../lib/kube/first-seen.ts';
import { FirstSeenStore } from '../lib/kube/first-seen-store.ts';
import { ManifestWatchdog } from '../lib/kube/manifest-watchdog.ts';
import { ManifestFolder } from '../lib/kube/manifests.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { Logger, LogSettings } from '../lib/telemetry/logger.ts';
import { startObserver, type Observer } from '../lib/telemetry/observer.ts';
import { manifestSource } from './manifest-source.ts';
import { serialLatest } from './operators/serial-latest.ts';
import { buildPipeline, type ModeParts, type PipelineFleet, type PipelineState } from './pipeline.ts';
import { HAPROXY_RUNNING, superviseLocalHaproxy } from './supervise-master.ts';
import { watchPath } from './watch-path.ts';

/** How long file changes settle before the manifest folder is read again, unless told otherwise. */
export const DEFAULT_SETTLE_MS = 100;

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
  /** What the pipeline holds: the configuration in force, its stores, its endpoints. */
  readonly state: Observable<PipelineState<string>>;
}

/**
 * Local mode: the whole pipeline, with a folder of manifests as the resource
 * source and, as the fleet, a HAProxy on this machine (local settings: work
 * directory, ports, the runtime socket are laid over the configuration) or
 * HAProxy hosts behind Data Plane APIs. The controller configuration is the
 * shipped one or a watched file.
 */
export async function startLocalMode(options: LocalModeOptions): Promise<LocalMode> {
  const { output, dataplane } = options;
  const workDir = resolve(options.workDir);
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const initialText = await readFile(options.config.path, 'utf8');
  const initial = loadControllerConfig(initialText);
  const dirs = initial.ok ? initial.config.dataplane : { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };

  const load = (text: string): ConfigLoad<ControllerConfig> => {
    // The text read at start was loaded already (for the fleet's directories): not parsed twice.
    const loaded = text === initialText ? initial : loadControllerConfig(text);
    return loaded.ok ? { ok: true, config: fleet.prepare(loaded.config) } : { ok: false, errors: loaded.errors.map((e) => `${options.config.path}: ${e}`) };
  };

  const settle = options.settleMs ?? DEFAULT_SETTLE_MS;
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
  const readConfig = () =>
    defer(() => readFile(options.config.path, 'utf8')).pipe(
      catchError((error: unknown) => {
        configLog.error(`${options.config.path}: ${errorMessage(error)} (the running configuration keeps serving)`);
        return EMPTY;
      }),
    );
  const candidates: Observable<string> = options.config.watch
    ? keepWatching(
        () => watchPath(options.config.path),
        options.config.path,
        (error) => configLog.error(error),
      ).pipe(serialLatest(readConfig))
    : of(initialText).pipe(concatWith(NEVER));

  const manifestDir = resolve(options.manifests);
  const folder = new ManifestFolder(manifestDir);
  const rereadMs = options.rereadMs ?? 10_000;
  // Reads happen every rereadMs at the least: a running source far past that is stuck on its folder.
  const watchdog = new ManifestWatchdog({ folder: manifestDir, staleAfterMs: Math.max(60_000, 3 * rereadMs) });
  // Kept in the work dir, so a controller started again orders hosts' claimants as this one did.
  const firstSeenStore = new FirstSeenStore(join(workDir, 'first-seen.json'));
  const firstSeen = await firstSeenStore.load();
  const rememberFirstSeen = (state: FirstSeen) => defer(() => firstSeenStore.store(state));
  const parts = (config: ControllerConfig): ModeParts => ({
    config,
    fleet,
    events: (report) =>
      manifestSource({
        folder: manifestDir,
        resources: config.watchedResources,
        ignoreFields: config.ignoreFields,
        watch: () => watchPath(manifestDir),
        read: (named) => defer(() => folder.read(named)),
        settleMs: settle,
        rereadMs,
        retryMs: 1_000,
        graceMs: 1_000,
        firstSeen: { state: firstSeen, remember: rememberFirstSeen },
        report,
        watchdog: (event) => {
          watchdog.apply(event);
          if (event.type === 'read') {
            const why = event.cause === 'reread' ? ' (periodic re-read)' : '';
            resourcesLog.debug(`read ${manifestDir}${why}: ${event.result.ok ? (event.result.changed ? 'changed' : 'as before') : event.result.error}`);
            return;
          }
          if (event.type !== 'missed') return;
          observer.metrics.manifestWatchRestarted();
          resourcesLog.warn(`the watch of ${manifestDir} missed a change the periodic re-read found; watching it anew`);
        },
      }),
    endpoints: concat(of(fleet.endpoints), NEVER),
    ...(options.retry ? { settings: { ...config.pipeline, retry: options.retry } } : {}),
    // A HAProxy on this machine runs haproxy.cfg as rendered; the Data Plane API rewrites it.
    exactConfigLines: !dataplane,
    // Its runtime applies every operation the planner plans (local-target.ts refuses none).
    ...(dataplane ? {} : { mayReload: () => false }),
  });

  // Built before the observer reads its state; nothing of it runs before it is started.
  const pipeline = buildPipeline({ candidates, load, parts });
  const observer = await startObserver({
    health: { host: '127.0.0.1', port: options.healthPort },
    metrics: { host: '127.0.0.1', port: options.metricsPort },
    log: options.log ?? { level: 'info', format: 'json', write: output.out },
    ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
    config: () => pipeline.current().config,
    settings: () => ({
      mode: 'local',
      manifests: manifestDir,
      config: options.config.path,
      workDir,
      bindAddress: options.bindAddress,
      ports: { http: options.httpPort, https: options.httpsPort, status: options.statusPort },
      ...(dataplane ? { dataplane: { urls: dataplane.urls, username: dataplane.username, password: dataplane.password, tls: dataplane.tls } } : {}),
    }),
    endpoints: () => pipeline.current().endpoints,
    endpointDetails: () => pipeline.current().fleet?.statuses?.() ?? new Map(),
    ...(options.stallAfterMs !== undefined ? { stallAfterMs: options.stallAfterMs } : {}),
    secrets: dataplane?.password !== undefined ? [dataplane.password, `${dataplane.username ?? ''}:${dataplane.password}`] : [],
  });
  const log = observer.logger;
  const configLog = log.child({ stage: 'config' });
  const resourcesLog = log.child({ stage: 'resources' });
  observer.addLivenessCheck(() => watchdog.problem());
  const made = await localModeFleet(options, workDir, dirs, log).catch(async (error: unknown) => {
    await observer.stop();
    throw error;
  });
  const { fleet, local } = made;
  if (local?.attached) log.info(`attached to the HAProxy already running in ${workDir}`);

  // The only controller on its fleet: it always leads, nothing worth a log line.
  observer.metrics.leader(true);
  log.info(`${fleet.describe()}; controller health http://127.0.0.1:${observer.healthPort}/healthz, metrics http://127.0.0.1:${observer.metricsPort}/metrics; manifests ${manifestDir}`);

  const subscription = pipeline.start(
    observer,
    local
      ? {
          // A deployment to the HAProxy on this machine leaves it running (it starts one that is not).
          readiness: pipeline.outcomes.pipe(
            filter((outcome) => outcome.type === 'deployed'),
            tap(() => observer.setReadiness(HAPROXY_RUNNING, true)),
          ),
          'HAProxy supervision': superviseLocalHaproxy(local.master, observer, local.attached),
        }
      : {},
  );

  return {
    target: local?.target,
    fleet,
    observer,
    outcomes: pipeline.outcomes,
    state: pipeline.state,
    stop: async ({ keepHaproxy = false } = {}) => {
      observer.beginShutdown();
      // Not started again while it stops, or after the controller let go of it.
      subscription.unsubscribe();
      if (local && keepHaproxy) {
        const pid = await local.master.pid();
        log.info(`leaving HAProxy${pid === undefined ? '' : ` master ${pid}`} running in ${workDir}: a controller started on the same --work-dir attaches to it`);
      }
      await fleet.stop({ keepHaproxy });
      await observer.stop();
    },
  };
}

/** The fleet local mode deploys to: Data Plane APIs, or a HAProxy on this machine (then also `local`). */
async function localModeFleet(
  options: LocalModeOptions,
  workDir: string,
  dirs: LocalFleetOptions['dirs'],
  log: Logger,
): Promise<{ readonly fleet: PipelineFleet; readonly local: LocalFleet | undefined }> {
  if (options.dataplane) {
    const deployLog = log.child({ stage: 'deploy' });
    return { fleet: dataplaneFleet({ ...options.dataplane, log: (message) => deployLog.warn(message) }), local: undefined };
  }
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
  return { fleet: local, local };
}
