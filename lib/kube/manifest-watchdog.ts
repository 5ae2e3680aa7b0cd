/** How one read of the manifest folder went: whether it found the folder changed since the last read applied, or why it failed. */
export type ReadResult = { readonly ok: true; readonly changed: boolean } | { readonly ok: false; readonly error: string };

/** What the manifest source tells its watchdog. */
export type WatchdogEvent =
  /** The source runs (a pipeline subscribed to it), or no longer does. */
  | { readonly type: 'started' }
  | { readonly type: 'stopped' }
  | { readonly type: 'watching' }
  | { readonly type: 'watchFailed'; readonly error: string }
  /** A periodic re-read found a change the watch never reported: the watch is set up anew. */
  | { readonly type: 'missed' }
  /** A read of the folder, asked for by the watch or by the periodic re-read (`cause`, when known). */
  | { readonly type: 'read'; readonly result: ReadResult; readonly cause?: 'watch' | 'reread' };

export interface ManifestWatchdogOptions {
  /** The folder, for messages. */
  readonly folder: string;
  /** A running source whose folder has not been read for this long is stuck (a read hanging on a dead mount). */
  readonly staleAfterMs: number;
  /** Milliseconds, Date.now by default. */
  readonly now?: () => number;
}

/**
 * Whether the manifest source can do its job, for /healthz: a watch that
 * failed and is not set up again yet, a folder that can no longer be read
 * (removed, unreadable), or reads that stopped happening are each a problem,
 * named with the folder, until the source recovers by itself. A folder not
 * there from the start is what readiness waits for (the initial sync).
 */
export class ManifestWatchdog {
  readonly #options: ManifestWatchdogOptions;
  readonly #now: () => number;
  #running = false;
  #watchFailure: string | undefined;
  #readFailure: string | undefined;
  /** A folder never read yet is one readiness waits for (the initial sync), not a liveness problem. */
  #everRead = false;
  #lastReadAt = 0;

  constructor(options: ManifestWatchdogOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  apply(event: WatchdogEvent): void {
    switch (event.type) {
      case 'started':
        this.#running = true;
        this.#everRead = false;
        this.#lastReadAt = this.#now();
        return;
      case 'stopped':
        this.#running = false;
        this.#watchFailure = undefined;
        this.#readFailure = undefined;
        return;
      case 'watching':
        this.#watchFailure = undefined;
        return;
      case 'watchFailed':
        this.#watchFailure = event.error;
        return;
      case 'missed':
        return;
      case 'read':
        this.#lastReadAt = this.#now();
        this.#readFailure = event.result.ok ? undefined : event.result.error;
        this.#everRead ||= event.result.ok;
        return;
    }
  }

  /** Why the source cannot follow its folder now, or undefined while it can. */
  problem(): string | undefined {
    if (!this.#running) return undefined;
    if (this.#readFailure !== undefined && this.#everRead) return `${this.#readFailure} (the last configuration keeps serving)`;
    if (this.#watchFailure !== undefined) return this.#watchFailure;
    const since = this.#now() - this.#lastReadAt;
    if (since > this.#options.staleAfterMs) return `manifests ${this.#options.folder} not read for ${Math.round(since / 1000)} s`;
    return undefined;
  }
}
