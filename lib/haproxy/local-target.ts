/**
 * Deploys rendered configurations to an HAProxy 2.6 running on this machine
 * in master-worker mode, with as few reloads as possible: what the planner
 * says the Runtime API can apply goes over the worker's stats socket,
 * everything else is a reload through the master socket.
 *
 * Layout of the work directory: haproxy.cfg, the maps, certificates and
 * general directories, master.sock, stats.sock (the rendered configuration
 * must put its `stats socket ... level admin` there), haproxy.pid and
 * haproxy.log (the master's own messages).
 *
 * Why HAProxy runs in the foreground (`-W` without `-D`), detached into its
 * own session with stdout and stderr in haproxy.log: with `-D` the master
 * sends its output to /dev/null, and HAProxy 2.6 has no `show startup-logs`
 * on the master CLI, so the reason a reload failed (say "cannot bind socket
 * (Address already in use)", which `haproxy -c` never sees) would be lost.
 * Detached it still outlives the controller, and a new controller attaches to
 * it through master.sock.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { errorMessage } from '../error-message.ts';
import type { DeployResult, RenderedFiles } from '../pipeline/model.ts';
import { renderedFilePaths, writeRenderedFiles } from '../render/write-files.ts';
import { checkConfig, haproxyBinary } from './check.ts';
import { planDeployment } from './plan.ts';
import type { Plan, RuntimeOperation, ServerSpec } from './plan-types.ts';
import { runtimeCommand, SocketUnavailableError } from './runtime-socket.ts';
import { alertLines, isAlive, sendSignal, waitGone } from './processes.ts';
import { assertNoMasterRunning, pidFromFile } from './master-guard.ts';
import { parseShowProc } from './show-proc.ts';
import type { ShowProc } from './show-proc.ts';

export interface LocalTargetOptions {
  /** Holds haproxy.cfg, maps/, ssl/, general/, master.sock, stats.sock, haproxy.pid, haproxy.log. */
  readonly workDir: string;
  readonly dirs: { readonly mapsDir: string; readonly certificatesDir: string; readonly generalDir: string };
  /** Default haproxyBinary(). */
  readonly binary?: string;
  /** Progress lines. */
  readonly log?: (message: string) => void;
  /** Longest wait for a start, a reload or a stop to complete. Default 20 s. */
  readonly timeoutMs?: number;
}

export type { ShowProc } from './show-proc.ts';

const POLL_MS = 50;
/**
 * HAProxy reads CLI input into one buffer (tune.bufsize, 16 kB by default)
 * and refuses a longer request, so map payloads go in chunks well below it.
 */
const MAX_PAYLOAD_BYTES = 8_000;
/** An `add server` answers this when the server exists (checked on 2.6.12). */
const SERVER_ADDED = /^New server registered\./;
/** `set server addr` answers what it changed, or that nothing needed to; anything else is an error. */
const ADDRESS_SET = new RegExp(
  "^(IP changed from '[^']*' to '[^']*'|no need to change the addr)" +
    "(, (port changed from '[^']*' to '[^']*'|no need to change the port))? by '[^']*'$",
);

/** A command's answer that is not the expected success text. */
class CommandError extends Error {
  constructor(command: string, answer: string) {
    const first = answer.trim().split('\n')[0];
    super(`"${command}" ${answer === '' ? 'got no answer' : `answered: ${first === '' ? '(an empty line)' : first}`}`);
    this.name = 'CommandError';
  }
}

export class LocalTarget {
  readonly #workDir: string;
  readonly #dirs: LocalTargetOptions['dirs'];
  readonly #binary: string;
  readonly #log: (message: string) => void;
  readonly #timeoutMs: number;
  /** The files the running HAProxy serves; undefined while none is known to run. */
  #deployed: RenderedFiles | undefined;
  /**
   * Set when runtime operations were applied and the reload meant to finish
   * the job failed: the running state then matches neither file set, so the
   * next deploy reloads whatever the plan says.
   */
  #dirty = false;
  /**
   * The master, when this instance started it: Node reaps it, and stop()
   * waits for that, so no zombie outlives stop().
   */
  #child: ChildProcess | undefined;
  /** Tail of the call queue: deploy, attach and stop run one at a time. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: LocalTargetOptions) {
    this.#workDir = options.workDir;
    this.#dirs = options.dirs;
    this.#binary = options.binary ?? haproxyBinary();
    this.#log = options.log ?? (() => undefined);
    this.#timeoutMs = options.timeoutMs ?? 20_000;
  }

  get masterSocket(): string {
    return join(this.#workDir, 'master.sock');
  }

  get statsSocket(): string {
    return join(this.#workDir, 'stats.sock');
  }

  get #pidFile(): string {
    return join(this.#workDir, 'haproxy.pid');
  }

  get #logFile(): string {
    return join(this.#workDir, 'haproxy.log');
  }

  get #configFile(): string {
    return join(this.#workDir, 'haproxy.cfg');
  }

  /**
   * Adopts an HAProxy already running on this work directory (its master
   * socket answers `show proc`), taking the files in the work directory as
   * what it serves. False when none runs.
   */
  attach(): Promise<boolean> {
    return this.#serialize(() => this.#attach());
  }

  /**
   * Moves HAProxy to `desired`: starts it, applies runtime operations, or
   * reloads. Overlapping calls (and attach/stop) are queued: each starts once
   * the previous one settled, so the plan is always made against the state
   * the previous call left.
   */
  deploy(desired: RenderedFiles): Promise<DeployResult> {
    return this.#serialize(() => this.#deploy(desired));
  }

  async processInfo(): Promise<ShowProc> {
    return parseShowProc(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 5_000 }));
  }

  /** Stops HAProxy at once (SIGTERM to the master) and waits until the master and its workers are gone. */
  stop(): Promise<void> {
    return this.#serialize(() => this.#stop());
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #attach(): Promise<boolean> {
    const info = await this.#probe();
    if (info === undefined) return false;
    this.#deployed = await this.#readFiles();
    this.#dirty = false;
    this.#log(`attached to HAProxy master ${info.masterPid} (workers ${info.workers.map((w) => w.pid).join(', ')})`);
    return true;
  }

  /** `show proc` from a running master, or undefined when none runs on this work directory. */
  async #probe(): Promise<ShowProc | undefined> {
    const pid = await this.#pidFromFile();
    // A live master may be re-executing (a reload) and refuse connections for
    // a moment; without one, a stale socket file must not make us wait.
    const retryForMs = pid !== undefined && isAlive(pid) ? 5_000 : 0;
    const deadline = Date.now() + retryForMs;
    for (;;) {
      try {
        return parseShowProc(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 10_000, retryForMs }));
      } catch (error) {
        if (error instanceof SocketUnavailableError) return undefined;
        // A connection cut by a re-executing master: ask again while it may still be reloading.
        if ((error as { code?: unknown }).code !== 'ECONNRESET' || Date.now() > deadline) throw error;
        await delay(POLL_MS);
      }
    }
  }

  async #deploy(desired: RenderedFiles): Promise<DeployResult> {
    // An HAProxy that died (killed, crashed) since the last deploy is started
    // again rather than failing every deploy on a dead socket.
    if (this.#deployed !== undefined && (await this.#probe()) === undefined) {
      this.#log('HAProxy is no longer running: starting it again');
      this.#deployed = undefined;
    }
    if (this.#deployed === undefined && !(await this.#attach())) return this.#start(desired);
    const deployed = this.#deployed!;
    const plan: Plan = this.#dirty
      ? { kind: 'reload', reason: 'the runtime state is unknown after a failed deployment' }
      : planDeployment(deployed, desired);
    if (plan.kind === 'empty') return { mode: 'unchanged', operations: 0 };
    if (plan.kind === 'reload') return this.#reload(deployed, desired, plan.reason);
    let applied = 0;
    try {
      for (const operation of plan.operations) {
        await this.#apply(operation);
        applied++;
      }
    } catch (error) {
      const reason = `runtime update failed: ${errorMessage(error)}`;
      this.#log(`${reason}; reloading instead`);
      try {
        return await this.#reload(deployed, desired, reason);
      } catch (reloadError) {
        if (applied > 0) this.#dirty = true;
        throw reloadError;
      }
    }
    // Files on disk must say what the runtime now does, or the next reload would undo it.
    try {
      await this.#syncFiles(desired, deployed);
    } catch (error) {
      this.#dirty = true;
      throw error;
    }
    this.#deployed = desired;
    return { mode: 'runtime', operations: applied };
  }

  async #start(desired: RenderedFiles): Promise<DeployResult> {
    await assertNoMasterRunning(this.#workDir, this.#pidFile, this.masterSocket);
    await mkdir(this.#workDir, { recursive: true });
    // Whatever an earlier run left in the directories would be loaded too (a
    // `crt` directory loads every file in it): the directories hold this render only.
    await this.#syncFiles(desired, await this.#readFiles());
    await rm(this.#pidFile, { force: true });
    const log = await open(this.#logFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(
        this.#binary,
        ['-W', '-S', this.masterSocket, '-p', this.#pidFile, '-f', this.#configFile],
        { cwd: this.#workDir, detached: true, stdio: ['ignore', log.fd, log.fd] },
      );
    } finally {
      await log.close();
    }
    let exit: string | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => {
      exit =
        error.code === 'ENOENT'
          ? `${this.#binary} not found: install Debian's haproxy package (apt-get install haproxy) or set HAPROXY_BIN`
          : errorMessage(error);
    });
    child.on('exit', (code, killedBy) => {
      exit ??= `HAProxy exited with ${killedBy ?? `code ${code}`}`;
    });
    // The controller may exit before HAProxy: nothing of the child may keep it alive.
    child.unref();
    const deadline = Date.now() + this.#timeoutMs;
    for (;;) {
      if (exit !== undefined) {
        const output = (await readFile(this.#logFile, 'utf8').catch(() => '')).trim();
        throw new Error(`HAProxy failed to start: ${alertLines(output) || output || exit}`);
      }
      const info = await this.#tryShowProc();
      const worker = info?.workers[0];
      if (info !== undefined && worker !== undefined) {
        this.#child = child;
        this.#deployed = desired;
        this.#dirty = false;
        this.#log(`started HAProxy master ${info.masterPid}, worker ${worker.pid}`);
        return { mode: 'reload', reloadReason: 'HAProxy started', reloadId: String(worker.pid), operations: 0 };
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`HAProxy did not start within ${this.#timeoutMs} ms (no worker on ${this.masterSocket})`);
      }
      await delay(POLL_MS);
    }
  }

  /** `show proc`, or undefined while the master does not answer. */
  async #tryShowProc(): Promise<ShowProc | undefined> {
    try {
      return parseShowProc(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 2_000, retryForMs: 0 }));
    } catch {
      return undefined;
    }
  }

  async #reload(deployed: RenderedFiles, desired: RenderedFiles, reason: string): Promise<DeployResult> {
    const before = await this.processInfo();
    const logOffset = await stat(this.#logFile).then(
      (stats) => stats.size,
      () => 0,
    );
    await this.#syncFiles(desired, deployed);
    this.#log(`reloading HAProxy: ${reason}`);
    // 2.6 answers nothing: the outcome shows in `show proc` once the master has re-executed.
    let answer = '';
    try {
      answer = await runtimeCommand(this.masterSocket, 'reload', { timeoutMs: 5_000 });
    } catch (error) {
      // The master re-executing can cut the connection that asked for it: the
      // reload is under way, and `show proc` tells how it went. Never resent:
      // a second reload would be a second (needless) one.
      if ((error as { code?: unknown }).code !== 'ECONNRESET') {
        await this.#syncFiles(deployed, desired);
        throw error;
      }
    }
    const oldWorkers = new Set(before.workers.map((worker) => worker.pid));
    const deadline = Date.now() + this.#timeoutMs;
    let outcome: 'loaded' | 'failed' | undefined;
    let newWorker: number | undefined;
    while (outcome === undefined) {
      const info = await this.#tryShowProc();
      if (info !== undefined && info.reloads > before.reloads) {
        if (info.failed > before.failed) outcome = 'failed';
        newWorker = info.workers.find((worker) => !oldWorkers.has(worker.pid))?.pid;
        if (newWorker !== undefined) outcome ??= 'loaded';
      }
      if (outcome !== undefined) break;
      if (Date.now() > deadline) {
        await this.#syncFiles(deployed, desired);
        this.#dirty = true;
        const said = answer.trim() === '' ? '' : ` (reload answered: ${answer.trim()})`;
        throw new Error(`HAProxy did not complete the reload within ${this.#timeoutMs} ms${said}`);
      }
      await delay(POLL_MS);
    }
    if (outcome === 'failed') {
      const message = await this.#reloadFailure(before.masterPid, logOffset);
      await this.#syncFiles(deployed, desired);
      this.#log(`reload rejected, previous files restored, the previous worker keeps serving: ${message}`);
      throw new Error(`HAProxy rejected the reload (${reason}): ${message}`);
    }
    this.#deployed = desired;
    this.#dirty = false;
    this.#log(`reloaded HAProxy, new worker ${newWorker}`);
    return { mode: 'reload', reloadReason: reason, reloadId: String(newWorker), operations: 0 };
  }

  /** HAProxy's own words on a failed reload: the master's ALERT lines, else those of `haproxy -c`. */
  async #reloadFailure(masterPid: number, logOffset: number): Promise<string> {
    const written = await readFile(this.#logFile).catch(() => Buffer.alloc(0));
    const fromLog = alertLines(written.subarray(logOffset).toString('utf8'), masterPid);
    if (fromLog !== '') return fromLog;
    // An HAProxy started elsewhere (with -D, say) logs nowhere we can read.
    const check = await checkConfig(this.#configFile, this.#binary).catch(() => undefined);
    return (check && alertLines(check.output)) || 'no message (see the HAProxy log); show proc counted a failed reload';
  }

  async #stop(): Promise<void> {
    const info = await this.#tryShowProc();
    const masterPid = info?.masterPid ?? (await this.#pidFromFile());
    this.#deployed = undefined;
    this.#dirty = false;
    if (masterPid === undefined) return;
    const pids = [masterPid, ...(info?.workers ?? []), ...(info?.oldWorkers ?? [])].map((entry) =>
      typeof entry === 'number' ? entry : entry.pid,
    );
    sendSignal(masterPid, 'SIGTERM');
    if (!(await waitGone(pids, this.#timeoutMs, POLL_MS))) {
      this.#log(`HAProxy did not stop within ${this.#timeoutMs} ms: killing ${pids.join(', ')}`);
      for (const pid of pids) sendSignal(pid, 'SIGKILL');
      if (!(await waitGone(pids, 5_000, POLL_MS))) throw new Error(`HAProxy processes ${pids.join(', ')} did not exit`);
    }
    const child = this.#child;
    this.#child = undefined;
    if (child !== undefined && child.pid === masterPid && child.exitCode === null && child.signalCode === null) {
      await once(child, 'exit', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    }
    this.#log(`stopped HAProxy master ${masterPid}`);
  }

  #pidFromFile(): Promise<number | undefined> {
    return pidFromFile(this.#pidFile);
  }

  /** The files under the work directory as a render: what an adopted HAProxy serves. */
  async #readFiles(): Promise<RenderedFiles> {
    const group = async (dir: string): Promise<Record<string, string>> => {
      const root = join(this.#workDir, dir);
      const entries: Record<string, string> = {};
      const found = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const entry of found) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        entries[relative(root, path).split(sep).join('/')] = await readFile(path, 'utf8');
      }
      return entries;
    };
    return {
      config: await readFile(this.#configFile, 'utf8').catch(() => ''),
      maps: await group(this.#dirs.mapsDir),
      certificates: await group(this.#dirs.certificatesDir),
      files: await group(this.#dirs.generalDir),
    };
  }

  /** Writes `target` and removes the files only `previous` had. */
  async #syncFiles(target: RenderedFiles, previous: RenderedFiles): Promise<void> {
    await writeRenderedFiles(this.#workDir, target, this.#dirs);
    const keep = renderedFilePaths(this.#workDir, target, this.#dirs);
    for (const path of renderedFilePaths(this.#workDir, previous, this.#dirs).keys()) {
      if (!keep.has(path)) await rm(path, { force: true });
    }
  }

  /** Sends a command to the worker's stats socket and returns the answer if `ok` accepts it. */
  async #command(command: string, ok: (answer: string) => boolean, payload?: string): Promise<string> {
    const answer = await runtimeCommand(this.statsSocket, command, payload === undefined ? {} : { payload });
    // Even an "empty" success ends with a line break; no byte at all means
    // HAProxy dropped the request (2.6 does so silently for one over tune.bufsize).
    if (answer === '' || !ok(answer.trim())) throw new CommandError(command, answer);
    return answer;
  }

  async #apply(operation: RuntimeOperation): Promise<void> {
    switch (operation.type) {
      case 'addServer':
        return this.#addServer(operation.backend, operation.server);
      case 'deleteServer':
        return this.#deleteServer(operation.backend, operation.server);
      case 'updateServer':
        return this.#updateServer(operation);
      case 'updateMap':
        return this.#updateMap(operation.map, operation.entries);
      case 'updateCertificate':
        return this.#updateCertificate(operation.certificate, operation.pem);
    }
  }

  async #addServer(backend: string, server: ServerSpec): Promise<void> {
    const id = `${backend}/${server.name}`;
    const words = ['add server', id, serverAddress(server.address, server.port), ...server.options];
    await this.#command(words.join(' '), (answer) => SERVER_ADDED.test(answer));
    // 2.6 creates dynamic servers in maintenance with health checks off.
    if (!server.disabled) await this.#command(`set server ${id} state ready`, isEmpty);
    if (server.options.includes('check')) await this.#command(`enable health ${id}`, isEmpty);
  }

  async #deleteServer(backend: string, server: string): Promise<void> {
    const id = `${backend}/${server}`;
    // Only a server in maintenance can be deleted; maintenance also moves new traffic away.
    await this.#command(`set server ${id} state maint`, isEmpty);
    await this.#command(`shutdown sessions server ${id}`, isEmpty);
    // Sessions close asynchronously: a refusal right after the shutdown is retried a few times.
    let answer = '';
    for (let attempt = 0; attempt < 10; attempt++) {
      answer = (await runtimeCommand(this.statsSocket, `del server ${id}`)).trim();
      if (answer === 'Server deleted.') return;
      await delay(POLL_MS);
    }
    // Traffic has moved already; the server stays in maintenance until the next reload drops it.
    this.#log(`del server ${id} refused, left in maintenance: ${answer}`);
  }

  async #updateServer(operation: Extract<RuntimeOperation, { type: 'updateServer' }>): Promise<void> {
    const id = `${operation.backend}/${operation.server}`;
    if (operation.address !== undefined || operation.port !== undefined) {
      // `set server addr` needs the address even when only the port changes.
      const address = operation.address ?? (await this.#currentAddress(operation.backend, operation.server));
      const port = operation.port === undefined ? '' : ` port ${operation.port}`;
      await this.#command(`set server ${id} addr ${address}${port}`, (answer) => ADDRESS_SET.test(answer));
    }
    if (operation.weight !== undefined) await this.#command(`set server ${id} weight ${operation.weight}`, isEmpty);
    if (operation.disabled !== undefined) {
      await this.#command(`set server ${id} state ${operation.disabled ? 'maint' : 'ready'}`, isEmpty);
    }
  }

  async #currentAddress(backend: string, server: string): Promise<string> {
    const answer = await runtimeCommand(this.statsSocket, `show servers state ${backend}`);
    // Columns: be_id be_name srv_id srv_name srv_addr ...
    for (const line of answer.split('\n')) {
      const words = line.trim().split(/\s+/);
      if (words[1] === backend && words[3] === server && words[4] !== undefined) return words[4];
    }
    throw new CommandError(`show servers state ${backend}`, `no server ${server}: ${answer}`);
  }

  async #updateMap(map: string, entries: readonly (readonly [string, string])[]): Promise<void> {
    const file = posix.normalize(`${this.#dirs.mapsDir}/${map}`);
    const listing = await runtimeCommand(this.statsSocket, 'show map');
    // Lines: `<id> (<file as the configuration names it>) pattern loaded from file ...`.
    const ids = listing
      .split('\n')
      .map((line) => /^(\d+) \((.*?)\) /.exec(line))
      .filter((match) => match !== null && matchesPath(match[2] ?? '', file))
      .map((match) => match![1]!);
    if (ids.length === 0) throw new Error(`map ${file} is not loaded by the running HAProxy`);
    const lines = entries.map(([key, value]) => `${key} ${value}`);
    for (const id of ids) {
      // A new version filled while the current one serves, then swapped in at
      // once: lookups never see a half-written map, and file order is kept.
      const prepared = await this.#command(`prepare map #${id}`, (answer) => /^New version created: \d+$/.test(answer));
      const version = /(\d+)/.exec(prepared)![1]!;
      for (const chunk of chunkLines(lines)) {
        await this.#command(`add map @${version} #${id}`, isEmpty, chunk);
      }
      await this.#command(`commit map @${version} #${id}`, isEmpty);
    }
  }

  async #updateCertificate(certificate: string, pem: string): Promise<void> {
    const file = posix.normalize(`${this.#dirs.certificatesDir}/${certificate}`);
    const listing = await runtimeCommand(this.statsSocket, 'show ssl cert');
    // Names under `# filename`, and under `# transaction` with a leading `*`.
    const name = listing
      .split('\n')
      .map((line) => line.trim().replace(/^\*/, ''))
      .find((line) => line !== '' && !line.startsWith('#') && matchesPath(line, file));
    if (name === undefined) throw new Error(`certificate ${file} is not loaded by the running HAProxy`);
    // An empty line would end the payload early; PEM does not need any.
    const payload = pem
      .split('\n')
      .filter((line) => line.trim() !== '')
      .join('\n');
    const transaction = /^Transaction (created|updated) for certificate /;
    await this.#command(`set ssl cert ${name}`, (answer) => transaction.test(answer), payload);
    try {
      const committed = (answer: string): boolean => /\bSuccess!$/.test(answer) && !answer.includes("Can't");
      await this.#command(`commit ssl cert ${name}`, committed);
    } catch (error) {
      // A failed commit leaves the transaction open; the next `set ssl cert` would build on it.
      await runtimeCommand(this.statsSocket, `abort ssl cert ${name}`).catch(() => undefined);
      throw error;
    }
  }
}

function isEmpty(answer: string): boolean {
  return answer === '';
}

/** `path` is `file` or ends with `/<file>` (HAProxy names files as the configuration wrote them). */
function matchesPath(path: string, file: string): boolean {
  return path === file || path.endsWith(`/${file}`);
}

/** An address as `add server` takes it; port 0 means none (the client's destination port). */
function serverAddress(address: string, port: number): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === 0 ? host : `${host}:${port}`;
}

/** Payload chunks of whole lines, each below MAX_PAYLOAD_BYTES. */
function chunkLines(lines: readonly string[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (current.length > 0 && size + bytes > MAX_PAYLOAD_BYTES) {
      chunks.push(current.join('\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current.join('\n'));
  return chunks;
}

