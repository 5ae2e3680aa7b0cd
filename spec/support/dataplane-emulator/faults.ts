/**
 * What tests do to the emulator's HTTP side: a record of every request
 * received (for benchmarks: how many calls a deployment cost), and injected
 * faults (errors, slowness, silence) no real Data Plane API produces on
 * demand. Faults act before authentication and routing, like a broken proxy
 * or an overloaded process in front of the API, and have no side effect on
 * the configuration or HAProxy.
 */

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string, as sent (percent-encoded). */
  readonly path: string;
  /** The query string without `?` ('' when none). */
  readonly query: string;
  /** Date.now() when the request arrived. */
  readonly at: number;
}

export class RequestLog {
  readonly #entries: RecordedRequest[] = [];

  /** Requests received since the start or the last clear(), hung and failed ones included. */
  get count(): number {
    return this.#entries.length;
  }

  get entries(): readonly RecordedRequest[] {
    return [...this.#entries];
  }

  /** Requests with this method (any when undefined) whose path starts with `pathPrefix`. */
  matching(method: string | undefined, pathPrefix = ''): readonly RecordedRequest[] {
    return this.#entries.filter((entry) => (method === undefined || entry.method === method) && entry.path.startsWith(pathPrefix));
  }

  clear(): void {
    this.#entries.length = 0;
  }

  record(entry: RecordedRequest): void {
    this.#entries.push(entry);
  }
}

export type RequestFilter = (request: RecordedRequest) => boolean;

/** What the server does with one request before handling it. */
export type FaultDecision = { readonly kind: 'none'; readonly delayMs: number } | { readonly kind: 'hang' } | { readonly kind: 'fail'; readonly status: number; readonly delayMs: number };

export class Faults {
  #failures: { remaining: number; status: number; filter: RequestFilter | undefined }[] = [];
  #delayMs = 0;
  #hanging = false;
  readonly #onRelease: () => void;

  /** `onRelease` runs when hang(false) ends a hang, to drop the requests held so far. */
  constructor(onRelease: () => void = () => undefined) {
    this.#onRelease = onRelease;
  }

  /**
   * The next `count` requests (those `filter` accepts, all by default) are
   * answered `status` with `{"code":status,"message":"emulated fault ..."}`
   * and not handled. Calls queue up: the oldest unfinished one applies first.
   */
  failNext(count: number, status = 500, filter?: RequestFilter): void {
    if (!Number.isInteger(count) || count < 0) throw new Error(`failNext: count must be a non-negative integer, got ${count}`);
    if (count > 0) this.#failures.push({ remaining: count, status, filter });
  }

  /** Every request waits `ms` before it is handled (0 turns it off). Its side effects happen after the wait. */
  delayResponses(ms: number): void {
    if (!(ms >= 0)) throw new Error(`delayResponses: ms must be >= 0, got ${ms}`);
    this.#delayMs = ms;
  }

  /**
   * While on, requests are received, recorded and never answered, not even
   * closed: a client sees its own timeout. hang(false) resets the
   * connections held (the client sees a reset) and later requests are
   * served again.
   */
  hang(on: boolean): void {
    const wasHanging = this.#hanging;
    this.#hanging = on;
    if (wasHanging && !on) this.#onRelease();
  }

  get hanging(): boolean {
    return this.#hanging;
  }

  /** No fault any more (held connections are reset). */
  reset(): void {
    this.#failures = [];
    this.#delayMs = 0;
    this.hang(false);
  }

  decide(request: RecordedRequest): FaultDecision {
    if (this.#hanging) return { kind: 'hang' };
    const failure = this.#failures.find((entry) => entry.filter === undefined || entry.filter(request));
    if (failure !== undefined) {
      failure.remaining--;
      if (failure.remaining === 0) this.#failures = this.#failures.filter((entry) => entry !== failure);
      return { kind: 'fail', status: failure.status, delayMs: this.#delayMs };
    }
    return { kind: 'none', delayMs: this.#delayMs };
  }
}
