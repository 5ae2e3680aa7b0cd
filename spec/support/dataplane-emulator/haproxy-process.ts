/**
 * The real HAProxy behind one emulated instance, in master-worker mode
 * (`-W -S master.sock`), in the foreground with its output in haproxy.log.
 * From 2.7 DPAPI reloads through the master socket and takes its answer:
 * `Success=1|0`, then the startup log, which is the reload's response
 * (haproxy/reload_agent.go reloadHAProxy at v3.2.15, the master socket used
 * when canUseMasterSocketReload in configure_data_plane.go). 2.6's master
 * CLI `reload` answers nothing (§9; DPAPI runs its reload_cmd there), so the
 * outcome comes from `show proc` and the reason of a failure (say "cannot
 * bind socket", which `haproxy -c` never sees) from the master's log lines,
 * as LocalTarget does.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { HaproxyCapabilities } from '../../../lib/haproxy/capabilities.ts';
import { readReloadAnswer } from '../../../lib/haproxy/master-reload.ts';
import { alertLines, sendSignal, waitGone } from '../../../lib/haproxy/processes.ts';
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';
import { parseShowProc } from '../../../lib/haproxy/show-proc.ts';
import type { ShowProc } from '../../../lib/haproxy/show-proc.ts';

export interface HAProxyProcessOptions {
  readonly binary: string;
  /** What that binary can do (lib/haproxy/capabilities.ts). */
  readonly capabilities: HaproxyCapabilities;
  readonly baseDir: string;
  readonly configFile: string;
  readonly masterSocket: string;
  readonly pidFile: string;
  readonly logFile: string;
  /** Longest wait for a start, a reload or a stop. */
  readonly timeoutMs: number;
}

export interface ReloadOutcome {
  readonly ok: boolean;
  /** HAProxy's own words: the ALERT lines of a failure, the master's lines of a success. */
  readonly response: string;
}

const POLL_MS = 25;

export class HAProxyProcess {
  readonly #options: HAProxyProcessOptions;
  #child: ChildProcess | undefined;
  #masterPid: number | undefined;
  readonly #killOnExit = (): void => {
    // The test process is exiting without stop(): no HAProxy may outlive it.
    if (this.#masterPid !== undefined) sendSignal(this.#masterPid, 'SIGKILL');
  };

  constructor(options: HAProxyProcessOptions) {
    this.#options = options;
  }

  get capabilities(): HaproxyCapabilities {
    return this.#options.capabilities;
  }

  /** Starts the master on the config file and waits for its first worker. */
  async start(): Promise<ShowProc> {
    const { binary, baseDir, configFile, masterSocket, pidFile, logFile, timeoutMs } = this.#options;
    await rm(pidFile, { force: true });
    const log = await open(logFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(binary, ['-W', '-S', masterSocket, '-p', pidFile, '-f', configFile], {
        cwd: baseDir,
        stdio: ['ignore', log.fd, log.fd],
      });
    } finally {
      await log.close();
    }
    let exit: string | undefined;
    child.on('error', (error) => {
      exit = `cannot run ${binary}: ${error.message}`;
    });
    child.on('exit', (code, killedBy) => {
      exit ??= `HAProxy exited with ${killedBy ?? `code ${code}`}`;
    });
    // A test that forgets stop() must not keep mocha alive; the exit hook still kills HAProxy.
    child.unref();
    this.#child = child;
    this.#masterPid = child.pid;
    process.once('exit', this.#killOnExit);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (exit !== undefined) {
        this.#forget();
        const output = (await readFile(logFile, 'utf8').catch(() => '')).trim();
        throw new Error(`HAProxy failed to start: ${alertLines(output) || output || exit}`);
      }
      const info = await this.tryShowProc();
      // From 3.1 `show proc` lists a worker before it has bound its listeners (master-process.ts): the pid file says it is ready.
      if (info !== undefined && info.workers.length > 0 && (await this.#pidFileNames(info.masterPid))) return info;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        this.#forget();
        throw new Error(`HAProxy did not start within ${timeoutMs} ms`);
      }
      await delay(POLL_MS);
    }
  }

  /** `show proc` on the master CLI (retried while the master re-executes on a reload). */
  async showProc(): Promise<ShowProc> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      try {
        return parseShowProc(await runtimeCommand(this.#options.masterSocket, 'show proc', { timeoutMs: 5_000 }), this.capabilities);
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ECONNRESET' || Date.now() > deadline) throw error;
        await delay(POLL_MS);
      }
    }
  }

  /** `show proc`, or undefined while the master does not answer. */
  async tryShowProc(): Promise<ShowProc | undefined> {
    try {
      return parseShowProc(await runtimeCommand(this.#options.masterSocket, 'show proc', { timeoutMs: 2_000, retryForMs: 0 }), this.capabilities);
    } catch {
      return undefined;
    }
  }

  /**
   * Master CLI `reload`, then `show proc` until the master counted it: a new
   * worker means loaded; a grown `failed` counter means HAProxy refused the
   * files and the previous worker keeps serving (§9).
   */
  async reload(): Promise<ReloadOutcome> {
    const { masterSocket, logFile, timeoutMs } = this.#options;
    let before: ShowProc;
    try {
      before = await this.showProc();
    } catch (error) {
      return { ok: false, response: `HAProxy master does not answer: ${(error as Error).message}` };
    }
    const offset = await stat(logFile).then(
      (stats) => stats.size,
      () => 0,
    );
    const synchronous = this.capabilities.synchronousReload;
    let answer = '';
    try {
      answer = await runtimeCommand(masterSocket, 'reload', { timeoutMs: synchronous ? timeoutMs : 5_000 });
    } catch (error) {
      // The re-executing master may cut the connection that asked for the reload: it is under way.
      if ((error as { code?: unknown }).code !== 'ECONNRESET') {
        return { ok: false, response: `master CLI reload failed: ${(error as Error).message}` };
      }
    }
    const reported = synchronous ? readReloadAnswer(answer) : undefined;
    if (reported !== undefined) return { ok: reported.loaded, response: reported.log };
    const oldWorkers = new Set(before.workers.map((worker) => worker.pid));
    const deadline = Date.now() + timeoutMs;
    let outcome: boolean | undefined;
    while (outcome === undefined) {
      const info = await this.tryShowProc();
      if (info !== undefined && info.reloads > before.reloads) {
        if (info.failed > before.failed) outcome = false;
        else if (info.workers.some((worker) => !oldWorkers.has(worker.pid))) outcome = true;
      }
      if (outcome !== undefined) break;
      if (Date.now() > deadline) {
        return { ok: false, response: `HAProxy did not complete the reload within ${timeoutMs} ms` };
      }
      await delay(POLL_MS);
    }
    const written = (await readFile(logFile).catch(() => Buffer.alloc(0))).subarray(offset).toString('utf8');
    const masterLines = ownLines(written, before.masterPid);
    if (outcome) return { ok: true, response: masterLines };
    return {
      ok: false,
      response: alertLines(written, before.masterPid) || masterLines || 'show proc counted a failed reload',
    };
  }

  /** SIGTERM to the master, SIGKILL after the timeout; resolves once the master and its workers are gone. */
  async stop(): Promise<void> {
    const masterPid = this.#masterPid;
    if (masterPid === undefined) return;
    const info = await this.tryShowProc();
    const pids = [masterPid, ...(info?.workers ?? []).map((w) => w.pid), ...(info?.oldWorkers ?? []).map((w) => w.pid)];
    sendSignal(masterPid, 'SIGTERM');
    if (!(await waitGone(pids, this.#options.timeoutMs, POLL_MS))) {
      for (const pid of pids) sendSignal(pid, 'SIGKILL');
      await waitGone(pids, 5_000, POLL_MS);
    }
    const child = this.#child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      // Node reaps its child on 'exit': waiting for it leaves no zombie behind.
      await once(child, 'exit', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    }
    this.#forget();
  }

  async #pidFileNames(pid: number): Promise<boolean> {
    return Number((await readFile(this.#options.pidFile, 'utf8').catch(() => '')).trim()) === pid;
  }

  #forget(): void {
    this.#child = undefined;
    this.#masterPid = undefined;
    process.removeListener('exit', this.#killOnExit);
  }
}

/** The lines a process logged, tags padded down to one space. */
function ownLines(output: string, pid: number): string {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(`(${pid})`))
    .map((line) => line.replace(/^\[(\w+)\]\s+/, '[$1] '))
    .join('\n');
}
