/**
 * The fake's etcd: every object of every type, one global integer
 * resourceVersion that each write moves on by one, and per type a bounded
 * history of changes (with the object before the change) from which
 * watches replay and consistent snapshots at an older version are
 * rebuilt. Versions older than what a type's history still covers are
 * "compacted": watching or listing from them answers 410 Expired.
 *
 * Listeners hear every change synchronously, in resourceVersion order,
 * right after it is stored.
 */
import { clone } from './json-values.ts';
import { metadataOf, stringField } from './object-meta.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  readonly type: ResourceType;
  readonly change: ChangeType;
  readonly resourceVersion: number;
  /** The object after the change; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject;
  /** The object before the change (undefined for ADDED). */
  readonly previous: KubeObject | undefined;
}

export type ChangeListener = (change: Change) => void;

interface TypeHistory {
  readonly changes: Change[];
  /** Changes up to and including this version are forgotten. */
  compactedThrough: number;
}

/** Namespace and name, in the order etcd keys sort them. */
export function objectKey(object: KubeObject): string {
  const metadata = metadataOf(object);
  return `${stringField(metadata, 'namespace')}/${stringField(metadata, 'name')}`;
}

/**
 * The object as a version of its type serves it: objects stored through
 * another version of the same CRD differ only by apiVersion (see
 * ResourceTypeDefinition.storageVersion). Most objects are served at the
 * version they were written at, and are returned as they are.
 */
export function inVersion(type: ResourceType, object: KubeObject): KubeObject {
  return object['apiVersion'] === type.apiVersion ? object : { ...object, apiVersion: type.apiVersion };
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ObjectStore {
  readonly #historyLimit: number;
  #resourceVersion: number;
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  /** Each type's keys sorted, kept until a key comes or goes: a LIST in pages sorts once, not once per page. */
  readonly #sortedKeys = new Map<string, readonly string[]>();
  readonly #histories = new Map<string, TypeHistory>();
  readonly #listeners = new Set<ChangeListener>();
  /** Where the history of a type not written since the last compact() starts. */
  #compactedFloor = 0;

  constructor(historyLimit: number, initialResourceVersion = 0) {
    this.#historyLimit = historyLimit;
    this.#resourceVersion = initialResourceVersion;
  }

  get resourceVersion(): number {
    return this.#resourceVersion;
  }

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #objectsOf(type: ResourceType): Map<string, KubeObject> {
    let objects = this.#objects.get(type.storageKey);
    if (objects === undefined) {
      objects = new Map();
      this.#objects.set(type.storageKey, objects);
    }
    return objects;
  }

  #historyOf(type: ResourceType): TypeHistory {
    let history = this.#histories.get(type.storageKey);
    if (history === undefined) {
      history = { changes: [], compactedThrough: this.#compactedFloor };
      this.#histories.set(type.storageKey, history);
    }
    return history;
  }

  /** The stored object (not a copy: callers must not change it), in the type's version. */
  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const object = this.#objectsOf(type).get(`${namespace}/${name}`);
    return object && inVersion(type, object);
  }

  /** Stored objects sorted by namespace and name, in one namespace when given (not copies). */
  list(type: ResourceType, namespace?: string): KubeObject[] {
    const objects = this.#objectsOf(type);
    const keys = this.#keysOf(type);
    const prefix = `${namespace}/`;
    return (namespace === undefined ? keys : keys.filter((key) => key.startsWith(prefix))).map((key) => inVersion(type, objects.get(key)!));
  }

  #keysOf(type: ResourceType): readonly string[] {
    let keys = this.#sortedKeys.get(type.storageKey);
    if (keys === undefined) {
      keys = [...this.#objectsOf(type).keys()].sort(compareKeys);
      this.#sortedKeys.set(type.storageKey, keys);
    }
    return keys;
  }

  /** The oldest version watches and snapshots of this type can start from. */
  oldestVersion(type: ResourceType): number {
    return this.#historyOf(type).compactedThrough;
  }

  /** Changes of the type after `resourceVersion`, or undefined when some of them are compacted away. */
  changesSince(type: ResourceType, resourceVersion: number): Change[] | undefined {
    const history = this.#historyOf(type);
    if (resourceVersion < history.compactedThrough) return undefined;
    return history.changes.filter((change) => change.resourceVersion > resourceVersion);
  }

  /** The type's objects as they were at `resourceVersion`, sorted; undefined when that is compacted away. */
  snapshot(type: ResourceType, resourceVersion: number): KubeObject[] | undefined {
    const later = this.changesSince(type, resourceVersion);
    if (later === undefined) return undefined;
    if (later.length === 0) return this.list(type);
    const objects = new Map(this.#objectsOf(type));
    for (const change of later.toReversed()) {
      const key = objectKey(change.object);
      if (change.previous === undefined) objects.delete(key);
      else objects.set(key, change.previous);
    }
    return [...objects.entries()].sort(([a], [b]) => compareKeys(a, b)).map(([, object]) => inVersion(type, object));
  }

  /** Stores `object` (whose metadata has everything but the new resourceVersion) and returns a copy as stored. */
  put(type: ResourceType, object: KubeObject): KubeObject {
    const objects = this.#objectsOf(type);
    const key = objectKey(object);
    const previous = objects.get(key);
    const resourceVersion = ++this.#resourceVersion;
    const stored = clone(object);
    stored.metadata = { ...metadataOf(stored), resourceVersion: String(resourceVersion) };
    objects.set(key, stored);
    if (previous === undefined) this.#sortedKeys.delete(type.storageKey);
    this.#record({ type, change: previous === undefined ? 'ADDED' : 'MODIFIED', resourceVersion, object: stored, previous });
    return inVersion(type, clone(stored));
  }

  /** Removes the object and returns its last state with the deletion's resourceVersion; undefined when absent. */
  remove(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const objects = this.#objectsOf(type);
    const key = `${namespace}/${name}`;
    const previous = objects.get(key);
    if (previous === undefined) return undefined;
    objects.delete(key);
    this.#sortedKeys.delete(type.storageKey);
    const resourceVersion = ++this.#resourceVersion;
    const deleted = clone(previous);
    deleted.metadata = { ...metadataOf(deleted), resourceVersion: String(resourceVersion) };
    this.#record({ type, change: 'DELETED', resourceVersion, object: deleted, previous });
    return inVersion(type, clone(deleted));
  }

  /** Forgets every change so far: any earlier version is now too old to watch or list from. */
  compact(): void {
    for (const history of this.#histories.values()) {
      history.changes.length = 0;
      history.compactedThrough = this.#resourceVersion;
    }
    this.#compactedFloor = this.#resourceVersion;
  }

  #record(change: Change): void {
    const history = this.#historyOf(change.type);
    history.changes.push(change);
    if (history.changes.length > this.#historyLimit) {
      const dropped = history.changes.splice(0, history.changes.length - this.#historyLimit);
      history.compactedThrough = dropped.at(-1)!.resourceVersion;
    }
    for (const listener of [...this.#listeners]) listener(change);
  }
}
