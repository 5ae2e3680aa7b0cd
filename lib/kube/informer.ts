import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { backoffDelay } from '../backoff.ts';
import { systemClock, type Clock } from '../clock.ts';
import { errorMessage } from '../error-message.ts';
import type { ChangeType, KubeObject } from '../pipeline/model.ts';
import { KubeRequestError, kubeRequest } from './kube-request.ts';
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
   * Applied to every object before the informer keeps it, as client-go's
   * SetTransform: what it drops (managedFields, by the shipped configuration)
   * is then held nowhere, where the informer's cache would otherwise keep the
   * whole object beside the stores' copy without it.
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
   * What the watchdog, the restart backoff and client-node's own waits (its
   * watch idle abort, `clientNodeWatchIdleMs`, and its 1 to 30 s pause
   * before reopening a watch that brought nothing) are measured on; real
   * time by default. Specs give the clock of the API server they talk to.
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

/** How long client-node's Watch waits for data before it aborts a watch and reopens it (2.0.1, watch.js). */
export const clientNodeWatchIdleMs = 30_000;

/**
 * How long the server is asked to keep each watch open (timeoutSeconds).
 * client-node aborts a watch that received nothing for 30 s, while a real
 * API server sends a watch its first bookmark only a minute after it opens
 * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/
 * cache_watcher.go, nextBookmarkTime): a quiet resource would be cut and
 * reopened forever without hearing a thing, and be taken for deaf. Asked to
 * end the watch sooner, the server sends a bookmark 2 s before the deadline
 * and then ends the watch itself, so a healthy quiet watch shows life every
 * 25 s, and only a hung one is cut by the idle abort.
 */
const WATCH_TIMEOUT_SECONDS = 25;

/** The watch event types whose object the informer keeps (client-node 2.0.1 cache.js watchHandler); ERROR and BOOKMARK objects are read as they came. */
const objectPhases = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/**
 * The Watch client-node uses, asking for bookmarks and a server-side
 * timeout, and telling the informer of every sign of life: each line it
 * reads and each watch the server ends cleanly. A watch cut by client-node's
 * idle abort or by an error is no sign of life.
 */
class ObservedWatch extends Watch {
  readonly #seen: () => void;
  readonly #shape: (object: KubernetesObject) => KubernetesObject;
  /** `shape` makes each object of an event what the informer keeps (the LIST's items get the same). */
  constructor(kubeConfig: KubeConfig, seen: () => void, idleMs: number, shape: (object: KubernetesObject) => KubernetesObject) {
    super(kubeConfig);
    this.#seen = seen;
    this.#shape = shape;
    // The field client-node's watch() reads; its typings call it private.
    (this as unknown as { requestTimeoutMs: number }).requestTimeoutMs = idleMs;
  }
  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    // Bookmarks keep a quiet resource's version fresh, so a reconnect rarely needs a relist.
    const query = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
    const lines = (phase: string, object: unknown, raw: unknown) => {
      this.#seen();
      callback(phase, objectPhases.has(phase) ? this.#shape(object as KubernetesObject) : object, raw);
    };
    const ended = (error: unknown) => {
      if (error === null || error === undefined) this.#seen();
      done(error);
    };
    return super.watch(path, query, lines, ended);
  }
}

function keyOf(object: KubernetesObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

/**
 * A client-node informer that does not stay down. client-node relists on
 * 410 and reopens cleanly closed watches, but any other error (a 5xx, a
 * reset, a failed LIST) stops it for good; here such a stop restarts it with
 * backoff (no sooner than a 429's Retry-After), resuming from its last
 * resourceVersion. A watch that shows no sign of life for `watchdogMs` (no
 * event, no bookmark, no watch the server ended by itself: it hangs, or
 * every reopen fails) is replaced by a fresh LIST and WATCH, and what the
 * new LIST no longer holds is delivered as deleted, so nothing missed while
 * the watch was stuck stays missed.
 */
export class ResilientInformer {
  readonly #kubeConfig: KubeConfig;
  readonly #spec: InformerSpec;
  readonly #handlers: InformerHandlers;
  readonly #options: InformerOptions;
  readonly #path: string;
  /** resourceVersion of every object delivered and not deleted, by namespace/name. */
  readonly #delivered = new Map<string, string>();
  #current: ListWatch<KubernetesObject> | undefined;
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

  constructor(kubeConfig: KubeConfig, spec: InformerSpec, handlers: InformerHandlers, options: InformerOptions = defaultInformerOptions) {
    this.#kubeConfig = kubeConfig;
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
    void this.#connect();
    this.#lookLater();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelRestart?.();
    this.#cancelWatchdog?.();
    const current = this.#current;
    this.#current = undefined;
    await current?.stop();
  }

  /**
   * The LIST, in pages as client-go reads it: a 10k-object collection in one
   * response is one string of tens of megabytes, and three of them at start
   * would set the controller's peak memory. Pages of one LIST are a
   * consistent snapshot; the last page's resourceVersion is the one to watch from.
   */
  #list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
    const items: KubernetesObject[] = [];
    let continueToken: string | undefined;
    let page: KubernetesListObject<KubernetesObject> & { kind?: string };
    do {
      page = (await kubeRequest(this.#kubeConfig, {
        method: 'GET',
        path: this.#path,
        query: {
          labelSelector: this.#spec.labelSelector,
          fieldSelector: this.#spec.fieldSelector,
          limit: String(this.#options.pageSize ?? LIST_PAGE_SIZE),
          continue: continueToken,
        },
      })) as KubernetesListObject<KubernetesObject> & { kind?: string };
      this.#kind ??= typeof page.kind === 'string' ? page.kind.replace(/List$/, '') : undefined;
      for (const item of page.items) items.push(this.#normalise(item));
      this.#seen();
      // Raw JSON: the wire name, not client-node's `_continue`.
      continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    } while (continueToken !== undefined);
    return { ...page, items };
  };

  #normalise = (object: KubernetesObject): KubernetesObject => {
    const normalised = normaliseObject(object as KubeObject, this.#spec.apiVersion, this.#kind);
    return (this.#spec.transform?.(normalised) ?? normalised) as KubernetesObject;
  };

  #seen = (): void => {
    this.#lastSeen = this.#clock.now();
  };

  /** A fresh LIST and WATCH, replacing whatever ran before. */
  async #connect(): Promise<void> {
    const previous = this.#current;
    const clock = this.#clock;
    const informer = new ListWatch<KubernetesObject>(
      this.#path,
      new ObservedWatch(this.#kubeConfig, this.#seen, clock.realMs(clientNodeWatchIdleMs), this.#normalise),
      this.#list,
      false,
      this.#spec.labelSelector,
      this.#spec.fieldSelector,
      { delayFn: (ms: number) => clock.sleep(ms) },
    );
    this.#current = informer;
    const own = (deliver: (object: KubernetesObject) => void) => (object: KubernetesObject) => {
      if (this.#current === informer && !this.#stopped) deliver(object);
    };
    informer.on(
      'add',
      own((object) => this.#deliver('added', object)),
    );
    informer.on(
      'update',
      own((object) => this.#deliver('modified', object)),
    );
    informer.on(
      'delete',
      own((object) => this.#deliver('deleted', object)),
    );
    informer.on('error', (error: unknown) => {
      if (this.#current === informer && !this.#stopped) this.#failed(informer, error);
    });
    await previous?.stop();
    await informer.start();
    this.#started(informer);
  }

  /** After start() resolved: it also resolves after a failed LIST (reported through 'error'), so only a listed cache counts. */
  #started(informer: ListWatch<KubernetesObject>): void {
    if (this.#current !== informer || this.#stopped || informer.latestResourceVersion() === '') return;
    this.#failures = 0;
    this.#sweep(informer);
    if (!this.#synced) {
      this.#synced = true;
      this.#handlers.synced();
    }
  }

  #deliver(type: ChangeType, raw: KubernetesObject): void {
    const object = this.#normalise(raw) as KubeObject;
    const key = keyOf(object as KubernetesObject);
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

  /** After a fresh LIST: what was delivered before and is no longer there was deleted meanwhile. */
  #sweep(informer: ListWatch<KubernetesObject>): void {
    const listed = new Set(informer.list().map(keyOf));
    for (const key of [...this.#delivered.keys()]) {
      if (listed.has(key)) continue;
      const slash = key.indexOf('/');
      const namespace = key.slice(0, slash);
      this.#deliver('deleted', {
        apiVersion: this.#spec.apiVersion,
        kind: this.#kind,
        metadata: { name: key.slice(slash + 1), ...(namespace === '' ? {} : { namespace }) },
      } as KubernetesObject);
    }
  }

  #failed(informer: ListWatch<KubernetesObject>, error: unknown): void {
    this.#failures += 1;
    const backoff = backoffDelay(this.#failures, { baseDelayMs: this.#options.restartBaseMs, maxDelayMs: this.#options.restartMaxMs }, this.#options.random ?? Math.random);
    // An API server shedding load (429, 503) says when to come back; coming back sooner only adds to its load.
    const retryAfterMs = error instanceof KubeRequestError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0;
    const delayMs = Math.max(backoff, retryAfterMs);
    this.#handlers.restarting(`${this.#path}: ${errorMessage(error)}`, delayMs);
    this.#cancelRestart?.();
    this.#cancelRestart = this.#clock.after(delayMs, () => void this.#resume(informer));
  }

  /** The informer keeps its cache and resourceVersion: it resumes the watch, or relists if it had none. */
  async #resume(informer: ListWatch<KubernetesObject>): Promise<void> {
    if (this.#current !== informer || this.#stopped) return;
    await informer.start();
    this.#started(informer);
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
    void this.#connect();
  }
}
