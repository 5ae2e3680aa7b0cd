import type { KubeObject, ResourceEvent } from './model.ts';
import { objectKey } from './object-key.ts';

/**
 * What a stream of resource events has said so far, as the events that say
 * it again: each object present now as added, then each kind listed. A
 * watch kept for the next controller configuration's pipeline replays it to
 * that pipeline, which builds its stores from the same objects (the same
 * instances, so caches keyed by object still hold) without listing again.
 */
export class EventReplay {
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #synced = new Set<string>();

  apply(event: ResourceEvent): void {
    if (event.type === 'synced') {
      this.#synced.add(event.kind);
      return;
    }
    let objects = this.#objects.get(event.kind);
    if (!objects) this.#objects.set(event.kind, (objects = new Map()));
    const key = objectKey(event.object.metadata.namespace, event.object.metadata.name);
    if (event.type === 'deleted') objects.delete(key);
    else objects.set(key, event.object);
  }

  /** Every object as added, kind by kind, each kind followed by its synced once it has listed. */
  events(): ResourceEvent[] {
    const kinds = new Set([...this.#objects.keys(), ...this.#synced]);
    return [...kinds].flatMap((kind): ResourceEvent[] => [
      ...[...(this.#objects.get(kind)?.values() ?? [])].map((object): ResourceEvent => ({ type: 'added', kind, object })),
      ...(this.#synced.has(kind) ? [{ type: 'synced', kind } as const] : []),
    ]);
  }
}
