/**
 * One WATCH response, as the real server streams it: HTTP 200 with
 * chunked, newline-delimited `{"type","object"}` events in resourceVersion
 * order.
 *
 * - resourceVersion unset or "0" (or sendInitialEvents=true): synthetic
 *   ADDED events for every matching object first, then changes;
 *   otherwise the type's changes after that version are replayed from the
 *   history, then live ones follow.
 * - A version older than the history: one ERROR event carrying a 410
 *   Expired Status, then the stream ends (the real server does this since
 *   1.3; `expiredAs: 'status'` answers HTTP 410 instead, as old servers did).
 * - Selectors apply to each change: an object that stops matching arrives
 *   as DELETED (its previous state with the new resourceVersion), one that
 *   starts matching as ADDED, as the watch cache does.
 * - BOOKMARK events (kind, apiVersion and metadata.resourceVersion only)
 *   when allowWatchBookmarks=true, on the watch cache's schedule
 *   (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher:
 *   cache_watcher.go nextBookmarkTime, cacher.go defaultBookmarkFrequency):
 *   the first a minute after the watch opens, then a minute after each
 *   bookmark, or 2 s before the watch's deadline when that comes first, and
 *   none once that time has passed. The real server keeps watchers in
 *   one-second buckets, so its bookmarks come within a second of these
 *   times; the fake's come on them. Plus the `k8s.io/initial-events-end`
 *   bookmark after the initial events.
 * - The stream ends cleanly at its deadline: timeoutSeconds when given,
 *   else a random 30 to 60 minutes (k8s.io/apiserver GetTimeoutForWatch:
 *   --min-request-timeout, 1800 s, times 1 to 2).
 * - Every time above is the server's, on its clock (see index.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Clock } from '../../../lib/clock.ts';
import { clone } from './json-values.ts';
import { metadataOf } from './object-meta.ts';
import { inVersion, type Change, type ObjectStore } from './object-store.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';
import { expired, tooLargeResourceVersion } from './status.ts';
import type { Status, StatusError } from './status.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchRequest {
  readonly type: ResourceType;
  /** Only this namespace (a namespaced path); undefined for all. */
  readonly namespace: string | undefined;
  /** Namespace, label and field selector together. */
  readonly matches: (object: KubeObject) => boolean;
  /** '' when absent. */
  readonly resourceVersion: string;
  readonly allowBookmarks: boolean;
  readonly sendInitialEvents: boolean;
  readonly timeoutMs: number | undefined;
}

export interface WatchSettings {
  /** The server's clock. */
  readonly clock: Clock;
  readonly expiredAs: 'event' | 'status';
}

/** The watch cache's bookmark heartbeat. */
const BOOKMARK_FREQUENCY_MS = 60_000;
/** A bookmark goes out this long before a watch's deadline, so the client resumes from a fresh version. */
const PRE_TIMEOUT_BOOKMARK_MS = 2_000;
/** The default --min-request-timeout: a watch without timeoutSeconds lasts 1 to 2 times this. */
const MIN_REQUEST_TIMEOUT_MS = 1_800_000;

/** What a watch starts with: events to send first, or a failure to stream instead. */
type Start = { readonly kind: 'events'; readonly initial: readonly { type: WatchEventType; object: KubeObject }[] } | { readonly kind: 'error'; readonly error: StatusError };

export class WatchSession {
  readonly request: WatchRequest;
  readonly #store: ObjectStore;
  readonly #response: ServerResponse;
  readonly #settings: WatchSettings;
  #stalled: boolean;
  /** Lines held while stalled, sent in order when released. */
  readonly #held: string[] = [];
  #unsubscribe: (() => void) | undefined;
  readonly #timers = new Set<() => void>();
  /** The deadline passed while stalled: the end is held with the rest. */
  #endHeld = false;
  #closed = false;
  readonly #onClose: () => void;
  readonly #bookmarksWithheld: () => boolean;

  constructor(
    request: WatchRequest,
    store: ObjectStore,
    response: ServerResponse,
    settings: WatchSettings,
    faults: { readonly stalled: boolean; readonly bookmarksWithheld: () => boolean },
    onClose: () => void,
  ) {
    this.request = request;
    this.#bookmarksWithheld = faults.bookmarksWithheld;
    this.#store = store;
    this.#response = response;
    this.#settings = settings;
    this.#stalled = faults.stalled;
    this.#onClose = onClose;
  }

  /**
   * The start of the stream, decided before anything is written, so an
   * expired version can still become an HTTP 410 (`expiredAs: 'status'`);
   * throws that StatusError then.
   */
  plan(): Start {
    const { type, resourceVersion } = this.request;
    if (resourceVersion === '' || resourceVersion === '0' || this.request.sendInitialEvents) {
      const initial = this.#store
        .list(type, this.request.namespace)
        .filter(this.request.matches)
        .map((object) => ({ type: 'ADDED' as const, object: clone(object) }));
      return { kind: 'events', initial };
    }
    const from = Number(resourceVersion);
    if (from > this.#store.resourceVersion) return { kind: 'error', error: tooLargeResourceVersion(from, this.#store.resourceVersion) };
    const changes = this.#store.changesSince(type, from);
    if (changes === undefined) {
      const error = expired(`too old resource version: ${from} (${this.#store.oldestVersion(type)})`);
      if (this.#settings.expiredAs === 'status') throw error;
      return { kind: 'error', error };
    }
    return { kind: 'events', initial: changes.flatMap((change) => this.#eventFor(change)) };
  }

  /** Sends the headers and the start, then follows the store until closed. Runs synchronously, so no change falls between. */
  open(start: Start): void {
    this.#response.statusCode = 200;
    this.#response.setHeader('Content-Type', 'application/json');
    this.#response.setHeader('Cache-Control', 'no-cache, private');
    this.#response.flushHeaders();
    this.#response.on('close', () => this.#dispose());
    if (start.kind === 'error') {
      this.#send('ERROR', start.error.toStatus());
      this.end();
      return;
    }
    for (const event of start.initial) this.#send(event.type, event.object);
    if (this.request.sendInitialEvents && this.request.allowBookmarks) this.#sendBookmark({ 'k8s.io/initial-events-end': 'true' });
    this.#unsubscribe = this.#store.subscribe((change) => {
      if (change.type.storageKey !== this.request.type.storageKey) return;
      for (const event of this.#eventFor(change)) this.#send(event.type, event.object);
    });
    const timeoutMs = this.request.timeoutMs ?? MIN_REQUEST_TIMEOUT_MS * (1 + Math.random());
    const deadline = this.#now() + timeoutMs;
    this.#after(timeoutMs, () => (this.#stalled ? (this.#endHeld = true) : this.end()));
    if (this.request.allowBookmarks) this.#scheduleBookmark(deadline);
  }

  /** The server's time, in ms. */
  #now(): number {
    return this.#settings.clock.now();
  }

  /** Runs `action` after `ms` of the server's time. */
  #after(ms: number, action: () => void): void {
    const cancel = this.#settings.clock.after(ms, () => {
      this.#timers.delete(cancel);
      action();
    });
    this.#timers.add(cancel);
  }

  /** The next bookmark after `from`; none after the one before the deadline (a timer may fire a little early, so times are targets, not readings). */
  #scheduleBookmark(deadline: number, from = this.#now()): void {
    const preTimeout = deadline - PRE_TIMEOUT_BOOKMARK_MS;
    const next = Math.min(from + BOOKMARK_FREQUENCY_MS, preTimeout);
    if (next < from) return;
    this.#after(Math.max(0, next - this.#now()), () => {
      // A stalled connection sends nothing; the watch cache drops a bookmark it cannot deliver.
      if (!this.#stalled && !this.#bookmarksWithheld()) this.#sendBookmark();
      if (next < preTimeout) this.#scheduleBookmark(deadline, Math.max(next, this.#now()));
    });
  }

  /** How one stored change looks through this watch's selectors. */
  #eventFor(change: Change): { type: WatchEventType; object: KubeObject }[] {
    const now = change.change !== 'DELETED' && this.request.matches(change.object);
    const before = change.previous !== undefined && this.request.matches(change.previous);
    const served = (object: KubeObject) => inVersion(this.request.type, clone(object));
    if (change.change === 'DELETED') return before ? [{ type: 'DELETED', object: served(change.object) }] : [];
    if (now) return [{ type: before ? 'MODIFIED' : 'ADDED', object: served(change.object) }];
    if (!before) return [];
    const left = served(change.previous!);
    left.metadata = { ...metadataOf(left), resourceVersion: String(change.resourceVersion) };
    return [{ type: 'DELETED', object: left }];
  }

  #sendBookmark(annotations?: Record<string, string>): void {
    const { type } = this.request;
    const metadata = { resourceVersion: String(this.#store.resourceVersion), ...(annotations === undefined ? {} : { annotations }) };
    this.#send('BOOKMARK', { kind: type.kind, apiVersion: type.apiVersion, metadata });
  }

  #send(type: WatchEventType, object: KubeObject | Status): void {
    if (this.#closed) return;
    const line = `${JSON.stringify({ type, object })}\n`;
    if (this.#stalled) this.#held.push(line);
    else this.#response.write(line);
  }

  /** Stalled: the connection stays open and nothing is sent, not even its end; released, what was held goes out in order. */
  stall(on: boolean): void {
    this.#stalled = on;
    if (on || this.#closed) return;
    for (const line of this.#held.splice(0)) this.#response.write(line);
    if (this.#endHeld) this.end();
  }

  /** Ends the stream cleanly (the terminating chunk), as a server-side timeout does. */
  end(): void {
    if (this.#closed) return;
    this.#dispose();
    this.#response.end();
  }

  /** Cuts the connection mid-stream: the client sees a reset, not an end. */
  reset(): void {
    if (this.#closed) return;
    this.#dispose();
    this.#response.socket?.destroy();
  }

  #dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe?.();
    for (const cancel of this.#timers) cancel();
    this.#held.length = 0;
    this.#onClose();
  }
}
