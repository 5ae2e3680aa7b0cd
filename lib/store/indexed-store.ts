import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, StoreReader, WatchedType } from '../pipeline/model.ts';

interface StoredObject {
  readonly object: KubeObject;
  /** The object's encoded index prefixes, one per prefix length it is indexed under. */
  readonly prefixes: readonly string[];
}

/** Changes kept for changesSince(): enough for the changes between two renders under heavy churn. */
const maxLoggedChanges = 1024;

/**
 * Length-prefixing makes the concatenation of parts unambiguous whatever
 * characters the parts contain, so ['a:b', 'c'] and ['a', 'b:c'] never share
 * an index entry (a plain separator would need escaping to guarantee that).
 */
function encodePart(part: string): string {
  return `${part.length}:${part}`;
}

/**
 * Kubernetes names and namespaces cannot contain '/', so this is unique; a
 * cluster-scoped object's namespace is absent, and some clients send '' for
 * it, which must name the same object.
 */
function identityOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/**
 * The API server bumps resourceVersion on every change, so equal versions
 * mean equal objects (an informer resync redelivers unchanged objects);
 * without versions only the content can tell.
 */
function isSameVersion(stored: KubeObject, incoming: KubeObject): boolean {
  if (stored === incoming) return true;
  const storedVersion = stored.metadata.resourceVersion;
  const incomingVersion = incoming.metadata.resourceVersion;
  if (storedVersion !== undefined && incomingVersion !== undefined) return storedVersion === incomingVersion;
  return isDeepStrictEqual(stored, incoming);
}

/**
 * One watched type's objects with a composite prefix index. Every event
 * updates the index in place in O(k) for k key parts, so a busy cluster never
 * pays for a rebuild; lookups are a single Map access.
 */
export class IndexedStore implements StoreReader {
  readonly #indexBy: WatchedType['indexBy'];
  readonly #objects = new Map<string, StoredObject>();
  /** `#index[i]` maps an encoded prefix of i + 1 key parts to its objects, by identity. */
  readonly #index: Map<string, Map<string, KubeObject>>[];
  /** Templates call list() repeatedly within one render; rebuilt only after a change. */
  #listed: readonly KubeObject[] | undefined;
  /** lookup() results per index entry, dropped when that entry changes. */
  readonly #entryLists = new WeakMap<Map<string, KubeObject>, readonly KubeObject[]>();

  constructor(indexBy: WatchedType['indexBy']) {
    this.#indexBy = indexBy;
    this.#index = indexBy.map(() => new Map());
  }

  #version = 0;
  /** The last changes, oldest first: the version each made, and the object before and after. */
  readonly #log: { readonly version: number; readonly objects: readonly KubeObject[] }[] = [];

  get size(): number {
    return this.#objects.size;
  }

  get version(): number {
    return this.#version;
  }

  /**
   * Number of index entries over all prefix lengths. Empty entries are
   * removed, so this follows the distinct keys present, never past churn; it
   * is the index's memory footprint, worth exporting as a metric.
   */
  get indexEntryCount(): number {
    let count = 0;
    for (const entries of this.#index) count += entries.size;
    return count;
  }

  list(): readonly KubeObject[] {
    this.#listed ??= Object.freeze([...this.#objects.values()].map((stored) => stored.object));
    return this.#listed;
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects.get(identityOf(namespace, name))?.object;
  }

  lookup(...keys: string[]): readonly KubeObject[] {
    if (keys.length === 0) return this.list();
    const entry = this.#index[keys.length - 1]?.get(keys.map(encodePart).join(''));
    if (!entry) return [];
    // Renders look the same keys up again and again; the list is rebuilt only after its entry changed.
    let listed = this.#entryLists.get(entry);
    if (!listed) {
      listed = Object.freeze([...entry.values()]);
      this.#entryLists.set(entry, listed);
    }
    return listed;
  }

  /** Adds or replaces the object; false when the stored object is already this version. */
  upsert(object: KubeObject): boolean {
    const identity = identityOf(object.metadata.namespace, object.metadata.name);
    const stored = this.#objects.get(identity);
    if (stored && isSameVersion(stored.object, object)) return false;
    const prefixes = this.#prefixesOf(object);
    for (let level = 0; level < this.#index.length; level++) {
      const before = stored?.prefixes[level];
      const after = prefixes[level];
      if (before !== undefined && before !== after) this.#unindex(level, before, identity);
      if (after !== undefined) {
        const entry = this.#entry(level, after);
        entry.set(identity, object);
        this.#entryLists.delete(entry);
      }
    }
    this.#objects.set(identity, { object, prefixes });
    this.#listed = undefined;
    this.#logChange(stored ? [stored.object, object] : [object]);
    return true;
  }

  /** Removes the object with this namespace and name; false when none is stored. */
  delete(object: KubeObject): boolean {
    const identity = identityOf(object.metadata.namespace, object.metadata.name);
    const stored = this.#objects.get(identity);
    if (!stored) return false;
    stored.prefixes.forEach((prefix, level) => this.#unindex(level, prefix, identity));
    this.#objects.delete(identity);
    this.#listed = undefined;
    this.#logChange([stored.object]);
    return true;
  }

  changesSince(version: number): readonly KubeObject[] | undefined {
    if (version === this.#version) return [];
    const oldest = this.#log[0];
    // Versions before the log's first entry are too far back to tell what changed.
    if (oldest === undefined || version < oldest.version - 1 || version > this.#version) return undefined;
    return this.#log.filter((entry) => entry.version > version).flatMap((entry) => entry.objects);
  }

  #logChange(objects: readonly KubeObject[]): void {
    this.#version++;
    this.#log.push({ version: this.#version, objects });
    // Trimmed in batches: trimming one entry per change would shift the whole log every time.
    if (this.#log.length >= 2 * maxLoggedChanges) this.#log.splice(0, this.#log.length - maxLoggedChanges);
  }

  /** Stops at the first undefined part: a missing key cannot be matched, and later parts would be ambiguous. */
  #prefixesOf(object: KubeObject): string[] {
    const prefixes: string[] = [];
    let prefix = '';
    for (const extract of this.#indexBy) {
      const part = extract(object);
      if (part === undefined) break;
      prefix += encodePart(part);
      prefixes.push(prefix);
    }
    return prefixes;
  }

  #entry(level: number, prefix: string): Map<string, KubeObject> {
    const entries = this.#index[level]!;
    let entry = entries.get(prefix);
    if (!entry) {
      entry = new Map();
      entries.set(prefix, entry);
    }
    return entry;
  }

  #unindex(level: number, prefix: string, identity: string): void {
    const entries = this.#index[level]!;
    const entry = entries.get(prefix)!;
    entry.delete(identity);
    this.#entryLists.delete(entry);
    if (entry.size === 0) entries.delete(prefix);
  }
}
