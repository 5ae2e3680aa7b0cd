/**
 * An emulated HAProxy Data Plane API v3 instance for tests, following the
 * real dataplaneapi and client-native source as docs/dataplane-api-contract.md
 * records it (§ numbers below refer to it; each module names the real files
 * it follows): a node:http server on 127.0.0.1 in front of a REAL HAProxy
 * (2.6 to 3.4) in master-worker mode, in a temporary base directory of its
 * own. It stands for the release paired with that HAProxy (3.2 with 3.2, the
 * chart's) unless `release` says otherwise (release.ts).
 *
 * Last compared with the real dataplaneapi v3.2.15 (HAProxy 3.2.26) and
 * v3.4.2 (HAProxy 3.4.7) on 2026-11-28, by running the same contract
 * against both (`npm run spec:real-dataplaneapi`, §11 lists what differed
 * and was fixed here).
 *
 *   const emulator = await startEmulator();
 *   // the controller's dataplane.baseDir / templateValues: emulator.baseDir,
 *   // its `stats socket` line: emulator.statsSocket (level admin)
 *   ... talk to emulator.url ('http://127.0.0.1:PORT/v3') with
 *       emulator.credentials (Basic auth) ...
 *   await emulator.stop();
 *
 * The base directory holds haproxy.cfg (+ .lkg), maps/, ssl/, general/
 * (DPAPI's maps_dir, ssl_certs_dir, general_storage_dir), master.sock,
 * stats.sock, haproxy.pid and haproxy.log. A configuration posted to it
 * must keep `stats socket <baseDir>/stats.sock level admin` (the path is
 * `emulator.statsSocket`; `pod.statsSocket` in pod mode, below): the
 * runtime endpoints use that socket, as DPAPI
 * uses the runtime API its configuration declares. Candidates are validated
 * in another temporary directory (DPAPI's transaction_dir), so relative
 * paths resolve there unless the configuration says `default-path origin
 * <baseDir>`, as the controller's rendered configurations do.
 *
 * Until a configuration is posted, HAProxy runs a bootstrap configuration
 * of the emulator's: the stats socket and one listener on
 * `podAddress`:`bootstrapPort` answering 503 to everything (no `/ready`).
 *
 * Pod isolation (`pod` option, see pod.ts) is a stand-in of the test
 * environment, not a Data Plane API feature. The controller renders one
 * configuration for every pod of a fleet, for the pod's layout:
 *
 *   const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };
 *   const a = await startEmulator({ pod: { ...pod, address: '127.0.0.2' } });
 *   const b = await startEmulator({ pod: { ...pod, address: '127.0.0.3' } });
 *   // both take `default-path origin /etc/haproxy`, `stats socket
 *   // /var/run/haproxy/admin.sock ...`, `bind *:18080`; a serves on
 *   // 127.0.0.2:18080, b on 127.0.0.3:18080
 *
 * Each instance stands for its own pod: HAProxy gets every configuration
 * text (raw POST, only_validate) with `pod.baseDir` as a path prefix turned
 * into `baseDir`, `pod.statsSocket` into `statsSocket`, and wildcard binds
 * (`bind *:N`, `:N`, `0.0.0.0:N`, `[::]:N`, `:::N`) into `bind
 * <pod.address>:N`, so instances share ports side by side. The API keeps
 * the text as posted (written back, §3a): raw GET, raw POST answers and
 * Configuration-Checksum show the client its own configuration, as a real pod does; storage and
 * runtime map `file` fields name files by the pod's paths too. Only the
 * configuration is rewritten, never the content of stored files (a crt-list
 * naming certificates by absolute pod paths would not resolve: name them
 * relative to `default-path`).
 *
 * As the real API does, and the controller must cope with: the raw
 * configuration is stored as config-parser writes it back (§3a,
 * config-writer.ts); runtime map names, entry ids and certificate names are
 * refused by the path pattern of 3.0.19+/3.2.11+/3.3.3+ (§6a); a stored
 * certificate is described by JSON metadata, and a certificate written with
 * skip_reload stays unknown to HAProxy until a reload or a runtime update
 * (§7a, certificate-info.ts, runtime-certificates.ts); /health is `unknown`
 * without `statusCommand` (§1).
 *
 * Known differences from the real DPAPI (besides the reload timer, see
 * reload-agent.ts): only the raw, reload, runtime (servers, maps,
 * certificates: list, show, replace) and storage (maps, general,
 * certificates) endpoints exist, no structured configuration or transactions
 * (§4, §5), no runtime certificate creation or deletion; the write-back
 * ranks the keywords of global, defaults, frontend, backend and listen it
 * lists (others keep their posted order at the end of their section) and
 * keeps each line's text as posted where config-parser re-serialises
 * parameters (config-writer.ts); a 3.4 instance caps request bodies at the
 * emulator's 64 MiB, not DPAPI 3.4's 1 GiB. Behind HAProxy 2.6 the real
 * DPAPI reloads with its reload_cmd and cannot tell whether HAProxy loaded
 * the files; the emulator reloads as it does from HAProxy 2.7 on, through
 * the master, and reports the outcome (docs/dataplane-api-contract.md §11).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCapabilities } from '../../../lib/haproxy/capabilities.ts';
import { haproxyBinary } from '../../../lib/haproxy/check.ts';
import type { ShowProc } from '../../../lib/haproxy/show-proc.ts';
import { reservePort } from '../ports.ts';
import type { Credentials } from './auth.ts';
import { ConfigStore } from './config-store.ts';
import { registerConfigurationRoutes } from './configuration-api.ts';
import type { EmulatorContext, EmulatorDirs } from './context.ts';
import { Faults, RequestLog } from './faults.ts';
import { HAProxyProcess } from './haproxy-process.ts';
import { checkPodLayout, IDENTITY, PodMapping } from './pod.ts';
import type { PodLayout } from './pod.ts';
import { pairedRelease, releaseFeatures, type ReleaseFeatures } from './release.ts';
import type { Release } from './release.ts';
import { ReloadAgent } from './reload-agent.ts';
import { Router } from './router.ts';
import { registerRuntimeCertificateRoutes } from './runtime-certificates.ts';
import { registerRuntimeRoutes } from './runtime-api.ts';
import { RuntimeSocket } from './runtime-socket.ts';
import { ApiServer } from './server.ts';
import type { Exchange } from './server.ts';
import { registerStorageRoutes } from './storage-api.ts';

export type { Credentials } from './auth.ts';
export type { Faults, RecordedRequest, RequestFilter, RequestLog } from './faults.ts';
export type { ShowProc } from '../../../lib/haproxy/show-proc.ts';
export type { PodLayout } from './pod.ts';
export type { Release } from './release.ts';
export type { Exchange } from './server.ts';

export interface EmulatorOptions {
  /** The one Basic-auth user (§1). Default admin / adminpwd. */
  readonly credentials?: Credentials;
  /**
   * Delay between the first write asking for a reload and the reload (§2).
   * Default 100 ms: DPAPI's default (5 s) would make every test wait.
   */
  readonly reloadDelayMs?: number;
  /** The haproxy binary. Default haproxyBinary() (HAPROXY_BIN, else `haproxy`). */
  readonly binary?: string;
  /** Longest wait for HAProxy to start, reload or stop. Default 10 s. */
  readonly timeoutMs?: number;
  /**
   * Test-environment stand-in for pod isolation, not a DPAPI feature (see
   * the module comment and pod.ts): the instance takes configurations
   * written for this pod layout, serves their wildcard binds on `address`,
   * and shows them back as posted.
   */
  readonly pod?: { readonly baseDir: string; readonly statsSocket: string; readonly address: string; readonly hostname?: string };
  /**
   * Where the API listens. Default 127.0.0.1 on a free port; a pod's
   * address and the configured `dataplane.port` let pod discovery reach it
   * as it would reach a pod.
   */
  readonly listen?: { readonly host: string; readonly port: number };
  /**
   * Called with every answered request (a hung one never is), with the
   * answer and how long the instance took: what a benchmark needs to stand
   * in for this instance without its work.
   */
  readonly onExchange?: (exchange: Exchange) => void;
  /**
   * The release whose behaviour differences the instance shows (release.ts):
   * path-parameter patterns (3.2 and 3.3: 422 code 605, 3.4: 400, 3.1:
   * none), runtime certificate endpoints (3.2 on), the chi wire (3.4).
   * Default: the release paired with the HAProxy it fronts (pairedRelease in
   * release.ts: 3.2 on HAProxy 3.2, the chart's).
   */
  readonly release?: Release;
  /**
   * DPAPI has a status command (`status_cmd`): /health answers up or down.
   * Default false, as in the chart: /health answers `unknown`.
   */
  readonly statusCommand?: boolean;
}

export interface Emulator {
  /** Base URL of the API: 'http://127.0.0.1:PORT/v3'. */
  readonly url: string;
  /** The release the instance stands for, and what it does differently (release.ts). */
  readonly release: ReleaseFeatures;
  readonly port: number;
  readonly credentials: Credentials;
  /** `Basic <base64>` for the credentials, ready for an Authorization header. */
  readonly authorization: string;
  /** Where haproxy.cfg, maps/, ssl/, general/ and the sockets are: the controller's dataplane.baseDir. */
  readonly baseDir: string;
  readonly configFile: string;
  readonly mapsDir: string;
  readonly sslDir: string;
  readonly generalDir: string;
  /** `<baseDir>/stats.sock`: every posted configuration must declare it at level admin. */
  readonly statsSocket: string;
  /** `<baseDir>/master.sock`: the master CLI (`show proc`, `reload`). */
  readonly masterSocket: string;
  /** The bootstrap configuration's listener (answers 503), on `podAddress`. */
  readonly bootstrapPort: number;
  /**
   * Where this instance's listeners are reached: `pod.address` in pod mode
   * (wildcard binds are narrowed to it), else 127.0.0.1.
   */
  readonly podAddress: string;
  /** The pod layout this instance stands for, when started with one. */
  readonly pod: PodLayout | undefined;
  readonly reloadDelayMs: number;
  /** The last-known-good copy of the configuration, `<configFile>.lkg` (DPAPI without backups_dir). */
  readonly lkgFile: string;
  /** Every HTTP request received (method, path, query), for call counting. */
  readonly requests: RequestLog;
  /** Injected failures: failNext, delayResponses, hang, reset. */
  readonly faults: Faults;
  /** `show proc` on the master CLI: reload and failed-reload counters, worker PIDs. */
  processInfo(): Promise<ShowProc>;
  /** Another writer: version + 1 in the file header and for the API, configuration unchanged. Returns the new version. */
  bumpVersion(): Promise<number>;
  /**
   * The instance restarted from scratch (a new pod): HAProxy stopped and
   * started on the bootstrap configuration, storage directories emptied,
   * version 1, reload history and Reload-ID counter reset. URL, base
   * directory and sockets stay the same.
   */
  restartEmpty(): Promise<void>;
  /** Stops HAProxy (no process left), the HTTP server, and removes the temporary directories. */
  stop(): Promise<void>;
}

export interface BootstrapOptions {
  /** Default `<baseDir>/stats.sock`. */
  readonly statsSocket?: string;
  /** The listener's address. Default 127.0.0.1; `*` in pod mode, where it becomes the pod's address. */
  readonly bindAddress?: string;
}

/** The bootstrap configuration (without DPAPI's header), like the chart's: no `/ready`, 503 for everything. */
export function bootstrapConfig(baseDir: string, port: number, options: BootstrapOptions = {}): string {
  return `global
  default-path origin ${baseDir}
  stats socket ${options.statsSocket ?? join(baseDir, 'stats.sock')} mode 600 level admin expose-fd listeners
  stats timeout 30s

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s

frontend bootstrap
  bind ${options.bindAddress ?? '127.0.0.1'}:${port}
  http-request return status 503 content-type text/plain string "no configuration deployed yet"
`;
}

const DEFAULT_CREDENTIALS: Credentials = { user: 'admin', password: 'adminpwd' };

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const credentials = options.credentials ?? DEFAULT_CREDENTIALS;
  const reloadDelayMs = options.reloadDelayMs ?? 100;
  const binary = options.binary ?? haproxyBinary();
  const timeoutMs = options.timeoutMs ?? 10_000;
  // Checked before anything is created: nothing to clean up when the options are wrong.
  if (options.pod !== undefined) checkPodLayout(options.pod);
  const capabilities = await readCapabilities(binary);
  const podAddress = options.pod?.address ?? '127.0.0.1';
  const bootstrapPort = await reservePort(podAddress);

  const base = await mkdtemp(join(tmpdir(), 'dpapi-emu-'));
  const transactions = await mkdtemp(join(tmpdir(), 'dpapi-emu-tx-'));
  const dirs: EmulatorDirs = {
    base,
    maps: join(base, 'maps'),
    ssl: join(base, 'ssl'),
    general: join(base, 'general'),
    transactions,
  };
  const configFile = join(base, 'haproxy.cfg');
  const statsSocket = join(base, 'stats.sock');
  const masterSocket = join(base, 'master.sock');

  const pod = options.pod === undefined ? undefined : new PodMapping(options.pod, { baseDir: base, statsSocket });
  const store = new ConfigStore({
    configFile,
    transactionDir: transactions,
    binary,
    ...(pod === undefined ? {} : { pod }),
  });
  const haproxy = new HAProxyProcess({
    binary,
    capabilities,
    baseDir: base,
    configFile,
    masterSocket,
    pidFile: join(base, 'haproxy.pid'),
    logFile: join(base, 'haproxy.log'),
    timeoutMs,
    ...(options.pod?.hostname === undefined ? {} : { localPeer: options.pod.hostname }),
  });
  const agent = new ReloadAgent({ delayMs: reloadDelayMs, files: store, execute: () => haproxy.reload() });
  const context: EmulatorContext = {
    dirs,
    store,
    agent,
    runtime: new RuntimeSocket(statsSocket),
    haproxy,
    paths: pod ?? IDENTITY,
    release: releaseFeatures(options.release ?? pairedRelease(capabilities.version)),
    statusCommand: options.statusCommand ?? false,
  };

  const requests = new RequestLog();
  // Called only once the server below exists (hang(false) after the start).
  const faults = new Faults(() => server.releaseHung());
  const router = new Router();
  registerConfigurationRoutes(router, context, new Date());
  registerRuntimeRoutes(router, context);
  registerRuntimeCertificateRoutes(router, context);
  registerStorageRoutes(router, context);
  const server = new ApiServer({
    router,
    users: [credentials],
    release: context.release,
    faults,
    requests,
    version: () => store.version,
    ...(options.onExchange === undefined ? {} : { onExchange: options.onExchange }),
  });

  // In pod mode the bootstrap file is written for the pod's layout, like the chart's, and mapped as any other.
  const bootstrap =
    options.pod === undefined ? bootstrapConfig(base, bootstrapPort) : bootstrapConfig(options.pod.baseDir, bootstrapPort, { statsSocket: options.pod.statsSocket, bindAddress: '*' });
  /** Empty storage, the bootstrap file as version 1, HAProxy started on it, a fresh reload agent. */
  const startFresh = async (): Promise<void> => {
    for (const dir of [dirs.maps, dirs.ssl, dirs.general]) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
    }
    await store.reset(bootstrap);
    await haproxy.start();
    await agent.reset();
  };

  let port: number;
  try {
    await startFresh();
    port = await server.listen(options.listen?.host, options.listen?.port);
  } catch (error) {
    await haproxy.stop().catch(() => undefined);
    await server.close().catch(() => undefined);
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
    await rm(transactions, { recursive: true, force: true, maxRetries: 5 });
    throw error;
  }

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${options.listen?.host ?? '127.0.0.1'}:${port}/v3`,
    release: context.release,
    port,
    credentials,
    authorization: `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`,
    baseDir: base,
    configFile,
    mapsDir: dirs.maps,
    sslDir: dirs.ssl,
    generalDir: dirs.general,
    statsSocket,
    masterSocket,
    bootstrapPort,
    podAddress,
    pod: options.pod,
    reloadDelayMs,
    lkgFile: agent.lkgFile,
    requests,
    faults,
    processInfo: () => haproxy.showProc(),
    bumpVersion: () => store.bump(),
    async restartEmpty() {
      agent.close();
      await agent.idle();
      await haproxy.stop();
      await startFresh();
    },
    stop() {
      stopped ??= (async () => {
        agent.close();
        await agent.idle().catch(() => undefined);
        faults.reset();
        await haproxy.stop();
        await server.close();
        await rm(base, { recursive: true, force: true, maxRetries: 5 });
        await rm(transactions, { recursive: true, force: true, maxRetries: 5 });
      })();
      return stopped;
    },
  };
}
