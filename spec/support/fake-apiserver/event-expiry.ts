/**
 * Events expire, as on a real server: each Event is stored with a TTL of
 * --event-ttl (1 h by default, kubernetes/kubernetes
 * pkg/controlplane/apiserver/options/options.go EventTTL), renewed by every write (the
 * Event storage's TTLFunc, pkg/registry/core/event/storage/storage.go,
 * returns that TTL on create and update alike, whatever the old one was).
 * An expired Event is gone as if deleted: watchers see DELETED, a GET or
 * PATCH answers 404. Core v1 and events.k8s.io/v1 Events both expire.
 */
import type { Clock } from '../../../lib/clock.ts';
import { metadataOf, stringField } from './object-meta.ts';
import type { Registry } from './registry.ts';
import type { ResourceType } from './resource-types.ts';

const isEvent = (type: ResourceType) => type.plural === 'events' && type.kind === 'Event';

export class EventExpiry {
  readonly #timers = new Map<string, () => void>();
  readonly #unsubscribe: () => void;

  /** `ttlMs` of the server's clock. */
  constructor(registry: Registry, ttlMs: number, clock: Clock) {
    this.#unsubscribe = registry.store.subscribe((change) => {
      if (!isEvent(change.type)) return;
      const metadata = metadataOf(change.object);
      const namespace = stringField(metadata, 'namespace');
      const name = stringField(metadata, 'name');
      const key = `${change.type.key}/${namespace}/${name}`;
      this.#timers.get(key)?.();
      this.#timers.delete(key);
      if (change.change === 'DELETED') return;
      const cancel = clock.after(ttlMs, () => {
        this.#timers.delete(key);
        registry.delete(change.type, namespace, name);
      });
      this.#timers.set(key, cancel);
    });
  }

  close(): void {
    this.#unsubscribe();
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
  }
}
