/**
 * A REAL Data Plane API (dataplaneapi, built by .ci/build-dataplaneapi) in
 * front of a REAL HAProxy of the paired minor, on loopback, for the specs
 * that run the same cases against it and against the emulator
 * (spec/support/dataplane-emulator), as spec/support/dataplane-peer.ts lists
 * them.
 *
 *   const real = await startRealDataplane({ release: '3.4' });
 *   ... real.url, real.credentials, real.requests (every request counted) ...
 *   await real.stop();
 *
 * HAProxy runs in master-worker mode (`-W -db -S master.sock,level,admin`);
 * dataplaneapi reloads it through that master socket from HAProxy 2.7 on and
 * through its `reload_cmd` (SIGUSR2 to the master) before
 * (dataplaneapi `haproxy/reload_agent.go` canUseMasterSocketReload). Its
 * configuration file is written with the keys of
 * `configuration/configuration_storage.go` (v3.2 and v3.4 read the same
 * ones); dataplaneapi rewrites it on start, so it lives in a writable
 * temporary directory with everything else.
 *
 * With `pod`, both processes run in a private mount namespace (`unshare
 * -m`, so root) where the temporary directories are bind-mounted at the
 * pod's paths (`/etc/haproxy`, `/var/run/haproxy`): the controller's
 * configuration, written for a pod, runs unchanged, as in the chart. Its
 * wildcard binds listen on every local address, so one pod instance at a
 * time.
 *
 * Requests pass through a counting proxy on loopback (`requests`), so a
 * spec counts what a deployment cost exactly as it does on the emulator.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { haproxyBinary } from '../../lib/haproxy/check.ts';
import { sendSignal, waitGone } from '../../lib/haproxy/processes.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import { parseShowProc } from '../../lib/haproxy/show-proc.ts';
import type { ShowProc } from '../../lib/haproxy/show-proc.ts';
import { bootstrapConfig } from './dataplane-emulator/index.ts';
import type { Credentials, PodLayout } from './dataplane-emulator/index.ts';
import { RequestLog } from './dataplane-emulator/faults.ts';
import { releaseFeatures, type ReleaseFeatures } from './dataplane-emulator/release.ts';
import { listenAnywhere, reservePort } from './ports.ts';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Data Plane API minors .ci/dataplaneapi-versions pins. */
export type RealRelease = '3.2' | '3.4';

export interface RealDataplaneOptions {
  readonly release: RealRelease;
  /** The dataplaneapi binary. Default: .ci/build-dataplaneapi's for `release`. */
  readonly dataplaneapi?: string;
  /** The HAProxy binary. Default: the paired minor, from .ci/provision-haproxy. */
  readonly haproxy?: string;
  /** The pod layout to stand for (see the module comment): configurations name these paths. */
  readonly pod?: PodLayout;
  /**
   * Whether dataplaneapi's configuration names the master socket as its
   * `master_runtime` (as the chart's does). Default true. Without it
   * dataplaneapi reaches HAProxy's runtime through the configuration's first
   * stats socket and reloads with its reload_cmd whatever the HAProxy version.
   */
  readonly masterRuntime?: boolean;
  /** DPAPI's reload_delay, whole seconds (its unit). Default 1. */
  readonly reloadDelaySeconds?: number;
  /** Longest wait for a start or a stop. Default 30 s. */
  readonly timeoutMs?: number;
}

export interface RealDataplane {
  /** What runs: `dataplaneapi v3.4.2 <commit> + HAProxy 3.4.7-1`. */
  readonly name: string;
  /** Base URL of the API (through the counting proxy): 'http://127.0.0.1:PORT/v3'. */
  readonly url: string;
  readonly credentials: Credentials;
  readonly authorization: string;
  /** The directory the configuration's base paths point at, as this process sees it. */
  readonly baseDir: string;
  readonly configFile: string;
  readonly mapsDir: string;
  readonly sslDir: string;
  readonly generalDir: string;
  /** The stats socket (level admin), as this process reaches it. */
  readonly statsSocket: string;
  readonly masterSocket: string;
  /** The release, with what the emulator's release table records of it (dataplane-emulator/release.ts). */
  readonly release: ReleaseFeatures;
  /** The bootstrap configuration's listener (answers 503). */
  readonly bootstrapPort: number;
  /** `<backups_dir>/haproxy.cfg.lkg`: where dataplaneapi keeps the last-known-good copy (haproxy/reload_agent.go setLkgPath). */
  readonly lkgFile: string;
  /** dataplaneapi's reload_delay. */
  readonly reloadDelayMs: number;
  readonly podAddress: string;
  readonly pod: PodLayout | undefined;
  /** Every request the API received (method, path, query), counted at the proxy in front of it. */
  readonly requests: RequestLog;
  /** `show proc` on the master CLI: reload and failed-reload counters, worker PIDs. */
  processInfo(): Promise<ShowProc>;
  /** dataplaneapi's and HAProxy's output so far, for a failing test's message. */
  logs(): Promise<string>;
  /** Stops both processes (none left) and the proxy, and removes the temporary directories. */
  stop(): Promise<void>;
}

const DEFAULT_CREDENTIALS: Credentials = { user: 'admin', password: 'adminpwd' };

/** Runs a .ci script and returns the last line it printed (the binary's path); its refusal, quoted, otherwise. */
async function ciBinary(script: string, minor: string): Promise<string> {
  try {
    const { stdout } = await run('bash', [join(ROOT, '.ci', script), minor], { maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 });
    const path = stdout.trim().split('\n').at(-1) ?? '';
    if (path === '') throw new Error(`.ci/${script} ${minor} printed no path`);
    return path;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`.ci/${script} ${minor} failed, so the real Data Plane API cannot run:\n${stderr?.trim() || (error as Error).message}`, { cause: error });
  }
}

/** The dataplaneapi binary of `release`, built and cached by .ci/build-dataplaneapi. */
export function dataplaneapiBinary(release: RealRelease): Promise<string> {
  return ciBinary('build-dataplaneapi', release);
}

/**
 * HAProxy `minor` from .ci/provision-haproxy; without that script only 2.6
 * is at hand (haproxyBinary(), Debian's package). A release is never paired
 * with 2.6 by default: its reload outcome cannot be trusted there
 * (dataplane-haproxy26.real.ts).
 */
export async function haproxyOf(minor: string): Promise<string> {
  const provision = join(ROOT, '.ci', 'provision-haproxy');
  const present = await readFile(provision).then(
    () => true,
    () => false,
  );
  if (present) return ciBinary('provision-haproxy', minor);
  if (minor === '2.6') return haproxyBinary();
  throw new Error(`HAProxy ${minor}, which the real Data Plane API ${minor} is paired with, comes from .ci/provision-haproxy, and this checkout has none`);
}

/** The version word of `HAProxy version 3.2.26-1 ...`, and whether it reloads through the master socket (2.7 on). */
async function haproxyVersion(binary: string): Promise<{ word: string; atLeast27: boolean }> {
  const { stdout } = await run(binary, ['-v']);
  const match = /version (\d+)\.(\d+)(\S*)/.exec(stdout);
  if (match === null) throw new Error(`${binary} -v printed no version: ${stdout}`);
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return { word: `${match[1]}.${match[2]}${match[3]}`, atLeast27: major > 2 || (major === 2 && minor >= 7) };
}

function yamlString(value: string): string {
  return JSON.stringify(value);
}

export async function startRealDataplane(options: RealDataplaneOptions): Promise<RealDataplane> {
  if (process.getuid?.() !== 0 && options.pod !== undefined) throw new Error('a real Data Plane API standing for a pod runs in a private mount namespace: run the specs as root');
  const dpapi = options.dataplaneapi ?? (await dataplaneapiBinary(options.release));
  const haproxy = options.haproxy ?? (await haproxyOf(options.release));
  const { word: haproxyWord, atLeast27 } = await haproxyVersion(haproxy);
  const { stdout: dpapiVersion } = await run(dpapi, ['--version']);
  const credentials = DEFAULT_CREDENTIALS;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pod = options.pod;
  const podAddress = pod?.address ?? '127.0.0.1';

  const root = await mkdtemp(join(tmpdir(), 'dpapi-real-'));
  // `etc` is the configuration's base directory, `run` holds the sockets: at the pod's paths in the namespace.
  const host = { etc: join(root, 'etc'), run: join(root, 'run'), own: join(root, 'dataplaneapi') };
  const inside = pod === undefined ? { etc: host.etc, run: host.run } : { etc: pod.baseDir, run: dirname(pod.statsSocket) };
  const statsName = pod === undefined ? 'admin.sock' : pod.statsSocket.slice(dirname(pod.statsSocket).length + 1);
  for (const dir of [
    host.etc,
    host.run,
    host.own,
    join(host.etc, 'maps'),
    join(host.etc, 'ssl'),
    join(host.etc, 'general'),
    join(host.own, 'transactions'),
    join(host.own, 'backups'),
    join(host.own, 'storage'),
    join(host.own, 'spoe'),
    join(host.own, 'spoe-transactions'),
  ]) {
    await mkdir(dir, { recursive: true });
  }
  const bootstrapPort = await reservePort(podAddress);
  const apiPort = await reservePort();
  const configInside = join(inside.etc, 'haproxy.cfg');
  const masterInside = join(inside.run, 'master.sock');
  const pidInside = join(inside.run, 'haproxy.pid');
  await writeFile(
    join(host.etc, 'haproxy.cfg'),
    bootstrapConfig(inside.etc, bootstrapPort, { statsSocket: join(inside.run, statsName), bindAddress: pod === undefined ? '127.0.0.1' : '*' }),
  );
  // reload_cmd is split on spaces and run without a shell (dataplaneapi `haproxy/reload_agent.go`), hence a script.
  const reloadScript = join(host.own, 'reload.sh');
  await writeFile(reloadScript, `#!/bin/sh\nexec kill -USR2 "$(cat ${pidInside})"\n`, { mode: 0o755 });
  const dpapiConfig = join(host.own, 'dataplaneapi.yaml');
  await writeFile(
    dpapiConfig,
    `config_version: 2
name: htic-spec
dataplaneapi:
  host: 127.0.0.1
  port: ${apiPort}
  user:
    - name: ${yamlString(credentials.user)}
      password: ${yamlString(credentials.password)}
      insecure: true
  transaction:
    transaction_dir: ${yamlString(join(host.own, 'transactions'))}
    backups_dir: ${yamlString(join(host.own, 'backups'))}
  resources:
    maps_dir: ${yamlString(join(inside.etc, 'maps'))}
    ssl_certs_dir: ${yamlString(join(inside.etc, 'ssl'))}
    general_storage_dir: ${yamlString(join(inside.etc, 'general'))}
    dataplane_storage_dir: ${yamlString(join(host.own, 'storage'))}
    spoe_dir: ${yamlString(join(host.own, 'spoe'))}
    spoe_transaction_dir: ${yamlString(join(host.own, 'spoe-transactions'))}
haproxy:
  config_file: ${yamlString(configInside)}
  haproxy_bin: ${yamlString(haproxy)}
  master_worker_mode: true
${options.masterRuntime === false ? '' : `  master_runtime: ${yamlString(masterInside)}\n`}  reload:
    reload_delay: ${options.reloadDelaySeconds ?? 1}
    reload_strategy: custom
    reload_cmd: ${yamlString(`/bin/sh ${reloadScript}`)}
    restart_cmd: ${yamlString(`/bin/sh ${reloadScript}`)}
`,
  );

  // One launcher, so that HAProxy and dataplaneapi share the namespace and one process group (stopped together).
  const launcher = join(host.own, 'launch.sh');
  const mounts = pod === undefined ? '' : `mkdir -p ${inside.etc} ${inside.run}\nmount --bind ${host.etc} ${inside.etc}\nmount --bind ${host.run} ${inside.run}\n`;
  await writeFile(
    launcher,
    `#!/bin/sh
set -e
${mounts}cd ${inside.etc}
${haproxy} -W -db -S ${masterInside},level,admin -p ${pidInside} -f ${configInside} >${join(root, 'haproxy.log')} 2>&1 &
i=0
until [ -S ${masterInside} ] && [ -s ${pidInside} ]; do i=$((i + 1)); [ $i -lt 400 ] || { echo "HAProxy did not start" >&2; exit 1; }; sleep 0.05; done
exec ${dpapi} -f ${dpapiConfig}
`,
    { mode: 0o755 },
  );
  // Mount points on this side for the namespace's bind mounts (nothing is mounted here).
  if (pod !== undefined) await Promise.all([mkdir(inside.etc, { recursive: true }), mkdir(inside.run, { recursive: true })]);
  const log = await open(join(root, 'dataplaneapi.log'), 'w');
  let child: ChildProcess;
  try {
    const command = pod === undefined ? ['/bin/sh', launcher] : ['unshare', '--mount', '--propagation', 'private', '/bin/sh', launcher];
    child = spawn(command[0]!, command.slice(1), { detached: true, stdio: ['ignore', log.fd, log.fd] });
  } finally {
    await log.close();
  }
  let exited: string | undefined;
  child.on('error', (error) => (exited = error.message));
  child.on('exit', (code, signal) => (exited ??= `exited with ${signal ?? `code ${code}`}`));
  child.unref();
  const group = child.pid!;
  const killOnExit = (): void => sendSignal(-group, 'SIGKILL');
  process.once('exit', killOnExit);

  const masterSocket = join(host.run, 'master.sock');
  const logs = async (): Promise<string> => {
    const [api, proxy] = await Promise.all([readFile(join(root, 'dataplaneapi.log'), 'utf8').catch(() => ''), readFile(join(root, 'haproxy.log'), 'utf8').catch(() => '')]);
    return `--- dataplaneapi ---\n${api.trim()}\n--- haproxy ---\n${proxy.trim()}`;
  };
  const requests = new RequestLog();
  const proxy = countingProxy(apiPort, requests);
  const stopAll = async (): Promise<void> => {
    const info = await runtimeCommand(masterSocket, 'show proc', { timeoutMs: 2_000, retryForMs: 0 })
      .then(parseShowProc)
      .catch(() => undefined);
    const pids = [group, ...(info === undefined ? [] : [info.masterPid, ...info.workers.map((w) => w.pid), ...info.oldWorkers.map((w) => w.pid)])];
    sendSignal(-group, 'SIGTERM');
    if (!(await waitGone(pids, timeoutMs))) {
      sendSignal(-group, 'SIGKILL');
      for (const pid of pids) sendSignal(pid, 'SIGKILL');
      await waitGone(pids, 5_000);
    }
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    process.removeListener('exit', killOnExit);
    proxy.server.closeAllConnections();
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  };

  const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
  let proxyPort: number;
  try {
    proxyPort = await listenAnywhere(proxy.server);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (exited !== undefined) throw new Error(`dataplaneapi ${exited}:\n${await logs()}`);
      const answered = await fetch(`http://127.0.0.1:${apiPort}/v3/info`, { headers: { authorization } }).then(
        (response) => response.status === 200,
        () => false,
      );
      if (answered) break;
      if (Date.now() > deadline) throw new Error(`dataplaneapi did not answer GET /v3/info within ${timeoutMs} ms:\n${await logs()}`);
      await delay(50);
    }
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }

  let stopped: Promise<void> | undefined;
  return {
    name: `dataplaneapi ${dpapiVersion
      .trim()
      .split('\n')[0]!
      .replace(/^HAProxy Data Plane API /, '')} + HAProxy ${haproxyWord} (${atLeast27 && options.masterRuntime !== false ? 'master socket reload' : 'reload_cmd'})`,
    url: `http://127.0.0.1:${proxyPort}/v3`,
    credentials,
    authorization,
    baseDir: host.etc,
    configFile: join(host.etc, 'haproxy.cfg'),
    mapsDir: join(host.etc, 'maps'),
    sslDir: join(host.etc, 'ssl'),
    generalDir: join(host.etc, 'general'),
    statsSocket: join(host.run, statsName),
    masterSocket,
    release: releaseFeatures(options.release),
    bootstrapPort,
    lkgFile: join(host.own, 'backups', 'haproxy.cfg.lkg'),
    reloadDelayMs: (options.reloadDelaySeconds ?? 1) * 1000,
    podAddress,
    pod,
    requests,
    processInfo: async () => parseShowProc(await runtimeCommand(masterSocket, 'show proc', { timeoutMs: 5_000 })),
    logs,
    stop() {
      stopped ??= stopAll();
      return stopped;
    },
  };
}

/** A reverse proxy to 127.0.0.1:`port` that records every request before passing it on. */
function countingProxy(port: number, requests: RequestLog): { server: Server } {
  const server = createServer((incoming, outgoing) => {
    const url = incoming.url ?? '/';
    const at = url.indexOf('?');
    requests.record({ method: incoming.method ?? 'GET', path: at < 0 ? url : url.slice(0, at), query: at < 0 ? '' : url.slice(at + 1), at: Date.now() });
    const upstream = httpRequest({ host: '127.0.0.1', port, method: incoming.method, path: url, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(outgoing);
    });
    upstream.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(`proxy: ${error.message}`);
    });
    incoming.pipe(upstream);
  });
  return { server };
}
