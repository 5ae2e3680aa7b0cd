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
 * Kept as a record (key to RFC 3339 time) the caller stores, with a journal
 * of what changed since (first-seen-store.ts), so a restart keeps the order. The record follows one reader at a time (a manifest
 * index), which tells it what goes; a reader that takes over from another,
 * or from a stored record, tells it everything it holds once (`keepOnly`).
 */
export class FirstSeen {
  #at: Map<string, string>;
  #reader: object | undefined;
  #changed = false;
  /** What changed since the journal was last taken, a line each (see journal()). */
  #journal: string[] = [];

  constructor(record: Readonly<Record<string, string>> = {}) {
    this.#at = new Map(Object.entries(record).filter(([, at]) => !Number.isNaN(Date.parse(at))));
  }

  /**
   * Reads a stored record, then the journal of what changed since it was
   * stored; anything that is not a record counts as empty (the order starts
   * again from now), a journal line that is not one is passed over.
   */
  static parse(text: string | undefined, journal = ''): FirstSeen {
    const seen = new FirstSeen(readRecord(text));
    for (const line of journal.split('\n')) {
      const entry = readJournalLine(line);
      if (entry === undefined) continue;
      if (entry.at === undefined) seen.#at.delete(entry.key);
      else seen.#at.set(entry.key, entry.at);
    }
    return seen;
  }

  /** How many objects the record holds. */
  get size(): number {
    return this.#at.size;
  }

  /**
   * What changed since the last call, as lines to append to a journal that
   * parse() replays over the record stored before them: a JSON array of the
   * key and its time for an object first seen, of the key alone for one
   * forgotten. Replayed again over a record stored after them, they change
   * nothing, so a record stored and a journal not yet emptied still agree.
   */
  journal(): string {
    const lines = this.#journal.map((line) => `${line}\n`).join('');
    this.#journal = [];
    return lines;
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
      this.#journal.push(JSON.stringify([key, at]));
    }
    return { ...object, metadata: { ...object.metadata, creationTimestamp: at } };
  }

  /** Forgets an object that went: seen again, it is new. */
  forget(key: string): void {
    if (!this.#at.delete(key)) return;
    this.#changed = true;
    this.#journal.push(JSON.stringify([key]));
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

function readRecord(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}

function readJournalLine(line: string): { readonly key: string; readonly at: string | undefined } | undefined {
  if (line === '') return undefined;
  try {
    const entry: unknown = JSON.parse(line);
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') return undefined;
    if (entry.length === 1) return { key: entry[0], at: undefined };
    return entry.length === 2 && typeof entry[1] === 'string' && !Number.isNaN(Date.parse(entry[1])) ? { key: entry[0], at: entry[1] } : undefined;
  } catch {
    return undefined;
  }
}
