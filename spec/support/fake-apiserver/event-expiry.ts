/**
 * Events expire, as on a real server: each Event is stored with a TTL of
 * --event-ttl (1 h by default, kubernetes/kubernetes
 * pkg/controlplane/apiserver/options/options.go EventTTL), renewed by every write (the
 * Event storage's TTLFunc, pkg/registry/core/event/storage/storage.go,
 * returns that TTL on create and update alike, whatever the old one was).
 * An expired Event is gone as if deleted: watchers see DELETED, a GET or
 * PATCH answers 404. Core v1 and events.k8s.io/v1 Events both expire.
 */
import { metadataOf, stringField } from './object-meta.ts';
import type { Registry } from './registry.ts';
import type { ResourceType } from './resource-types.ts';

const isEvent = (type: ResourceType) => type.plural === 'events' && type.kind === 'Event';

export class EventExpiry {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #unsubscribe: () => void;

  /** `ttlMs` of fake time, `timeScale` of which pass per real millisecond. */
  constructor(registry: Registry, ttlMs: number, timeScale: number) {
    this.#unsubscribe = registry.store.subscribe((change) => {
      if (!isEvent(change.type)) return;
      const metadata = metadataOf(change.object);
      const namespace = stringField(metadata, 'namespace');
      const name = stringField(metadata, 'name');
      const key = `${change.type.key}/${namespace}/${name}`;
      clearTimeout(this.#timers.get(key));
      this.#timers.delete(key);
      if (change.change === 'DELETED') return;
      const timer = setTimeout(() => {
        this.#timers.delete(key);
        registry.delete(change.type, namespace, name);
      }, ttlMs / timeScale);
      this.#timers.set(key, timer);
    });
  }

  close(): void {
    this.#unsubscribe();
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
