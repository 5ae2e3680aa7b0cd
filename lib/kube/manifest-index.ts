import { isDeepStrictEqual } from 'node:util';
import type { CompiledPath, WatchedResource } from '../config/types.ts';
import type { KubeObject, ResourceEvent } from '../pipeline/model.ts';
import type { FirstSeen } from './first-seen.ts';
import type { ManifestSet } from './manifests.ts';
import { pluralOf } from '../kube-syntax/plural.ts';
import { selectionFor, withoutIgnoredFields } from './select.ts';
import { objectKey } from '../pipeline/object-key.ts';

/** Kinds without a namespace; every other object from a manifest defaults to "default", as kubectl does. */
const clusterScoped = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'IngressClass',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'StorageClass',
  'PriorityClass',
  'GatewayClass',
]);

/** The object with its namespace defaulted ("default" unless its kind has none). */
export function withNamespace(object: KubeObject): KubeObject {
  if (object.metadata.namespace !== undefined || clusterScoped.has(String(object.kind))) return object;
  return { ...object, metadata: { ...object.metadata, namespace: 'default' } };
}

const identity = (object: KubeObject) => objectKey(object.metadata.namespace, object.metadata.name);

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/**
 * The watched resource an object is another version of (same group and
 * kind, another apiVersion): an API server would serve it at the watched
 * version too, but a manifest holds one version and no conversion, so
 * the object is not read, and the user is told why.
 */
export function otherVersionOf(object: KubeObject, resources: readonly WatchedResource[]): WatchedResource | undefined {
  if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return undefined;
  const group = groupOf(object.apiVersion);
  const kind = object.kind;
  return resources.find(
    (resource) =>
      groupOf(resource.apiVersion) === group &&
      resource.apiVersion !== object.apiVersion &&
      resource.fallbackApiVersions?.includes(String(object.apiVersion)) !== true &&
      (resource.kind !== undefined ? resource.kind === kind : resource.resource === pluralOf(kind)),
  );
}

/** What the index keeps of one file between reads. */
interface FileState {
  /** The parse it was handed last: handed the same one again, the file did not change. */
  set: ManifestSet;
  /** What it contributes: its last parse without errors, kept while an edit breaks it. */
  held: ManifestSet['manifests'] | undefined;
  /** One per object it contributes and watched resource that selects it. */
  entries: readonly Entry[];
  parseErrors: readonly string[];
  versionErrors: readonly string[];
  /** Its place in this read's folder order (later files win), and in the last read's (the order objects went in). */
  at: number;
  wasAt: number;
}

/** One object of a file as a watched resource serves it. */
interface Entry {
  readonly file: FileState;
  /** Its place in the file: later documents win. */
  readonly doc: number;
  readonly source: string;
  readonly kind: unknown;
  readonly slot: Slot;
  /** Namespace defaulted, stamped with the time first seen, ignored fields dropped: made once while the file's parse lives. */
  readonly served: KubeObject;
  /** Whether it took the time first seen, having no creationTimestamp of its own. */
  readonly stamped: boolean;
}

/** One namespace/name of a watched resource: every file object that defines it, and the object last served for it. */
interface Slot {
  readonly watched: Watched;
  readonly id: string;
  readonly entries: Entry[];
  /** How many of its entries took the time first seen: at none, that time is forgotten. */
  stamped: number;
  served: KubeObject | undefined;
}

interface Watched {
  readonly resource: WatchedResource;
  readonly selects: (object: KubeObject) => boolean;
  readonly slots: Map<string, Slot>;
  /** Slots defined more than once, each reported on every read. */
  readonly duplicated: Set<Slot>;
}

/** A file whose contribution changes, with what it contributes now. */
interface Change {
  readonly state: FileState;
  readonly held: ManifestSet['manifests'] | undefined;
}

const isBefore = (a: Entry, b: Entry) => a.file.at < b.file.at || (a.file.at === b.file.at && a.doc < b.doc);
const wasBefore = (a: Entry, b: Entry) => a.file.wasAt < b.file.wasAt || (a.file.wasAt === b.file.wasAt && a.doc < b.doc);
const firstSeenKey = (slot: Slot) => `${slot.watched.resource.name} ${slot.id}`;

/**
 * The objects a folder of manifests holds, per watched resource, as a
 * stream of informer-like events. Each update is a whole re-read; a file
 * that no longer parses keeps contributing what it held when it last did,
 * so a bad edit never takes objects (and traffic) away. With `firstSeen`, an
 * object without a creationTimestamp gets the time it was first seen as one
 * (lib/kube/first-seen.ts).
 *
 * An update costs what changed: a file handed the same parse as last time
 * (manifests.ts parses only what changed) keeps its objects as they were
 * made, and only the names its changed files define are settled again.
 */
export class ManifestIndex {
  readonly #resources: readonly WatchedResource[];
  readonly #watched: readonly Watched[];
  /** Per kind, the watched resources naming it; those naming a plural instead look at every object. */
  readonly #byKind = new Map<unknown, Watched[]>();
  readonly #anyKind: readonly Watched[];
  readonly #ignoreFields: readonly CompiledPath[];
  readonly #firstSeen: FirstSeen | undefined;
  readonly #files = new Map<string, FileState>();
  readonly #broken = new Set<FileState>();
  readonly #misversioned = new Set<FileState>();

  constructor(resources: readonly WatchedResource[], ignoreFields: readonly CompiledPath[], firstSeen?: FirstSeen) {
    this.#resources = resources;
    this.#watched = resources.map((resource) => ({ resource, selects: selectionFor(resource), slots: new Map(), duplicated: new Set() }));
    for (const watched of this.#watched) {
      if (watched.resource.kind === undefined) continue;
      const ofKind = this.#byKind.get(watched.resource.kind);
      if (ofKind) ofKind.push(watched);
      else this.#byKind.set(watched.resource.kind, [watched]);
    }
    this.#anyKind = this.#watched.filter((watched) => watched.resource.kind === undefined);
    this.#ignoreFields = ignoreFields;
    this.#firstSeen = firstSeen;
  }

  /**
   * Applies a re-read of every file, made at `now`; returns the changes since
   * the last one, the problems found, and whether the first-seen record changed.
   */
  update(files: ReadonlyMap<string, ManifestSet>, now = 0): { events: ResourceEvent[]; errors: string[]; firstSeenChanged: boolean } {
    // Another reader (an index of another configuration, or none yet) left the record: everything is told to it again.
    const continues = this.#firstSeen?.follow(this) ?? true;
    const { changed, reordered } = this.#changedFiles(files, !continues);
    // Files that swapped places may change which of two definitions wins.
    const touched = new Set<Slot>(reordered ? this.#watched.flatMap((watched) => [...watched.duplicated]) : []);
    const gone: Entry[] = [];
    for (const { state, held } of changed) {
      for (const entry of state.entries) gone.push(entry);
      state.held = held;
      state.entries = held ? this.#entriesOf(state, held, now, touched) : [];
    }
    // What a changed file held goes after what it holds now came, so an object it still defines keeps its time first seen.
    const earliestGone = new Map<Slot, Entry>();
    for (const entry of gone) {
      const { slot } = entry;
      slot.entries.splice(slot.entries.indexOf(entry), 1);
      if (entry.stamped && --slot.stamped === 0) this.#firstSeen?.forget(firstSeenKey(slot));
      touched.add(slot);
      const earliest = earliestGone.get(slot);
      if (earliest === undefined || wasBefore(entry, earliest)) earliestGone.set(slot, entry);
    }
    if (!continues) this.#firstSeen?.keepOnly(new Set(this.#watched.flatMap((watched) => [...watched.slots.values()].filter((slot) => slot.stamped > 0).map(firstSeenKey))));
    const touchedOf = new Map<Watched, Slot[]>();
    for (const slot of touched) {
      const slots = touchedOf.get(slot.watched);
      if (slots) slots.push(slot);
      else touchedOf.set(slot.watched, [slot]);
    }
    const events = this.#watched.flatMap((watched) => settle(watched, touchedOf.get(watched) ?? [], earliestGone));
    const errors = [
      ...[...this.#broken].sort((a, b) => a.at - b.at).flatMap((state) => state.parseErrors),
      ...this.#watched.flatMap(duplicateErrors),
      ...[...this.#misversioned].sort((a, b) => a.at - b.at).flatMap((state) => state.versionErrors),
    ];
    return { events, errors, firstSeenChanged: this.#firstSeen?.endRead() ?? false };
  }

  /**
   * Places every file in this read's order and takes its parse; returns the
   * files whose contribution changes (all of them when `all`), with what they
   * contribute now: a removed file nothing.
   */
  #changedFiles(files: ReadonlyMap<string, ManifestSet>, all: boolean): { changed: Change[]; reordered: boolean } {
    const changed: Change[] = [];
    const known = this.#files.size;
    let retained = 0;
    let lastWasAt = -1;
    let reordered = false;
    let at = 0;
    for (const [file, set] of files) {
      let state = this.#files.get(file);
      if (state === undefined) {
        state = { set, held: undefined, entries: [], parseErrors: [], versionErrors: [], at, wasAt: at };
        this.#files.set(file, state);
      } else {
        retained += 1;
        reordered ||= state.at < lastWasAt;
        lastWasAt = state.at;
        state.wasAt = state.at;
        state.at = at;
        if (state.set === set) {
          if (all && state.held) changed.push({ state, held: state.held });
          at += 1;
          continue;
        }
      }
      at += 1;
      state.set = set;
      const held = set.errors.length === 0 ? set.manifests : state.held;
      state.parseErrors = set.errors.map((error) => `${error}${held ? ' (the objects it held before keep serving)' : ''}`);
      if (state.parseErrors.length > 0) this.#broken.add(state);
      else this.#broken.delete(state);
      if (all || held !== state.held) changed.push({ state, held });
    }
    if (retained < known) {
      for (const [file, state] of this.#files) {
        if (files.has(file)) continue;
        state.wasAt = state.at;
        changed.push({ state, held: undefined });
        this.#files.delete(file);
        this.#broken.delete(state);
        this.#misversioned.delete(state);
      }
    }
    return { changed, reordered };
  }

  /** The entries a file's objects make, each stamped and added to its slot; notes the objects of another version of a watched kind. */
  #entriesOf(state: FileState, held: ManifestSet['manifests'], now: number, touched: Set<Slot>): Entry[] {
    const entries: Entry[] = [];
    const versionErrors: string[] = [];
    for (const [doc, { object, source }] of held.entries()) {
      const candidate = withNamespace(object);
      const id = identity(candidate);
      let read = false;
      for (const group of [this.#byKind.get(candidate.kind) ?? [], this.#anyKind]) {
        for (const watched of group) {
          if (!watched.selects(candidate)) continue;
          read = true;
          let slot = watched.slots.get(id);
          if (slot === undefined) {
            slot = { watched, id, entries: [], stamped: 0, served: undefined };
            watched.slots.set(id, slot);
          }
          const stamped = this.#firstSeen !== undefined && candidate.metadata['creationTimestamp'] === undefined;
          const served = withoutIgnoredFields(this.#firstSeen ? this.#firstSeen.stamp(firstSeenKey(slot), candidate, now) : candidate, this.#ignoreFields);
          const entry: Entry = { file: state, doc, source, kind: candidate.kind, slot, served, stamped };
          slot.entries.push(entry);
          if (stamped) slot.stamped += 1;
          touched.add(slot);
          entries.push(entry);
        }
      }
      const other = read ? undefined : otherVersionOf(object, this.#resources);
      if (other)
        versionErrors.push(
          `${source}: ${object.kind} ${id} is ${object.apiVersion}, but watchedResources.${other.name} reads ${other.apiVersion}: not read (write it as ${other.apiVersion})`,
        );
    }
    state.versionErrors = versionErrors;
    if (versionErrors.length > 0) this.#misversioned.add(state);
    else this.#misversioned.delete(state);
    return entries;
  }
}

/**
 * Settles the touched slots of a watched resource: the last definition
 * wins; an event for each name whose object really changed, in the order
 * of their first definitions, then those that went, in the order they
 * were defined in the last read.
 */
function settle(watched: Watched, touched: readonly Slot[], earliestGone: ReadonlyMap<Slot, Entry>): ResourceEvent[] {
  const kind = watched.resource.name;
  const changes: { readonly first: Entry; readonly event: ResourceEvent }[] = [];
  const deletions: { readonly first: Entry; readonly event: ResourceEvent }[] = [];
  for (const slot of touched) {
    if (slot.entries.length === 0) {
      watched.slots.delete(slot.id);
      watched.duplicated.delete(slot);
      const first = earliestGone.get(slot);
      if (slot.served && first) deletions.push({ first, event: { type: 'deleted', kind, object: slot.served } });
      continue;
    }
    if (slot.entries.length > 1) watched.duplicated.add(slot);
    else watched.duplicated.delete(slot);
    let [first, last] = [slot.entries[0] as Entry, slot.entries[0] as Entry];
    for (const entry of slot.entries) {
      if (isBefore(entry, first)) first = entry;
      if (isBefore(last, entry)) last = entry;
    }
    const before = slot.served;
    slot.served = last.served;
    if (before === undefined) changes.push({ first, event: { type: 'added', kind, object: last.served } });
    else if (before !== last.served && !isDeepStrictEqual(before, last.served)) changes.push({ first, event: { type: 'modified', kind, object: last.served } });
  }
  changes.sort((a, b) => (isBefore(a.first, b.first) ? -1 : 1));
  deletions.sort((a, b) => (wasBefore(a.first, b.first) ? -1 : 1));
  return [...changes, ...deletions].map(({ event }) => event);
}

/** Each definition of a name after the first, naming the one before it, in the order they come. */
function duplicateErrors(watched: Watched): string[] {
  const errors: { readonly entry: Entry; readonly error: string }[] = [];
  for (const slot of watched.duplicated) {
    const entries = [...slot.entries].sort((a, b) => (isBefore(a, b) ? -1 : 1));
    for (let i = 1; i < entries.length; i += 1) {
      const [earlier, entry] = [entries[i - 1] as Entry, entries[i] as Entry];
      errors.push({ entry, error: `${entry.source}: ${String(entry.kind)} ${slot.id} is also defined in ${earlier.source}; this one wins` });
    }
  }
  return errors.sort((a, b) => (isBefore(a.entry, b.entry) ? -1 : 1)).map(({ error }) => error);
}
