import { backoffDelay } from '../backoff.ts';
import { systemClock, type Clock } from '../clock.ts';
import { errorMessage } from '../error-message.ts';
import type { ChangeType, KubeObject } from '../pipeline/model.ts';
import { objectKey } from '../pipeline/object-key.ts';
import type { KubeConnection } from './kube-connection.ts';
import { KubeRequestError, WatchIdleError, kubeRequest, kubeWatch, type WatchLine } from './kube-request.ts';
import { normaliseObject } from './normalise.ts';
import { collectionPath } from './resource-path.ts';

/** What one informer watches: a resource collection, optionally narrowed by namespace and selectors. */
export interface InformerSpec {
  readonly apiVersion: string;
  /** The kind of the objects; when absent it is taken from the LIST response. */
  readonly kind: string | undefined;
  /** Plural resource name (`ingresses`). */
  readonly resource: string;
  readonly namespace?: string | undefined;
  /** Applied by the API server. */
  readonly labelSelector?: string | undefined;
  /** Applied by the API server (only fields it can select on, such as metadata.name). */
  readonly fieldSelector?: string | undefined;
  /**
   * Applied to every object before the informer delivers it, as client-go's
   * SetTransform: what it drops (managedFields, by the shipped configuration)
   * is then held nowhere.
   */
  readonly transform?: ((object: KubeObject) => KubeObject) | undefined;
}

export interface InformerHandlers {
  /** Objects arrive normalised; an event never repeats a resourceVersion already delivered. */
  readonly event: (type: ChangeType, object: KubeObject) => void;
  /** Once, when the first LIST has been delivered. */
  readonly synced: () => void;
  /** The informer stopped on an error (or went silent) and starts again after `delayMs`. */
  readonly restarting: (reason: string, delayMs: number) => void;
}

export interface InformerOptions {
  /** Backoff for restarts after errors. */
  readonly restartBaseMs: number;
  readonly restartMaxMs: number;
  /**
   * A watch that shows no sign of life for this long is replaced by a fresh
   * LIST and WATCH. Signs of life: an event, a bookmark, a LIST page, or a
   * watch the server ended by itself at the timeout it was asked for.
   */
  readonly watchdogMs: number;
  /**
   * What the watchdog, the restart backoff, the watch idle abort
   * (`watchIdleMs`) and the 1 to 30 s pause before reopening a watch that
   * brought nothing are measured on; real time by default. Specs give the
   * clock of the API server they talk to.
   */
  readonly clock?: Clock;
  readonly random?: () => number;
  /** Objects per LIST page. */
  readonly pageSize?: number;
}

/** client-go's page size. */
const LIST_PAGE_SIZE = 500;

export const defaultInformerOptions: InformerOptions = {
  restartBaseMs: 1_000,
  restartMaxMs: 30_000,
  watchdogMs: 5 * 60_000,
};

/**
 * How long a watch may bring nothing before the informer cuts it and opens
 * another from the same resourceVersion (client-node's Watch, 2.0.1
 * watch.js, which the informer used before: 30 s).
 */
export const watchIdleMs = 30_000;

/**
 * How long the server is asked to keep each watch open (timeoutSeconds).
 * A watch that received nothing for 30 s is cut, while a real API server
 * sends a watch its first bookmark only a minute after it opens
 * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/
 * cache_watcher.go, nextBookmarkTime): a quiet resource would be cut and
 * reopened forever without hearing a thing, and be taken for deaf. Asked to
 * end the watch sooner, the server sends a bookmark 2 s before the deadline
 * and then ends the watch itself, so a healthy quiet watch shows life every
 * 25 s, and only a hung one is cut by the idle abort.
 */
const WATCH_TIMEOUT_SECONDS = 25;

/**
 * The pause before reopening a watch that ended with nothing in it, doubled
 * each time up to the maximum, and none after an event or bookmark
 * (client-node 2.0.1 cache.js, ListWatch.BASE_RECONNECT_DELAY_MS and
 * MAX_RECONNECT_DELAY_MS): a server that ends every watch at once is not
 * asked again in a tight loop.
 */
const REOPEN_BASE_MS = 1_000;
const REOPEN_MAX_MS = 30_000;

/** The watch event types that carry an object the informer delivers; ERROR carries a Status, BOOKMARK only a resourceVersion. */
const objectPhases = new Set(['ADDED', 'MODIFIED', 'DELETED']);

function keyOf(object: KubeObject): string {
  return objectKey(object.metadata.namespace, object.metadata.name ?? '');
}

interface ListedPage {
  readonly kind?: string;
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items: KubeObject[];
}

/**
 * LIST, then WATCH from the list's resourceVersion, for good: a watch the
 * server ends is reopened where it stopped (after the reopen pause when it
 * brought nothing); a watch whose version is too old (410, as an ERROR event
 * or an answer) lists again; a watch idle for `watchIdleMs` is cut and
 * reopened. Any other error (a 5xx, a reset, a failed LIST) restarts it with
 * backoff (no sooner than a 429's Retry-After), resuming from its last
 * resourceVersion. A watch that shows no sign of life for `watchdogMs` (no
 * event, no bookmark, no watch the server ended by itself: it hangs, or
 * every reopen fails) is replaced by a fresh LIST and WATCH. After every
 * LIST, what it no longer holds is delivered as deleted, so nothing missed
 * while the watch was stuck stays missed.
 */
export class ResilientInformer {
  readonly #connection: KubeConnection;
  readonly #spec: InformerSpec;
  readonly #handlers: InformerHandlers;
  readonly #options: InformerOptions;
  readonly #path: string;
  /** resourceVersion of every object delivered and not deleted, by namespace/name. */
  readonly #delivered = new Map<string, string>();
  /** Where the watch resumes; empty: list first. */
  #resourceVersion = '';
  /** Which list-and-watch loop is current: one replaced (by the watchdog, by stop) ends at its next step. */
  #run = 0;
  #abort: AbortController | undefined;
  #kind: string | undefined;
  #stopped = false;
  #synced = false;
  #failures = 0;
  readonly #clock: Clock;
  #lastSeen: number;
  /** Cancels the pending restart. */
  #cancelRestart: (() => void) | undefined;
  /** Cancels the next look of the watchdog. */
  #cancelWatchdog: (() => void) | undefined;

  constructor(connection: KubeConnection, spec: InformerSpec, handlers: InformerHandlers, options: InformerOptions = defaultInformerOptions) {
    this.#connection = connection;
    this.#spec = spec;
    this.#handlers = handlers;
    this.#options = options;
    this.#kind = spec.kind;
    this.#path = collectionPath(spec.apiVersion, spec.resource, spec.namespace);
    this.#clock = options.clock ?? systemClock;
    this.#lastSeen = this.#clock.now();
  }

  /** Starts listing and watching; `synced` tells when the first LIST is in. */
  start(): void {
    this.#stopped = false;
    this.#connect();
    this.#lookLater();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#run += 1;
    this.#cancelRestart?.();
    this.#cancelWatchdog?.();
    this.#abort?.abort();
    this.#abort = undefined;
  }

  /** A fresh LIST and WATCH, replacing whatever ran before. */
  #connect(): void {
    this.#cancelRestart?.();
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    this.#resourceVersion = '';
    const run = ++this.#run;
    void this.#loop(run, abort.signal);
  }

  #current(run: number): boolean {
    return run === this.#run && !this.#stopped;
  }

  /** Lists when there is no version to resume from, then watches, until an error it cannot handle itself. */
  async #loop(run: number, signal: AbortSignal): Promise<void> {
    let reopenMs = 0;
    let watched = false;
    try {
      for (;;) {
        if (this.#resourceVersion === '') {
          const items = await this.#list(signal);
          if (!this.#current(run)) return;
          this.#listed(items);
        }
        if (watched && reopenMs > 0) await this.#clock.sleep(reopenMs, signal);
        if (watched) reopenMs = Math.min(reopenMs > 0 ? reopenMs * 2 : REOPEN_BASE_MS, REOPEN_MAX_MS);
        watched = true;
        if (!this.#current(run)) return;
        try {
          await kubeWatch(
            this.#connection,
            this.#path,
            {
              resourceVersion: this.#resourceVersion,
              labelSelector: this.#spec.labelSelector,
              fieldSelector: this.#spec.fieldSelector,
              // Bookmarks keep a quiet resource's version fresh, so a reconnect rarely needs a relist.
              allowWatchBookmarks: 'true',
              timeoutSeconds: String(WATCH_TIMEOUT_SECONDS),
            },
            this.#clock.realMs(watchIdleMs),
            (line) => {
              if (this.#current(run) && this.#watched(line)) reopenMs = 0;
            },
            signal,
          );
          // The server ended the watch by itself: a sign of life.
          if (this.#current(run)) this.#seen();
        } catch (error) {
          if (!this.#current(run)) return;
          if (error instanceof KubeRequestError && error.status === 410) this.#resourceVersion = '';
          // The idle abort is throttle enough: reopen at once.
          else if (error instanceof WatchIdleError) reopenMs = 0;
          else throw error;
        }
        if (!this.#current(run)) return;
      }
    } catch (error) {
      if (this.#current(run)) this.#failed(run, error);
    }
  }

  /**
   * The LIST, in pages as client-go reads it: a 10k-object collection in one
   * response is one string of tens of megabytes, and three of them at start
   * would set the controller's peak memory. Pages of one LIST are a
   * consistent snapshot; the last page's resourceVersion is the one to watch from.
   */
  async #list(signal: AbortSignal): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    let page: ListedPage;
    do {
      page = (await kubeRequest(this.#connection, {
        method: 'GET',
        path: this.#path,
        query: {
          labelSelector: this.#spec.labelSelector,
          fieldSelector: this.#spec.fieldSelector,
          limit: String(this.#options.pageSize ?? LIST_PAGE_SIZE),
          continue: continueToken,
        },
        signal,
      })) as ListedPage;
      this.#kind ??= typeof page.kind === 'string' ? page.kind.replace(/List$/, '') : undefined;
      for (const item of page.items ?? []) items.push(this.#normalise(item));
      this.#seen();
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken !== undefined);
    return { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
  }

  /** A LIST is in: what it no longer holds was deleted meanwhile, the rest added or modified; the watch resumes from its version. */
  #listed(list: { items: KubeObject[]; resourceVersion: string }): void {
    // After a first LIST nothing was delivered before: no set of every key to build and drop.
    if (this.#delivered.size > 0) {
      const listed = new Set(list.items.map(keyOf));
      for (const key of [...this.#delivered.keys()]) {
        if (listed.has(key)) continue;
        const slash = key.indexOf('/');
        const namespace = key.slice(0, slash);
        this.#deliver('deleted', {
          apiVersion: this.#spec.apiVersion,
          kind: this.#kind,
          metadata: { name: key.slice(slash + 1), ...(namespace === '' ? {} : { namespace }) },
        } as KubeObject);
      }
    }
    for (const item of list.items) this.#deliver('added', item);
    this.#resourceVersion = list.resourceVersion;
    this.#failures = 0;
    if (!this.#synced) {
      this.#synced = true;
      this.#handlers.synced();
    }
  }

  /** One line of the watch; true when it moved the resourceVersion on (an event or a bookmark). */
  #watched(line: WatchLine): boolean {
    this.#seen();
    const object = line.object as KubeObject | undefined;
    if (line.type === 'ERROR') {
      // Too old a version: the server ends this watch next, and the informer lists again.
      if ((object as { code?: unknown } | undefined)?.code === 410) this.#resourceVersion = '';
      return false;
    }
    if (objectPhases.has(line.type) && object !== undefined) {
      const normalised = this.#normalise(object);
      this.#deliver(line.type === 'DELETED' ? 'deleted' : 'modified', normalised);
    }
    this.#failures = 0;
    this.#resourceVersion = object?.metadata?.resourceVersion ?? '';
    return true;
  }

  #normalise = (object: KubeObject): KubeObject => {
    const normalised = normaliseObject(object, this.#spec.apiVersion, this.#kind);
    return this.#spec.transform?.(normalised) ?? normalised;
  };

  #seen = (): void => {
    this.#lastSeen = this.#clock.now();
  };

  /** Delivers a change once: a version already delivered is not again, and `added` or `modified` follows what was delivered before. */
  #deliver(type: ChangeType, object: KubeObject): void {
    const key = keyOf(object);
    const version = object.metadata.resourceVersion ?? '';
    if (type === 'deleted') {
      if (!this.#delivered.delete(key)) return;
    } else {
      const known = this.#delivered.get(key);
      if (known !== undefined && known === version) return;
      this.#delivered.set(key, version);
      type = known === undefined ? 'added' : 'modified';
    }
    this.#handlers.event(type, object);
  }

  #failed(run: number, error: unknown): void {
    this.#failures += 1;
    const backoff = backoffDelay(this.#failures, { baseDelayMs: this.#options.restartBaseMs, maxDelayMs: this.#options.restartMaxMs }, this.#options.random ?? Math.random);
    // An API server shedding load (429, 503) says when to come back; coming back sooner only adds to its load.
    const retryAfterMs = error instanceof KubeRequestError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0;
    const delayMs = Math.max(backoff, retryAfterMs);
    this.#handlers.restarting(`${this.#path}: ${errorMessage(error)}`, delayMs);
    this.#cancelRestart?.();
    this.#cancelRestart = this.#clock.after(delayMs, () => {
      // The restart keeps the resourceVersion: it resumes the watch, or lists if it had none.
      if (this.#current(run) && this.#abort !== undefined) void this.#loop(run, this.#abort.signal);
    });
  }

  /** The watchdog looks four times per `watchdogMs`. */
  #lookLater(): void {
    this.#cancelWatchdog = this.#clock.after(Math.max(10, this.#options.watchdogMs / 4), () => {
      this.#checkActivity();
      if (!this.#stopped) this.#lookLater();
    });
  }

  #checkActivity(): void {
    if (this.#stopped || this.#clock.now() - this.#lastSeen < this.#options.watchdogMs) return;
    this.#seen();
    this.#handlers.restarting(`${this.#path}: nothing received for ${this.#options.watchdogMs} ms (no event, no bookmark, no watch ended by the server); listing again`, 0);
    this.#connect();
  }
}
