import type { KubeObject } from '../pipeline/model.ts';

/**
 * When local mode first saw each object that carries no creationTimestamp,
 * given to it as one, as an API server stamps an object it creates: a
 * manifest has no age of its own, and ownership of hosts goes to the oldest
 * claimant, so without it every object is as old as every other and the tie
 * goes to namespace/name order, letting a newcomer take a host. An object
 * with its own creationTimestamp keeps it. An object that goes is forgotten,
 * as a deleted one is; written back and read again, it is new.
 *
 * Kept as a record (key to RFC 3339 time) the caller stores, so a restart
 * keeps the order. The record follows one reader at a time (a manifest
 * index), which tells it what goes; a reader that takes over from another,
 * or from a stored record, tells it everything it holds once (`keepOnly`).
 */
export class FirstSeen {
  #at: Map<string, string>;
  #reader: object | undefined;
  #changed = false;

  constructor(record: Readonly<Record<string, string>> = {}) {
    this.#at = new Map(Object.entries(record).filter(([, at]) => !Number.isNaN(Date.parse(at))));
  }

  /** Reads a stored record; anything that is not one counts as empty (the order starts again from now). */
  static parse(text: string | undefined): FirstSeen {
    if (text === undefined) return new FirstSeen();
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return new FirstSeen();
      return new FirstSeen(Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string')));
    } catch {
      return new FirstSeen();
    }
  }

  /**
   * Makes `reader` the one the record follows, and says whether it already
   * was: then the record holds what that reader left it, and only what goes
   * from now on needs forgetting; else the reader tells it all it holds.
   */
  follow(reader: object): boolean {
    const already = this.#reader === reader;
    this.#reader = reader;
    return already;
  }

  /** The object as served: with the time it was first seen (`now` on first sight) when it has no creationTimestamp. */
  stamp(key: string, object: KubeObject, now: number): KubeObject {
    if (object.metadata['creationTimestamp'] !== undefined) return object;
    let at = this.#at.get(key);
    if (at === undefined) {
      at = new Date(now).toISOString();
      this.#at.set(key, at);
      this.#changed = true;
    }
    return { ...object, metadata: { ...object.metadata, creationTimestamp: at } };
  }

  /** Forgets an object that went: seen again, it is new. */
  forget(key: string): void {
    if (this.#at.delete(key)) this.#changed = true;
  }

  /** Forgets every object but these (all a reader that takes over holds without a creationTimestamp of its own). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.#at.keys()) if (!keys.has(key)) this.forget(key);
  }

  /** Ends a read: says whether the record changed since the last one (then `record()` is worth storing). */
  endRead(): boolean {
    const changed = this.#changed;
    this.#changed = false;
    return changed;
  }

  record(): Record<string, string> {
    return Object.fromEntries([...this.#at].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}
