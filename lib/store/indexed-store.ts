import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, StoreReader, WatchedType } from '../pipeline/model.ts';
import { membersOf, withMember, withoutMember, type OneOrSet } from '../collections/one-or-set.ts';
import { fitted } from '../collections/fitted.ts';

/**
 * One stored object's place, kept for as long as an object with its
 * namespace and name is stored: a change replaces the object in it, so the
 * index entries (sets of slots) only change when the keys do.
 */
interface Slot {
  object: KubeObject;
  /** The object's index key parts, up to the first one it lacks. */
  parts: readonly string[];
}

/** The objects whose index keys start with one sequence of parts, and the nodes one part longer. */
interface IndexNode {
  /** In the order they were filed; a node goes once it has none. */
  slots: OneOrSet<Slot>;
  children: Map<string, IndexNode> | undefined;
  /** lookup()'s answer for this node, kept until the node changes. */
  listed: readonly KubeObject[] | undefined;
}

/** Changes kept for changesSince(): enough for the changes between two renders under heavy churn. */
const maxLoggedChanges = 1024;

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
 * One watched type's objects with a composite prefix index: a tree with one
 * level per key part, so a lookup walks the parts it is given (no key string
 * to build) and parts can hold any characters without being confused. Every
 * event updates the tree in place in O(k) for k key parts, so a busy cluster
 * never pays for a rebuild.
 */
export class IndexedStore implements StoreReader {
  readonly #indexBy: WatchedType['indexBy'];
  /** Every slot, in the order objects were first stored. */
  readonly #slots = new Set<Slot>();
  /**
   * Slots by namespace, then name. A cluster-scoped object's namespace is
   * absent, and some clients send '' for it, which must name the same object.
   */
  readonly #byName = new Map<string, Map<string, Slot>>();
  /** Nodes for the first key part. */
  readonly #index = new Map<string, IndexNode>();
  #indexEntryCount = 0;
  /** Templates call list() repeatedly within one render; rebuilt only after a change. */
  #listed: readonly KubeObject[] | undefined;

  constructor(indexBy: WatchedType['indexBy']) {
    this.#indexBy = indexBy;
  }

  #version = 0;
  /** The last changes, oldest first: the version each made, and the object before and after. */
  readonly #log: { readonly version: number; readonly objects: readonly KubeObject[] }[] = [];

  get size(): number {
    return this.#slots.size;
  }

  get version(): number {
    return this.#version;
  }

  /**
   * Number of index entries (one per distinct key prefix present). Empty
   * entries are removed, so this follows the distinct keys present, never
   * past churn; it is the index's memory footprint, worth exporting as a metric.
   */
  get indexEntryCount(): number {
    return this.#indexEntryCount;
  }

  list(): readonly KubeObject[] {
    this.#listed ??= Object.freeze(Array.from(this.#slots, (slot) => slot.object));
    return this.#listed;
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#byName.get(namespace ?? '')?.get(name)?.object;
  }

  lookup(...keys: string[]): readonly KubeObject[] {
    if (keys.length === 0) return this.list();
    let node = this.#index.get(keys[0]!);
    for (let level = 1; level < keys.length && node; level++) node = node.children?.get(keys[level]!);
    if (!node) return [];
    // Renders look the same keys up again and again; the list is rebuilt only after its node changed.
    node.listed ??= Object.freeze(Array.from(membersOf(node.slots), (slot) => slot.object));
    return node.listed;
  }

  /** Adds or replaces the object; false when the stored object is already this version. */
  upsert(object: KubeObject): boolean {
    const namespace = object.metadata.namespace ?? '';
    let names = this.#byName.get(namespace);
    const slot = names?.get(object.metadata.name);
    if (slot && isSameVersion(slot.object, object)) return false;
    const parts = this.#partsOf(object);
    if (slot) {
      const before = slot.object;
      let same = 0;
      while (same < parts.length && same < slot.parts.length && parts[same] === slot.parts[same]) same++;
      // Most changes keep the keys: then the object is only replaced where it is filed.
      if (same < slot.parts.length) this.#unfile(slot, same);
      slot.object = object;
      slot.parts = parts;
      this.#file(slot, same);
      this.#changed([before, object]);
      return true;
    }
    if (!names) {
      names = new Map();
      this.#byName.set(namespace, names);
    }
    const created: Slot = { object, parts };
    names.set(object.metadata.name, created);
    this.#slots.add(created);
    this.#file(created, 0);
    this.#changed([object]);
    return true;
  }

  /** Removes the object with this namespace and name; false when none is stored. */
  delete(object: KubeObject): boolean {
    const namespace = object.metadata.namespace ?? '';
    const names = this.#byName.get(namespace);
    const slot = names?.get(object.metadata.name);
    if (!names || !slot) return false;
    this.#unfile(slot, 0);
    names.delete(object.metadata.name);
    if (names.size === 0) this.#byName.delete(namespace);
    this.#slots.delete(slot);
    this.#changed([slot.object]);
    return true;
  }

  changesSince(version: number): readonly KubeObject[] | undefined {
    if (version === this.#version) return [];
    const oldest = this.#log[0];
    // Versions before the log's first entry are too far back to tell what changed.
    if (oldest === undefined || version < oldest.version - 1 || version > this.#version) return undefined;
    return this.#log.filter((entry) => entry.version > version).flatMap((entry) => entry.objects);
  }

  #changed(objects: readonly KubeObject[]): void {
    this.#listed = undefined;
    this.#version++;
    this.#log.push({ version: this.#version, objects });
    // Trimmed in batches: trimming one entry per change would shift the whole log every time.
    if (this.#log.length >= 2 * maxLoggedChanges) this.#log.splice(0, this.#log.length - maxLoggedChanges);
  }

  /** Stops at the first undefined part: a missing key cannot be matched, and later parts would be ambiguous. */
  #partsOf(object: KubeObject): string[] {
    const parts: string[] = [];
    for (const extract of this.#indexBy) {
      const part = extract(object);
      if (part === undefined) break;
      parts.push(part);
    }
    // Kept for as long as the object is stored.
    return fitted(parts);
  }

  /** Files the slot under every prefix of its parts from `from` parts on; above that it is filed already. */
  #file(slot: Slot, from: number): void {
    const parts = slot.parts;
    let level = this.#index;
    for (let depth = 0; depth < parts.length; depth++) {
      let node = level.get(parts[depth]!);
      if (!node) {
        node = { slots: slot, children: undefined, listed: undefined };
        level.set(parts[depth]!, node);
        this.#indexEntryCount++;
      } else if (depth >= from) node.slots = withMember(node.slots, slot);
      // Its object changed either way.
      node.listed = undefined;
      if (depth + 1 < parts.length) level = node.children ??= new Map();
    }
  }

  /** Takes the slot out of the nodes of its parts from `from` parts on; nodes left empty go. */
  #unfile(slot: Slot, from: number): void {
    const parts = slot.parts;
    const path: { readonly level: Map<string, IndexNode>; readonly node: IndexNode }[] = [];
    let level: Map<string, IndexNode> | undefined = this.#index;
    for (let depth = 0; depth < parts.length && level; depth++) {
      const node: IndexNode = level.get(parts[depth]!)!;
      path.push({ level, node });
      level = node.children;
    }
    for (let depth = path.length - 1; depth >= from; depth--) {
      const { level: parent, node } = path[depth]!;
      const left = withoutMember(node.slots, slot);
      node.listed = undefined;
      // A slot filed under a node is filed under its parent too: an empty node has no children left.
      if (left !== undefined) node.slots = left;
      else {
        parent.delete(parts[depth]!);
        this.#indexEntryCount--;
      }
    }
  }
}
