/**
 * A HAProxy 2.6 on this machine as a deploy target: its files in a work
 * directory, its master process (master-process.ts), reloads through the
 * master CLI (master-reload.ts) and runtime operations over the worker's
 * stats socket (runtime-applier.ts).
 *
 * Work directory: haproxy.cfg, the maps, certificates and general
 * directories, master.sock, stats.sock (the rendered configuration must put
 * its `stats socket ... level admin` there), haproxy.pid and haproxy.log.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Clock } from '../clock.ts';
import { MasterProcess } from '../haproxy/master-process.ts';
import { reloadMaster } from '../haproxy/master-reload.ts';
import { sameFiles } from '../haproxy/plan.ts';
import type { RuntimeOperation } from '../haproxy/plan-types.ts';
import { RuntimeApplier } from '../haproxy/runtime-applier.ts';
import type { ShowProc } from '../haproxy/show-proc.ts';
import type { RenderedFiles } from '../pipeline/model.ts';
import { renderedFilePaths, writeRenderedFiles } from '../render/write-files.ts';
import type { DeployedState, DeployTarget } from './target.ts';

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
  /** What those waits and the polling of the master are measured on; real time by default. */
  readonly clock?: Clock;
}

export interface LocalState extends DeployedState {
  /** The master that serves these files. */
  readonly masterPid: number;
}

export class LocalTarget implements DeployTarget<LocalState> {
  readonly name = 'local';
  readonly master: MasterProcess;
  readonly #workDir: string;
  readonly #dirs: LocalTargetOptions['dirs'];
  readonly #log: (message: string) => void;
  readonly #runtime: RuntimeApplier;

  constructor(options: LocalTargetOptions) {
    this.#workDir = options.workDir;
    this.#dirs = options.dirs;
    this.#log = options.log ?? (() => undefined);
    this.master = new MasterProcess({
      workDir: options.workDir,
      ...(options.binary === undefined ? {} : { binary: options.binary }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    this.#runtime = new RuntimeApplier({ statsSocket: this.statsSocket, dirs: options.dirs, log: this.#log });
  }

  get statsSocket(): string {
    return join(this.#workDir, 'stats.sock');
  }

  processInfo(): Promise<ShowProc> {
    return this.master.showProc();
  }

  /** An HAProxy running on this work directory (its master answers `show proc`), with the files it serves. */
  async read(): Promise<LocalState | undefined> {
    const info = await this.master.probe();
    if (info === undefined) return undefined;
    return { files: await this.#readFiles(), masterPid: info.masterPid };
  }

  async isCurrent(state: LocalState): Promise<boolean> {
    return (await this.master.probe())?.masterPid === state.masterPid;
  }

  refusal(): string | undefined {
    return undefined;
  }

  async runtime(state: LocalState, desired: RenderedFiles, operations: readonly RuntimeOperation[], persist: boolean): Promise<{ state: LocalState; operations: number }> {
    for (const operation of operations) await this.#runtime.apply(operation);
    const onDisk = state.persisted ?? state.files;
    if (!persist) return { state: { files: desired, masterPid: state.masterPid, persisted: onDisk }, operations: operations.length };
    // Files on disk must say what the runtime now does, or the next reload would undo it.
    await this.#syncFiles(desired, onDisk);
    return { state: { files: desired, masterPid: state.masterPid }, operations: operations.length };
  }

  async persist(state: LocalState): Promise<LocalState> {
    if (state.persisted !== undefined) await this.#syncFiles(state.files, state.persisted);
    return { files: state.files, masterPid: state.masterPid };
  }

  async reload(state: LocalState | undefined, desired: RenderedFiles, reason: string): Promise<{ state: LocalState; reloadId: string }> {
    if (state === undefined) return this.#start(desired);
    const onDisk = state.persisted ?? state.files;
    await this.#syncFiles(desired, onDisk);
    this.#log(`reloading HAProxy: ${reason}`);
    let outcome: Awaited<ReturnType<typeof reloadMaster>>;
    try {
      outcome = await reloadMaster(this.master);
    } catch (error) {
      // Not asked, or no word in time: the files go back to what they said before, which the last worker known to load serves
      // (or will serve once its runtime-first configuration is confirmed).
      await this.#syncFiles(onDisk, desired);
      throw error;
    }
    if (!outcome.loaded) {
      await this.#syncFiles(onDisk, desired);
      this.#log(`reload rejected, previous files restored, the previous worker keeps serving: ${outcome.message}`);
      throw new Error(`HAProxy rejected the reload (${reason}): ${outcome.message}`);
    }
    this.#log(`reloaded HAProxy, new worker ${outcome.worker}`);
    return { state: { files: desired, masterPid: state.masterPid }, reloadId: String(outcome.worker) };
  }

  /** Stops HAProxy at once and waits until the master and its workers are gone. */
  async stop(): Promise<void> {
    const pid = await this.master.stop();
    if (pid !== undefined) this.#log(`stopped HAProxy master ${pid}`);
  }

  async #start(desired: RenderedFiles): Promise<{ state: LocalState; reloadId: string }> {
    // A master alive but not answering still serves the files on disk, and the
    // next read takes them for what it serves: they are not touched until it is known to be gone.
    await this.master.assertNoneRunning();
    // Whatever an earlier run left in the directories would be loaded too (a
    // `crt` directory loads every file in it): the directories hold this render only.
    await this.#syncFiles(desired, await this.#readFiles());
    const info = await this.master.start();
    const worker = info.workers[0]!.pid;
    this.#log(`started HAProxy master ${info.masterPid}, worker ${worker}`);
    return { state: { files: desired, masterPid: info.masterPid }, reloadId: String(worker) };
  }

  /** The files under the work directory as a render: what a running HAProxy serves. */
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
      config: await readFile(this.master.configFile, 'utf8').catch(() => ''),
      maps: await group(this.#dirs.mapsDir),
      certificates: await group(this.#dirs.certificatesDir),
      files: await group(this.#dirs.generalDir),
    };
  }

  /** Writes `target` and removes the files only `previous` had; nothing when they are the same (a revert to files that never changed). */
  async #syncFiles(target: RenderedFiles, previous: RenderedFiles): Promise<void> {
    if (sameFiles(target, previous)) return;
    await writeRenderedFiles(this.#workDir, target, this.#dirs);
    const keep = renderedFilePaths(this.#workDir, target, this.#dirs);
    for (const path of renderedFilePaths(this.#workDir, previous, this.#dirs).keys()) {
      if (!keep.has(path)) await rm(path, { force: true });
    }
  }
}
