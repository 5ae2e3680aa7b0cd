import { compareCodeUnits } from '../compare.ts';
import type { Culprit } from './blame.ts';
import type { KubeObject, Problem, StoreReader } from './model.ts';

/**
 * Objects left out of every render because HAProxy refused a configuration
 * with them, each until it changes. Stores replace an object when it
 * changes (a new resourceVersion, or new content where there is none), so
 * an entry holds the very object that was refused: once the store holds
 * another one under its name, or none, the entry is released and the new
 * version is rendered (and judged) again.
 */

export interface QuarantineEntry {
  /** The store (watched resource) it is in. */
  readonly store: string;
  readonly object: KubeObject;
  readonly problem: Problem;
}

/** A store without some of its objects, read the same way: renders cannot tell it from a store that never had them. */
class HidingStore implements StoreReader {
  readonly #base: StoreReader;
  readonly #hidden: ReadonlySet<KubeObject>;
  readonly #filtered = new WeakMap<readonly KubeObject[], readonly KubeObject[]>();
  readonly changesSince?: (version: number) => readonly KubeObject[] | undefined;

  constructor(base: StoreReader, hidden: ReadonlySet<KubeObject>) {
    this.#base = base;
    this.#hidden = hidden;
    // The change log still names a hidden object that changed: readers then find it gone, which it is.
    if (base.changesSince) this.changesSince = (version) => base.changesSince!(version);
  }

  get size(): number {
    return this.list().length;
  }

  get version(): number {
    return this.#base.version;
  }

  /** The same list object for the same underlying list, so renders that reuse work by identity still can. */
  #without(objects: readonly KubeObject[]): readonly KubeObject[] {
    let filtered = this.#filtered.get(objects);
    if (!filtered) {
      filtered = objects.some((object) => this.#hidden.has(object)) ? Object.freeze(objects.filter((object) => !this.#hidden.has(object))) : objects;
      this.#filtered.set(objects, filtered);
    }
    return filtered;
  }

  list(): readonly KubeObject[] {
    return this.#without(this.#base.list());
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    const object = this.#base.get(namespace, name);
    return object !== undefined && this.#hidden.has(object) ? undefined : object;
  }

  lookup(...keys: string[]): readonly KubeObject[] {
    return this.#without(this.#base.lookup(...keys));
  }
}

/** The stores without these objects: each store holding one of them seen through a view that hides it. */
export function hideObjects(stores: ReadonlyMap<string, StoreReader>, hidden: ReadonlySet<KubeObject>): ReadonlyMap<string, StoreReader> {
  const view = new Map<string, StoreReader>();
  for (const [name, store] of stores) {
    const hides = [...hidden].some((object) => store.get(object.metadata.namespace, object.metadata.name) === object);
    view.set(name, hides ? new HidingStore(store, hidden) : store);
  }
  return view;
}

export class Quarantine {
  readonly #entries = new Map<KubeObject, QuarantineEntry>();
  /** The last view `hide` made without extra objects, kept while neither the stores nor the entries change. */
  #view: { readonly stores: ReadonlyMap<string, StoreReader>; readonly version: number; readonly view: ReadonlyMap<string, StoreReader> } | undefined;
  #version = 0;

  get size(): number {
    return this.#entries.size;
  }

  get entries(): readonly QuarantineEntry[] {
    return [...this.#entries.values()];
  }

  /** What each quarantined object is left out for, sorted by object. */
  get problems(): readonly Problem[] {
    return this.entries.map((entry) => entry.problem).sort((a, b) => compareCodeUnits(a.object, b.object) || compareCodeUnits(a.field, b.field));
  }

  has(object: KubeObject): boolean {
    return this.#entries.has(object);
  }

  /**
   * Quarantines the culprits still stored as they were rendered (one that
   * changed since is another object, to be judged on its own); returns the
   * problems of those added.
   */
  add(culprits: readonly Culprit[], stores: ReadonlyMap<string, StoreReader>): Problem[] {
    const added: Problem[] = [];
    for (const { source, message } of culprits) {
      if (this.#entries.has(source.object)) continue;
      const store = storeOf(source.object, stores);
      if (store === undefined) continue;
      const problem = { object: source.label, field: source.field, message: `HAProxy refused the configuration with it, left out until it changes: ${message}` };
      this.#entries.set(source.object, { store, object: source.object, problem });
      added.push(problem);
    }
    if (added.length > 0) this.#version++;
    return added;
  }

  /** Releases the objects that changed or went since they were quarantined; returns what they had been left out for. */
  release(stores: ReadonlyMap<string, StoreReader>): Problem[] {
    const released: Problem[] = [];
    for (const entry of this.#entries.values()) {
      const { namespace, name } = entry.object.metadata;
      if (stores.get(entry.store)?.get(namespace, name) === entry.object) continue;
      this.#entries.delete(entry.object);
      released.push(entry.problem);
    }
    if (released.length > 0) this.#version++;
    return released;
  }

  /**
   * The stores as a render should see them: without the quarantined
   * objects, nor `also` (a trial leaving suspects out). Without either, the
   * stores themselves; otherwise views that stay the same objects while
   * nothing changes, so a render's reuse of unchanged work still applies.
   */
  hide(stores: ReadonlyMap<string, StoreReader>, also: readonly KubeObject[] = []): ReadonlyMap<string, StoreReader> {
    if (this.#entries.size === 0 && also.length === 0) return stores;
    const cached = this.#view;
    if (also.length === 0 && cached?.stores === stores && cached.version === this.#version) return cached.view;
    const view = hideObjects(stores, new Set<KubeObject>([...this.#entries.keys(), ...also]));
    if (also.length === 0) this.#view = { stores, version: this.#version, view };
    return view;
  }
}

/** The store holding this very object, if any still does. */
function storeOf(object: KubeObject, stores: ReadonlyMap<string, StoreReader>): string | undefined {
  for (const [name, store] of stores) if (store.get(object.metadata.namespace, object.metadata.name) === object) return name;
  return undefined;
}
