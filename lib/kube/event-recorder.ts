import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import { errorMessage } from '../error-message.ts';
import { EventSeries, seriesKey, type EventSeriesOptions } from './event-series.ts';
import type { KubeConnection } from './kube-connection.ts';
import { KubeRequestError, kubeRequest } from './kube-request.ts';
import { microTime } from './micro-time.ts';
import { collectionPath, objectPath } from './resource-path.ts';

/** The object an event is about. */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly uid?: string | undefined;
}

export interface EventRecord {
  readonly regarding: EventSubject;
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase, machine-readable (ConfigRejected, ObjectExcluded...). */
  readonly reason: string;
  /** What the controller was doing (Reconcile, Deploy...). */
  readonly action: string;
  readonly note: string;
}

/** How a count written when its throttle window ended went (nobody awaits that write). */
export type TrailingWrite = { readonly event: EventRecord; readonly result: 'updated' | 'created'; readonly count: number } | { readonly event: EventRecord; readonly error: string };

export interface EventRecorderOptions {
  readonly controller: string;
  /** This replica's identity (its pod name). */
  readonly instance: string;
  readonly series?: EventSeriesOptions;
  /** Event times and the throttle windows; real time by default. */
  readonly clock?: Clock;
  /** Whether writes may go out now (only the leader writes): a trailing write due while not is dropped. Default always. */
  readonly active?: () => boolean;
  /** Told of every trailing write: the repeats a throttle window held back, written when it ended. */
  readonly trailing?: (write: TrailingWrite) => void;
}

/** An Event as the recorder writes it: where it lives and when it happened. */
type Write = EventRecord & { readonly namespace: string; readonly now: number; readonly objectKey: string; readonly eventKey: string };

/**
 * Where Events about cluster-scoped objects live: the API server refuses
 * them anywhere but `default` and `kube-system` with a 422
 * (kubernetes/kubernetes pkg/apis/core/validation/events.go,
 * legacyValidateEvent).
 */
const CLUSTER_SCOPED_EVENTS_NAMESPACE = 'default';

const EVENTS = 'events.k8s.io/v1';

/** The API caps an event's note at 1 kB. */
const NOTE_LIMIT = 1024;

function truncated(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_LIMIT) return note;
  let cut = note.slice(0, NOTE_LIMIT - 3);
  while (Buffer.byteLength(cut) > NOTE_LIMIT - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

/**
 * Writes events.k8s.io/v1 Events: the first occurrence creates an Event, a
 * repeat bumps its `series` (count and last time) instead of adding another,
 * and each object has a write budget (see EventSeries). Repeats a throttle
 * window held back are written when it ends, whether or not another
 * occurrence comes. An Event the API server no longer has when its series
 * is bumped (expired after the server's --event-ttl, 1 h by default, or
 * deleted) is created again, series and all, as client-go's event recorder
 * does.
 */
export class EventRecorder {
  readonly #kubeConnection: KubeConnection;
  readonly #options: EventRecorderOptions;
  readonly #series: EventSeries;
  readonly #clock: Clock;
  /** Trailing writes waiting for their throttle window to end, by series, with how to cancel them. */
  readonly #pending = new Map<string, () => void>();

  constructor(kubeConnection: KubeConnection, options: EventRecorderOptions) {
    this.#kubeConnection = kubeConnection;
    this.#options = options;
    this.#series = new EventSeries(options.series);
    this.#clock = options.clock ?? systemClock;
  }

  /** Occurrences not written because of throttling or rate limits. */
  get skipped(): number {
    return this.#series.skipped;
  }

  /** Resolves once written (or skipped); API errors reject. */
  async record(event: EventRecord): Promise<'created' | 'updated' | 'skipped'> {
    const { regarding } = event;
    const now = this.#clock.now();
    const note = truncated(event.note);
    const write: Write = {
      ...event,
      note,
      namespace: regarding.namespace ?? CLUSTER_SCOPED_EVENTS_NAMESPACE,
      now,
      objectKey: `${regarding.kind}/${regarding.namespace ?? ''}/${regarding.name}`,
      eventKey: `${event.type}/${event.reason}/${note}`,
    };
    const decision = this.#series.decide(write.objectKey, write.eventKey, now);
    if (decision.action === 'skip') {
      if (decision.flushInMs !== undefined) this.#writeLater(write, decision.flushInMs);
      return 'skipped';
    }
    if (decision.action === 'create') {
      let name: string | undefined;
      try {
        name = await this.#create(write, undefined);
      } finally {
        this.#series.created(write.objectKey, write.eventKey, name);
      }
      return 'created';
    }
    return this.#update(write, decision.name, decision.count, now);
  }

  /** Drops the trailing writes not due yet (the controller stops). */
  close(): void {
    for (const cancel of this.#pending.values()) cancel();
    this.#pending.clear();
  }

  /** Bumps the series of Event `name`, creating it again when the API server no longer has it. */
  async #update(write: Write, name: string, count: number, observedAt: number): Promise<'created' | 'updated'> {
    const series = { count, lastObservedTime: microTime(observedAt) };
    try {
      await kubeRequest(this.#kubeConnection, {
        method: 'PATCH',
        path: objectPath(EVENTS, 'events', write.namespace, name),
        body: { series },
      });
      return 'updated';
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 404)) throw error;
    }
    this.#series.created(write.objectKey, write.eventKey, await this.#create(write, series));
    return 'created';
  }

  /** Writes the series' held-back count once its window ended, unless a write carried it meanwhile; one timer per series. */
  #writeLater(write: Write, inMs: number): void {
    const key = seriesKey(write.objectKey, write.eventKey);
    if (this.#pending.has(key)) return;
    this.#pending.set(
      key,
      this.#clock.after(inMs, () => {
        this.#pending.delete(key);
        void this.#flush(write);
      }),
    );
  }

  async #flush(write: Write): Promise<void> {
    if (!(this.#options.active?.() ?? true)) return;
    const decision = this.#series.flush(write.objectKey, write.eventKey, this.#clock.now());
    if (decision.action === 'later') return this.#writeLater(write, decision.inMs);
    if (decision.action !== 'update') return;
    const event: EventRecord = { regarding: write.regarding, type: write.type, reason: write.reason, action: write.action, note: write.note };
    try {
      const result = await this.#update(write, decision.name, decision.count, decision.lastObservedAt);
      this.#options.trailing?.({ event, result, count: decision.count });
    } catch (error) {
      this.#options.trailing?.({ event, error: errorMessage(error) });
    }
  }

  /** Creates the Event under a new name and returns that name. */
  async #create(event: Write, series: { readonly count: number; readonly lastObservedTime: string } | undefined): Promise<string> {
    const { regarding, namespace } = event;
    const name = `${regarding.name}.${randomBytes(8).toString('hex')}`;
    await kubeRequest(this.#kubeConnection, {
      method: 'POST',
      path: collectionPath(EVENTS, 'events', namespace),
      body: {
        apiVersion: EVENTS,
        kind: 'Event',
        metadata: { name, namespace },
        // MicroTime: the API server takes exactly six fractional digits, which a Date would not give.
        eventTime: microTime(event.now),
        reportingController: this.#options.controller,
        reportingInstance: this.#options.instance,
        action: event.action,
        reason: event.reason,
        type: event.type,
        note: event.note,
        regarding: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          namespace: regarding.namespace,
          name: regarding.name,
          uid: regarding.uid,
        },
        ...(series ? { series } : {}),
      },
    });
    return name;
  }
}
