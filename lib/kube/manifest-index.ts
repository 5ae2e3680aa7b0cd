import { isDeepStrictEqual } from 'node:util';
import type { CompiledPath, WatchedResource } from '../config/types.ts';
import type { KubeObject, ResourceEvent } from '../pipeline/model.ts';
import type { FirstSeen } from './first-seen.ts';
import type { ManifestSet } from './manifests.ts';
import { pluralOf } from '../kube-syntax/plural.ts';
import { selectionFor, withoutIgnoredFields } from './select.ts';

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

function withNamespace(object: KubeObject): KubeObject {
  if (object.metadata.namespace !== undefined || clusterScoped.has(String(object.kind))) return object;
  return { ...object, metadata: { ...object.metadata, namespace: 'default' } };
}

const identity = (object: KubeObject) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/**
 * The watched resource an object is another version of (same group and
 * kind, another apiVersion): an API server would serve it at the watched
 * version too, but a manifest holds one version and no conversion, so
 * the object is not read, and the user is told why.
 */
function otherVersionOf(object: KubeObject, resources: readonly WatchedResource[]): WatchedResource | undefined {
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

/**
 * The objects a folder of manifests holds, per watched resource, as a
 * stream of informer-like events. Each update is a whole re-read; a file
 * that no longer parses keeps contributing what it held when it last did,
 * so a bad edit never takes objects (and traffic) away. With `firstSeen`, an
 * object without a creationTimestamp gets the time it was first seen as one
 * (lib/kube/first-seen.ts).
 */
export class ManifestIndex {
  readonly #resources: readonly { readonly resource: WatchedResource; readonly selects: (o: KubeObject) => boolean }[];
  readonly #ignoreFields: readonly CompiledPath[];
  readonly #firstSeen: FirstSeen | undefined;
  #lastGood = new Map<string, ManifestSet['manifests']>();
  #objects = new Map<string, Map<string, KubeObject>>();
  /**
   * Per watched resource and object, the manifest object it was made from and
   * its creationTimestamp: an unchanged file hands over the same manifest
   * objects (manifests.ts parses only what changed), whose objects then are
   * the ones made before, neither made nor compared again.
   */
  #madeFrom = new Map<string, Map<string, { readonly manifest: KubeObject; readonly created: unknown }>>();
  /** Each manifest object with its namespace defaulted, made once while the object lives. */
  readonly #namespaced = new WeakMap<KubeObject, KubeObject>();

  constructor(resources: readonly WatchedResource[], ignoreFields: readonly CompiledPath[], firstSeen?: FirstSeen) {
    this.#resources = resources.map((resource) => ({ resource, selects: selectionFor(resource) }));
    this.#ignoreFields = ignoreFields;
    this.#firstSeen = firstSeen;
  }

  /**
   * Applies a re-read of every file, made at `now`; returns the changes since
   * the last one, the problems found, and whether the first-seen record changed.
   */
  update(files: ReadonlyMap<string, ManifestSet>, now = 0): { events: ResourceEvent[]; errors: string[]; firstSeenChanged: boolean } {
    const errors: string[] = [];
    const lastGood = new Map<string, ManifestSet['manifests']>();
    for (const [file, set] of files) {
      if (set.errors.length === 0) {
        lastGood.set(file, set.manifests);
        continue;
      }
      const kept = this.#lastGood.get(file);
      errors.push(...set.errors.map((error) => `${error}${kept ? ' (the objects it held before keep serving)' : ''}`));
      if (kept) lastGood.set(file, kept);
    }
    this.#lastGood = lastGood;

    const events: ResourceEvent[] = [];
    const next = new Map<string, Map<string, KubeObject>>();
    const nextMadeFrom = new Map<string, Map<string, { readonly manifest: KubeObject; readonly created: unknown }>>();
    const read = new Set<KubeObject>();
    // Each manifest object once, in file order, with its namespace defaulted (kept while the object is), and by kind:
    // a resource naming its kind looks at that kind's objects alone.
    const all: { readonly object: KubeObject; readonly source: string; readonly candidate: KubeObject }[] = [];
    const byKind = new Map<unknown, (typeof all)[number][]>();
    for (const manifests of lastGood.values()) {
      for (const { object, source } of manifests) {
        let candidate = this.#namespaced.get(object);
        if (candidate === undefined) {
          candidate = withNamespace(object);
          this.#namespaced.set(object, candidate);
        }
        const entry = { object, source, candidate };
        all.push(entry);
        const ofKind = byKind.get(candidate.kind);
        if (ofKind) ofKind.push(entry);
        else byKind.set(candidate.kind, [entry]);
      }
    }
    for (const { resource, selects } of this.#resources) {
      const objects = new Map<string, KubeObject>();
      const madeFrom = new Map<string, { readonly manifest: KubeObject; readonly created: unknown }>();
      const lastMadeFrom = this.#madeFrom.get(resource.name);
      const before = this.#objects.get(resource.name) ?? new Map<string, KubeObject>();
      const sources = new Map<string, string>();
      for (const { object, source, candidate } of resource.kind === undefined ? all : (byKind.get(resource.kind) ?? [])) {
        if (!selects(candidate)) continue;
        read.add(object);
        const id = identity(candidate);
        const earlier = sources.get(id);
        if (earlier) errors.push(`${source}: ${candidate.kind} ${id} is also defined in ${earlier}; this one wins`);
        sources.set(id, source);
        const stamped = this.#firstSeen ? this.#firstSeen.stamp(`${resource.name} ${id}`, candidate, now) : candidate;
        const created = stamped.metadata.creationTimestamp;
        const last = lastMadeFrom?.get(id);
        const kept = last?.manifest === object && last.created === created ? before.get(id) : undefined;
        objects.set(id, kept ?? withoutIgnoredFields(stamped, this.#ignoreFields));
        madeFrom.set(id, { manifest: object, created });
      }
      for (const [id, object] of objects) {
        const previous = before.get(id);
        if (!previous) events.push({ type: 'added', kind: resource.name, object });
        else if (previous !== object && !isDeepStrictEqual(previous, object)) events.push({ type: 'modified', kind: resource.name, object });
      }
      for (const [id, object] of before) if (!objects.has(id)) events.push({ type: 'deleted', kind: resource.name, object });
      next.set(resource.name, objects);
      nextMadeFrom.set(resource.name, madeFrom);
    }
    this.#objects = next;
    this.#madeFrom = nextMadeFrom;
    const firstSeenChanged = this.#firstSeen?.endRead() ?? false;
    for (const manifests of lastGood.values()) {
      for (const { object, source } of manifests) {
        const watched = read.has(object)
          ? undefined
          : otherVersionOf(
              object,
              this.#resources.map((entry) => entry.resource),
            );
        if (watched)
          errors.push(
            `${source}: ${object.kind} ${identity(withNamespace(object))} is ${object.apiVersion}, but watchedResources.${watched.name} reads ${watched.apiVersion}: not read (write it as ${watched.apiVersion})`,
          );
      }
    }
    return { events, errors, firstSeenChanged };
  }
}
