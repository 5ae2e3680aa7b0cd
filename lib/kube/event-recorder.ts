import { randomBytes } from 'node:crypto';
import { EventsV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import { EventSeries, type EventSeriesOptions } from './event-series.ts';
import { KubeRequestError, kubeRequest } from './kube-request.ts';
import { objectPath } from './resource-path.ts';

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

export interface EventRecorderOptions {
  readonly controller: string;
  /** This replica's identity (its pod name). */
  readonly instance: string;
  readonly series?: EventSeriesOptions;
  readonly now?: () => number;
}

/**
 * Where Events about cluster-scoped objects live: the API server refuses
 * them anywhere but `default` and `kube-system` with a 422
 * (kubernetes/kubernetes pkg/apis/core/validation/events.go,
 * legacyValidateEvent).
 */
const CLUSTER_SCOPED_EVENTS_NAMESPACE = 'default';

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
 * and each object has a write budget (see EventSeries). An Event the API
 * server no longer has when its series is bumped (expired after the
 * server's --event-ttl, 1 h by default, or deleted) is created again, series
 * and all, as client-go's event recorder does.
 */
export class EventRecorder {
  readonly #kubeConfig: KubeConfig;
  readonly #api: EventsV1Api;
  readonly #options: EventRecorderOptions;
  readonly #series: EventSeries;

  constructor(kubeConfig: KubeConfig, options: EventRecorderOptions) {
    this.#kubeConfig = kubeConfig;
    this.#api = kubeConfig.makeApiClient(EventsV1Api);
    this.#options = options;
    this.#series = new EventSeries(options.series);
  }

  /** Occurrences not written because of throttling or rate limits. */
  get skipped(): number {
    return this.#series.skipped;
  }

  /** Resolves once written (or skipped); API errors reject. */
  async record(event: EventRecord): Promise<'created' | 'updated' | 'skipped'> {
    const { regarding } = event;
    const namespace = regarding.namespace ?? CLUSTER_SCOPED_EVENTS_NAMESPACE;
    const now = (this.#options.now ?? Date.now)();
    const objectKey = `${regarding.kind}/${regarding.namespace ?? ''}/${regarding.name}`;
    const note = truncated(event.note);
    const eventKey = `${event.type}/${event.reason}/${note}`;
    const decision = this.#series.decide(objectKey, eventKey, now);
    if (decision.action === 'skip') return 'skipped';
    const write = { ...event, note, namespace, now };
    if (decision.action === 'create') {
      let name: string | undefined;
      try {
        name = await this.#create(write, undefined);
      } finally {
        this.#series.created(objectKey, eventKey, name);
      }
      return 'created';
    }
    const series = { count: decision.count, lastObservedTime: new V1MicroTime(now) };
    try {
      await kubeRequest(this.#kubeConfig, {
        method: 'PATCH',
        path: objectPath('events.k8s.io/v1', 'events', namespace, decision.name),
        body: { series: { ...series, lastObservedTime: series.lastObservedTime.toISOString() } },
      });
      return 'updated';
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 404)) throw error;
    }
    this.#series.created(objectKey, eventKey, await this.#create(write, series));
    return 'created';
  }

  /** Creates the Event under a new name and returns that name. */
  async #create(
    event: EventRecord & { readonly namespace: string; readonly now: number },
    series: { readonly count: number; readonly lastObservedTime: V1MicroTime } | undefined,
  ): Promise<string> {
    const { regarding, namespace } = event;
    const name = `${regarding.name}.${randomBytes(8).toString('hex')}`;
    await this.#api.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name, namespace },
        // MicroTime: the API server takes exactly six fractional digits, which a Date would not give.
        eventTime: new V1MicroTime(event.now),
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
