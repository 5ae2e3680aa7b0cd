import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Server } from 'node:http';
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
import type { ConfigLoad, ControllerConfig } from '../lib/config/types.ts';
import type { CommandOutput } from '../lib/cli/output.ts';
import { errorMessage } from '../lib/error-message.ts';
import { outcomeLines } from '../lib/cli/outcome-lines.ts';
import { dataplaneFleet, type DataplaneFleetOptions } from '../lib/dataplane/fleet.ts';
import type { Fleet } from '../lib/deploy/fleet.ts';
import { localFleet } from '../lib/deploy/local-fleet.ts';
import type { LocalTarget } from '../lib/haproxy/local-target.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import { readManifestFiles } from '../lib/kube/manifests.ts';
import { watchedType } from '../lib/kube/select.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { createMetrics } from '../lib/telemetry/metrics.ts';
import { serveHealth, serveMetrics } from '../lib/telemetry/http-endpoints.ts';
import { controller } from './controller.ts';
import { manifestEvents } from './manifest-events.ts';
import { reconcile } from './reconcile.ts';
import { serialLatest } from './operators/serial-latest.ts';
import { watchDirectory, watchFile } from './watch-path.ts';

export interface LocalModeOptions {
  readonly manifests: string;
  /** The controller configuration file, watched; the shipped one when absent (then not watched). */
  readonly config: { readonly path: string; readonly watch: boolean };
  readonly workDir: string;
  readonly bindAddress: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly statusPort: number;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** How long file changes settle before the folder is re-read. */
  readonly settleMs?: number;
  /** Deploy to these Data Plane APIs instead of a HAProxy on this machine. */
  readonly dataplane?: DataplaneFleetOptions;
  readonly output: CommandOutput;
}

export interface LocalMode {
  /** Resolves once HAProxy is stopped and every watch closed. */
  stop(options?: { readonly keepHaproxy?: boolean }): Promise<void>;
  /** The HAProxy on this machine; absent when deploying to Data Plane APIs. */
  readonly target: LocalTarget | undefined;
  readonly fleet: Fleet;
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
  const initial = loadControllerConfig(await readFile(options.config.path, 'utf8'));
  const dirs = initial.ok
    ? initial.config.dataplane
    : { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };
  let target: LocalTarget | undefined;
  let fleet: Fleet;
  if (options.dataplane) {
    fleet = dataplaneFleet(options.dataplane);
  } else {
    const local = await localFleet({
      workDir,
      dirs,
      bindAddress: options.bindAddress,
      httpPort: options.httpPort,
      httpsPort: options.httpsPort,
      statusPort: options.statusPort,
      log: (line) => output.out(`${line}\n`),
    });
    if (local.attached) output.out(`attached to the HAProxy already running in ${workDir}\n`);
    target = local.target;
    fleet = local;
  }

  const load = (text: string): ConfigLoad<ControllerConfig> => {
    const loaded = loadControllerConfig(text);
    return loaded.ok ? { ok: true, config: fleet.prepare(loaded.config) } : { ok: false, errors: loaded.errors.map((e) => `${options.config.path}: ${e}`) };
  };

  const settle = options.settleMs ?? 100;
  // A watch fails when what it watches disappears (a folder removed and made again by a
  // checkout): reported and set up again, never an error that stops the pipeline. Each time a
  // watch is (re)established it ticks once, so what changed while nothing watched is read too.
  const keepWatching = (watch: () => Observable<void>, what: string, report: (error: string) => void) =>
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
        output.err(`error: ${options.config.path}: ${errorMessage(error)} (the running configuration keeps serving)\n`);
        return EMPTY;
      }),
    );
  const configTexts: Observable<string> = options.config.watch
    ? keepWatching(() => watchFile(options.config.path), options.config.path, (error) => output.err(`error: ${error}\n`)).pipe(
        serialLatest(readConfig),
      )
    : readConfig().pipe(concatWith(NEVER));

  const pipeline = (config: ControllerConfig, report: (o: Outcome) => void) => {
    const renderer = createRenderer(config);
    const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
    const ticks = keepWatching(() => watchDirectory(options.manifests), options.manifests, (error) =>
      report({ type: 'resourceError', error }),
    );
    return ticks.pipe(
      manifestEvents({
        resources: config.watchedResources,
        ignoreFields: config.ignoreFields,
        read: () => defer(() => readManifestFiles(options.manifests)),
        report,
      }),
      reconcile({
        watched: config.watchedResources.map(watchedType),
        settings: config.pipeline,
        endpoints: concat(of(fleet.endpoints), NEVER),
        render: (snapshot) => defer(() => of(renderer({ stores: snapshot.stores }))),
        validate: (rendered) => defer(() => validator.validate(rendered)),
        deploy: (request) => defer(() => fleet.deploy(request.endpoint, request.config.files, request.config.hash, request.reason)),
        report,
      }),
    );
  };

  const metrics = createMetrics();
  let deployedOnce = false;
  const outcomes = configTexts.pipe(controller({ load, pipeline }));
  const servers: Server[] = [
    await serveHealth(options.healthPort, '127.0.0.1', { ready: () => deployedOnce }),
    await serveMetrics(options.metricsPort, '127.0.0.1', metrics.registry),
  ];
  output.out(
    `${fleet.describe()}; controller health http://127.0.0.1:${options.healthPort}/healthz, ` +
      `metrics http://127.0.0.1:${options.metricsPort}/metrics; manifests ${resolve(options.manifests)}\n`,
  );

  const observed = new Subject<Outcome>();
  const subscription: Subscription = outcomes.subscribe({
    next: (outcome) => {
      metrics.observe(outcome);
      if (outcome.type === 'deployed') deployedOnce = true;
      for (const line of outcomeLines(outcome)) output.out(`${line}\n`);
      observed.next(outcome);
    },
    error: (error: unknown) => output.err(`error: the pipeline stopped: ${String(error)}\n`),
  });

  return {
    target,
    fleet,
    outcomes: observed.asObservable(),
    stop: async ({ keepHaproxy = false } = {}) => {
      subscription.unsubscribe();
      await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
      await fleet.stop({ keepHaproxy });
    },
  };
}
