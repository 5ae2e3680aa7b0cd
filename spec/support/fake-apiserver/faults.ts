/**
 * What tests do to the fake's HTTP side: a log of every request with the
 * status it got, and injected faults no real server produces on demand.
 * Request faults (failNext, throttleNext, delayLists) act after
 * authentication and before the handler, like an overloaded or broken
 * server, and have no side effect on stored objects. Watch faults act on
 * open streams through the WatchHub.
 */
import type { ResourceType } from './resource-types.ts';
import { serverError, tooManyRequests } from './status.ts';
import type { StatusError } from './status.ts';
import { typeMatches } from './watch-hub.ts';
import type { DropMode, WatchHub } from './watch-hub.ts';
import { Notifier } from '../notifier.ts';

/** What a resource request does, as Kubernetes' audit log names it. */
export type ResourceVerb = 'list' | 'watch' | 'get' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** Discovery, /version and health paths are 'discovery'; paths the server does not serve and methods they do not take, 'unknown'. */
export type Verb = ResourceVerb | 'discovery' | 'unknown';

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string, as sent. */
  readonly path: string;
  /** The query string without `?` ('' when none). */
  readonly query: string;
  readonly verb: Verb;
  /** The resource's plural, for resource requests. */
  readonly resource: string | undefined;
  /** The API group ('' for core), for resource requests. */
  readonly group: string | undefined;
  readonly namespace: string | undefined;
  readonly subresource: string | undefined;
  /** The HTTP status answered (200 for a watch that started streaming). */
  status: number;
  /** Date.now() when the request arrived. */
  readonly at: number;
}

/** Which requests a fault or a log query is about; every given field must match. */
export interface RequestFilter {
  readonly verb?: Verb;
  /** A plural (`ingresses`) or group-qualified plural (`events.events.k8s.io`). */
  readonly resource?: string;
}

function filterMatches(filter: RequestFilter, verb: Verb, type: ResourceType | undefined): boolean {
  if (filter.verb !== undefined && filter.verb !== verb) return false;
  if (filter.resource === undefined) return true;
  return type !== undefined && typeMatches(type, filter.resource);
}

export class RequestLog {
  readonly #entries: { readonly entry: RecordedRequest; readonly type: ResourceType | undefined }[] = [];
  readonly #changes = new Notifier();

  get entries(): readonly RecordedRequest[] {
    return this.#entries.map(({ entry }) => entry);
  }

  matching(filter: RequestFilter = {}): readonly RecordedRequest[] {
    return this.#entries.filter(({ entry, type }) => filterMatches(filter, entry.verb, type)).map(({ entry }) => entry);
  }

  clear(): void {
    this.#entries.length = 0;
  }

  record(entry: RecordedRequest, type: ResourceType | undefined): void {
    this.#entries.push({ entry, type });
    this.#changes.changed();
  }

  /** Resolves once `count` requests matching `filter` have been received, counting those before the call; rejects after `timeoutMs`. */
  until(filter: RequestFilter, count: number, timeoutMs = 10_000): Promise<readonly RecordedRequest[]> {
    return this.#changes.until(
      () => {
        const found = this.matching(filter);
        return found.length >= count ? found : undefined;
      },
      () => `${this.matching(filter).length} of ${count} ${JSON.stringify(filter)} requests`,
      timeoutMs,
    );
  }
}

interface PendingFailure {
  remaining: number;
  readonly filter: RequestFilter;
  readonly error: () => StatusError;
}

export interface FailOptions extends RequestFilter {
  /** Default 500. */
  readonly status?: number;
}

export interface ThrottleOptions extends RequestFilter {
  /** The Retry-After header and details.retryAfterSeconds. Default 1. */
  readonly retryAfterSeconds?: number;
}

export interface DropOptions {
  /** Only watches of this resource. Default: all. */
  readonly resource?: string;
  /** 'end' closes the stream cleanly (default), 'reset' cuts the connection. */
  readonly mode?: DropMode;
}

export type FaultDecision = { readonly kind: 'fail'; readonly error: StatusError } | { readonly kind: 'pass'; readonly delayMs: number };

export class Faults {
  readonly #hub: WatchHub;
  #failures: PendingFailure[] = [];
  #listDelays: { readonly ms: number; readonly resource: string | undefined }[] = [];

  constructor(hub: WatchHub) {
    this.#hub = hub;
  }

  /**
   * The next `count` requests the filter accepts (every resource request by
   * default) fail with `status` (a 5xx) and a Status body. Calls queue up:
   * the oldest unfinished one applies first.
   */
  failNext(count: number, options: FailOptions = {}): void {
    const status = options.status ?? 500;
    if (!Number.isInteger(status) || status < 500 || status > 599) throw new Error(`failNext: status must be a 5xx code, got ${status}`);
    this.#queue(count, options, () => serverError(status, `injected fault: this request was made to fail with ${status}`), 'failNext');
  }

  /** The next `count` requests the filter accepts get 429 TooManyRequests with Retry-After. */
  throttleNext(count: number, options: ThrottleOptions = {}): void {
    const seconds = options.retryAfterSeconds ?? 1;
    if (!Number.isInteger(seconds) || seconds < 0) throw new Error(`throttleNext: retryAfterSeconds must be a non-negative integer, got ${seconds}`);
    this.#queue(count, options, () => tooManyRequests(seconds), 'throttleNext');
  }

  #queue(count: number, filter: RequestFilter, error: () => StatusError, what: string): void {
    if (!Number.isInteger(count) || count < 0) throw new Error(`${what}: count must be a non-negative integer, got ${count}`);
    if (count > 0) this.#failures.push({ remaining: count, filter: { verb: filter.verb, resource: filter.resource }, error });
  }

  /** LIST requests (of `resource`, all by default) wait `ms` before they are answered; 0 removes the delay. */
  delayLists(ms: number, resource?: string): void {
    if (!(ms >= 0)) throw new Error(`delayLists: ms must be >= 0, got ${ms}`);
    this.#listDelays = this.#listDelays.filter((delay) => delay.resource !== resource);
    if (ms > 0) this.#listDelays.push({ ms, resource });
  }

  /** While on, open and new watches (of `resource`, all by default) keep their connection and send nothing; off sends what was held. */
  stallWatches(on: boolean, resource?: string): void {
    this.#hub.stall(on, resource);
  }

  /**
   * While on, watches (of `resource`, all by default) get no periodic
   * bookmarks, as from a server that does not send them: they are best
   * effort (allowWatchBookmarks is a request, not a promise).
   */
  withholdBookmarks(on: boolean, resource?: string): void {
    this.#hub.withholdBookmarks(on, resource);
  }

  /** Ends (or resets) every open watch, of `resource` only when given. Returns how many were dropped. */
  dropWatches(options: DropOptions = {}): number {
    return this.#hub.drop(options.resource, options.mode ?? 'end');
  }

  /** No pending failure, delay, stall or withheld bookmarks any more. */
  reset(): void {
    this.#failures = [];
    this.#listDelays = [];
    this.#hub.unstallAll();
  }

  /** What happens to a resource request (discovery is never faulted: it stands for kubectl's plumbing, not the API under test). */
  decide(verb: Verb, type: ResourceType | undefined): FaultDecision {
    const failure = this.#failures.find((pending) => filterMatches(pending.filter, verb, type));
    if (failure !== undefined) {
      failure.remaining--;
      if (failure.remaining === 0) this.#failures = this.#failures.filter((pending) => pending !== failure);
      return { kind: 'fail', error: failure.error() };
    }
    const delayMs = verb === 'list' && type !== undefined ? Math.max(0, ...this.#listDelays.filter((delay) => typeMatches(type, delay.resource)).map((delay) => delay.ms)) : 0;
    return { kind: 'pass', delayMs };
  }
}
