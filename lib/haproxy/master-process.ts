/**
 * The HAProxy master process of one work directory: started from
 * `haproxy.cfg` in master-worker mode, found again through its master
 * socket and pid file, asked `show proc`, stopped.
 *
 * Layout of the work directory: haproxy.cfg, master.sock (the master CLI),
 * haproxy.pid and haproxy.log (the master's own output).
 *
 * Why HAProxy runs in the foreground (`-W` without `-D`), detached into its
 * own session with stdout and stderr in haproxy.log: with `-D` the master
 * sends its output to /dev/null, and HAProxy 2.6 has no `show startup-logs`
 * on the master CLI, so the reason a reload failed (say "cannot bind socket
 * (Address already in use)", which `haproxy -c` never sees) would be lost.
 * Detached it still outlives the controller, and a new controller finds it
 * through master.sock.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type Clock } from '../clock.ts';
import { errorMessage } from '../error-message.ts';
import { readCapabilities, type HaproxyCapabilities } from './capabilities.ts';
import { haproxyBinary } from './check.ts';
import { assertNoMasterRunning, pidFromFile } from './master-guard.ts';
import { alertLines, isAlive, sendSignal, waitGone } from './processes.ts';
import { runtimeCommand, SocketUnavailableError } from './runtime-socket.ts';
import { parseShowProc } from './show-proc.ts';
import type { ShowProc } from './show-proc.ts';

export interface MasterProcessOptions {
  /** Holds haproxy.cfg, master.sock, haproxy.pid, haproxy.log. */
  readonly workDir: string;
  /** Default haproxyBinary(). */
  readonly binary?: string;
  /** Longest wait for a start or a stop to complete. Default 20 s. */
  readonly timeoutMs?: number;
  /** What the timeouts and the pauses between looks at the master are measured on; real time by default. */
  readonly clock?: Clock;
}

export const POLL_MS = 50;

export class MasterProcess {
  readonly workDir: string;
  readonly binary: string;
  readonly timeoutMs: number;
  readonly clock: Clock;
  /**
   * The master, when this instance started it: Node reaps it, and stop()
   * waits for that, so no zombie outlives stop().
   */
  #child: ChildProcess | undefined;
  readonly #exitListeners = new Set<() => void>();
  #capabilities: Promise<HaproxyCapabilities> | undefined;

  constructor(options: MasterProcessOptions) {
    this.workDir = options.workDir;
    this.binary = options.binary ?? haproxyBinary();
    this.timeoutMs = options.timeoutMs ?? 20_000;
    this.clock = options.clock ?? systemClock;
  }

  get masterSocket(): string {
    return join(this.workDir, 'master.sock');
  }

  get configFile(): string {
    return join(this.workDir, 'haproxy.cfg');
  }

  get logFile(): string {
    return join(this.workDir, 'haproxy.log');
  }

  get #pidFile(): string {
    return join(this.workDir, 'haproxy.pid');
  }

  /** What the binary can do (its `haproxy -vv`), asked once. */
  capabilities(): Promise<HaproxyCapabilities> {
    // A failure is not kept: the binary may be installed meanwhile.
    this.#capabilities ??= readCapabilities(this.binary).catch((error: unknown) => {
      this.#capabilities = undefined;
      throw error;
    });
    return this.#capabilities;
  }

  async #parse(text: string): Promise<ShowProc> {
    return parseShowProc(text, await this.capabilities());
  }

  /** `show proc`, for a master known to run. */
  async showProc(): Promise<ShowProc> {
    return this.#parse(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 5_000 }));
  }

  /** `show proc`, or undefined while the master does not answer. */
  async tryShowProc(): Promise<ShowProc | undefined> {
    try {
      return await this.#parse(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 2_000, retryForMs: 0 }));
    } catch {
      return undefined;
    }
  }

  /**
   * `show proc` from the master running on this work directory, undefined
   * when none runs. A live master (its pid file names a live process) may be
   * re-executing for a reload and refuse connections for a moment: it is
   * asked again for up to 5 s. Without one, a stale socket file does not
   * make anyone wait.
   */
  async probe(): Promise<ShowProc | undefined> {
    const pid = await this.pidFromFile();
    const retryForMs = pid !== undefined && isAlive(pid) ? 5_000 : 0;
    const deadline = this.clock.now() + retryForMs;
    for (;;) {
      try {
        return await this.#parse(await runtimeCommand(this.masterSocket, 'show proc', { timeoutMs: 10_000, retryForMs }));
      } catch (error) {
        if (error instanceof SocketUnavailableError) return undefined;
        if ((error as { code?: unknown }).code !== 'ECONNRESET' || this.clock.now() > deadline) throw error;
        await this.clock.sleep(POLL_MS);
      }
    }
  }

  /**
   * Starts a master on haproxy.cfg, detached, and waits for its first worker.
   * HAProxy's refusal is an error with its ALERT lines. Refused while a
   * master (alive, however slow to answer) still runs on this work
   * directory: two would serve side by side.
   */
  async start(): Promise<ShowProc> {
    await this.assertNoneRunning();
    await mkdir(this.workDir, { recursive: true });
    await rm(this.#pidFile, { force: true });
    const log = await open(this.logFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(this.binary, ['-W', '-S', this.masterSocket, '-p', this.#pidFile, '-f', this.configFile], {
        cwd: this.workDir,
        detached: true,
        stdio: ['ignore', log.fd, log.fd],
      });
    } finally {
      await log.close();
    }
    let exit: string | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => {
      exit = error.code === 'ENOENT' ? `${this.binary} not found: install Debian's haproxy package (apt-get install haproxy) or set HAPROXY_BIN` : errorMessage(error);
    });
    child.on('exit', (code, killedBy) => {
      exit ??= `HAProxy exited with ${killedBy ?? `code ${code}`}`;
    });
    // The controller may exit before HAProxy: nothing of the child may keep it alive.
    child.unref();
    const deadline = this.clock.now() + this.timeoutMs;
    for (;;) {
      if (exit !== undefined) {
        const output = (await readFile(this.logFile, 'utf8').catch(() => '')).trim();
        throw new Error(`HAProxy failed to start: ${alertLines(output) || output || exit}`);
      }
      const info = await this.tryShowProc();
      // From 3.1 `show proc` lists a worker as soon as it is forked, before it has read the configuration
      // and bound its listeners (connections refused meanwhile, seen on 3.2); the master writes its pid
      // file once the worker is ready, and the pid file is how the master is found again later.
      if (info !== undefined && info.workers[0] !== undefined && (await this.pidFromFile()) === info.masterPid) {
        this.#child = child;
        child.once('exit', () => {
          for (const listener of this.#exitListeners) listener();
        });
        return info;
      }
      if (this.clock.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`HAProxy did not start within ${this.timeoutMs} ms (no worker on ${this.masterSocket})`);
      }
      await this.clock.sleep(POLL_MS);
    }
  }

  /**
   * Stops the master at once (SIGTERM) and waits until it and its workers
   * are gone, killing them after the timeout. The pid of the master stopped,
   * undefined when none ran.
   */
  async stop(): Promise<number | undefined> {
    const info = await this.tryShowProc();
    const masterPid = info?.masterPid ?? (await this.pidFromFile());
    if (masterPid === undefined) return undefined;
    const pids = [masterPid, ...(info?.workers ?? []), ...(info?.oldWorkers ?? [])].map((entry) => (typeof entry === 'number' ? entry : entry.pid));
    sendSignal(masterPid, 'SIGTERM');
    if (!(await waitGone(pids, this.timeoutMs, POLL_MS, this.clock))) {
      for (const pid of pids) sendSignal(pid, 'SIGKILL');
      if (!(await waitGone(pids, 5_000, POLL_MS, this.clock))) throw new Error(`HAProxy processes ${pids.join(', ')} did not exit`);
    }
    const child = this.#child;
    this.#child = undefined;
    if (child !== undefined && child.pid === masterPid && child.exitCode === null && child.signalCode === null) {
      await once(child, 'exit', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    }
    return masterPid;
  }

  /**
   * Calls `listener` whenever a master this instance started exits (Node
   * reaps it and says so at once); a master it found running is not its
   * child, and only a look at its pid tells of its death. Returns the
   * unsubscribe.
   */
  onExit(listener: () => void): () => void {
    this.#exitListeners.add(listener);
    return () => this.#exitListeners.delete(listener);
  }

  /** Throws, saying why, while a master (alive, however slow to answer) runs on this work directory. */
  assertNoneRunning(): Promise<void> {
    return assertNoMasterRunning(this.workDir, this.#pidFile, this.masterSocket);
  }

  /** The pid the master wrote, when it is a number. */
  pidFromFile(): Promise<number | undefined> {
    return pidFromFile(this.#pidFile);
  }
}
