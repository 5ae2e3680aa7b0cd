/**
 * DPAPI's reload agent (§2, haproxy/reload_agent.go): writes ask for a
 * reload and get a Reload-ID `YYYY-MM-DD-<n>`; the pending id is reused by
 * every write until it fires (coalescing), `reloadDelayMs` after the first
 * one asked. A successful reload makes the loaded file the last-known-good
 * (`haproxy.cfg.lkg`); a failed one copies the last-known-good back over
 * the config file and is kept with HAProxy's messages.
 *
 * Deviation, on purpose: DPAPI ticks every reload_delay seconds (default 5)
 * whether or not a write came; here the timer starts with the first write,
 * so a reload fires exactly reloadDelayMs after it.
 */
import type { ReloadOutcome } from './haproxy-process.ts';

export interface Reload {
  /** Missing for a pending reload asked for while none runs (see get()). */
  readonly id?: string;
  readonly status: 'failed' | 'in_progress' | 'succeeded';
  readonly response?: string;
  readonly reload_timestamp?: number;
}

/** force_reload's failure: the handler answers 400 with this message (§2). */
export class ReloadFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReloadFailedError';
  }
}

/** The config file's last-known-good copy (`<config>.lkg`), kept by the config store. */
export interface LastKnownGood {
  readonly lkgFile: string;
  /** DPAPI's start: the current file becomes the last-known-good. */
  initialise(): Promise<void>;
  /** Snapshots what a reload is about to load; the function returned makes it the last-known-good. */
  capture(): Promise<() => Promise<void>>;
  /** Copies the last-known-good back over the config file. */
  restore(): Promise<void>;
}

export interface ReloadAgentOptions {
  readonly delayMs: number;
  readonly files: LastKnownGood;
  /** Reloads HAProxy on the files as they are and reports how it went. */
  readonly execute: () => Promise<ReloadOutcome>;
}

export class ReloadAgent {
  readonly #delayMs: number;
  readonly #files: LastKnownGood;
  readonly #execute: () => Promise<ReloadOutcome>;
  #index = 0;
  #next: string | undefined;
  #current: string | undefined;
  #failed = new Map<string, Reload>();
  #lastSuccess: Reload | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Reloads run one at a time: the scheduled one, force_reload, restartEmpty. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ReloadAgentOptions) {
    this.#delayMs = options.delayMs;
    this.#files = options.files;
    this.#execute = options.execute;
  }

  get lkgFile(): string {
    return this.#files.lkgFile;
  }

  /** The id the next write would share, if one is pending. */
  get pending(): string | undefined {
    return this.#next;
  }

  /** Forgets every reload and restarts ids at `<date>-0` (DPAPI restarted); the running file becomes last-known-good. */
  async reset(): Promise<void> {
    this.#clearTimer();
    this.#index = 0;
    this.#next = undefined;
    this.#current = undefined;
    this.#failed = new Map();
    this.#lastSuccess = undefined;
    // DPAPI's Init: "create last known good file, assume it is valid when starting".
    await this.#files.initialise();
  }

  /** Reload() of DPAPI: the pending id, created (and its timer started) when none is pending. */
  schedule(): string {
    if (this.#next === undefined) {
      this.#next = this.#newId();
      this.#arm();
    }
    return this.#next;
  }

  /**
   * force_reload: the pending reload (or an anonymous one) runs now,
   * after any reload under way; rejects with ReloadFailedError when HAProxy
   * refused the files.
   */
  forceReload(): Promise<void> {
    return this.#serialize(async () => {
      const id = this.#next;
      this.#next = undefined;
      this.#clearTimer();
      const outcome = await this.#run(id);
      if (!outcome.ok) {
        throw new ReloadFailedError(`Reload failed: HAProxy did not load the configuration (show proc counted a failed reload), ${outcome.response}`);
      }
    });
  }

  /** Stops the timer; a pending reload never runs. */
  close(): void {
    this.#clearTimer();
    this.#next = undefined;
  }

  /** Resolves after the reload under way, if any. */
  async idle(): Promise<void> {
    await this.#queue;
  }

  /** GET /reloads (§2): failed reloads, the last success, the current and the pending one as in_progress. */
  list(): Reload[] {
    const reloads: Reload[] = [...this.#failed.values()];
    if (this.#lastSuccess !== undefined) reloads.push(this.#lastSuccess);
    if (this.#current !== undefined) reloads.push({ id: this.#current, status: 'in_progress' });
    if (this.#next !== undefined) reloads.push({ id: this.#next, status: 'in_progress' });
    return reloads;
  }

  /** GET /reloads/{id} (§2); undefined answers 404. An id older than the last success is reported succeeded. */
  get(id: string): Reload | undefined {
    if (id === this.#current) return { id, status: 'in_progress' };
    // DPAPI answers the pending one with the id of the reload under way, so none when none runs
    // (haproxy/reload_agent.go GetReload: `ID: ra.cache.current` for `ra.cache.next == id`, at v3.2.15 and v3.4.2).
    if (id === this.#next) return this.#current === undefined ? { status: 'in_progress' } : { id: this.#current, status: 'in_progress' };
    const failed = this.#failed.get(id);
    if (failed !== undefined) return failed;
    const success = this.#lastSuccess;
    if (success === undefined) return undefined;
    if (success.id === id) return success;
    const last = parseId(success.id ?? '');
    const asked = parseId(id);
    if (last === undefined || asked === undefined) return undefined;
    // DPAPI compares the dates, then (whatever the dates) the indexes.
    if (asked.date < last.date || last.index > asked.index) return { id, status: 'succeeded' };
    return undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#serialize(async () => {
        const id = this.#next;
        // force_reload took it meanwhile.
        if (id === undefined) return;
        this.#next = undefined;
        await this.#run(id);
      });
    }, this.#delayMs);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #run(id: string | undefined): Promise<ReloadOutcome> {
    this.#current = id;
    // What HAProxy is about to load: the last-known-good once it did.
    const keep = await this.#files.capture();
    let outcome: ReloadOutcome;
    try {
      outcome = await this.#execute();
    } catch (error) {
      outcome = { ok: false, response: (error as Error).message };
    }
    if (outcome.ok) await keep();
    else await this.#files.restore();
    const reload: Reload = {
      id: id ?? '',
      status: outcome.ok ? 'succeeded' : 'failed',
      response: outcome.response,
      reload_timestamp: Math.floor(Date.now() / 1000),
    };
    if (id !== undefined) {
      if (outcome.ok) this.#lastSuccess = reload;
      else this.#failed.set(id, reload);
    }
    this.#current = undefined;
    return outcome;
  }

  #newId(): string {
    const now = new Date();
    const date = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
    return `${date}-${this.#index++}`;
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

function parseId(id: string): { date: string; index: number } | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})-(\d+)$/.exec(id);
  return match ? { date: match[1]!, index: Number(match[2]) } : undefined;
}
