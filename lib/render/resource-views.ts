import { compareCodeUnits } from '../compare.ts';
import type { WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import type { RenderContext } from './template-view.ts';

/** Where a string value a template reads comes from. */
export interface Provenance {
  readonly object: KubeObject;
  /** "Kind namespace/name", as error messages name objects. */
  readonly label: string;
  /** The field path inside the object, e.g. `spec.rules.0.host`. */
  readonly field: string;
}

/**
 * Records the strings templates read from Kubernetes objects, so an unsafe
 * value can be charged to the object that carried it. The writer clears the
 * last read before each lookup and asks right after, which names the exact
 * field; `{{.}}` reads no property (the section already did), so it falls
 * back to the latest object that held that same string.
 */
export class AccessTracker {
  #last: { readonly value: unknown; readonly provenance: Provenance } | undefined;
  #byValue = new Map<string, Provenance>();
  #reads = 0;

  /** Grows with every recorded read: a lookup that leaves it unchanged read no object field. */
  get reads(): number {
    return this.#reads;
  }

  record(value: unknown, provenance: Provenance): void {
    this.#reads++;
    this.#last = { value, provenance };
    if (typeof value === 'string') this.#byValue.set(value, provenance);
  }

  beforeLookup(): void {
    this.#last = undefined;
  }

  provenanceOf(value: unknown): Provenance | undefined {
    if (this.#last !== undefined && this.#last.value === value) return this.#last.provenance;
    return typeof value === 'string' && this.#byValue.size > 0 ? this.#byValue.get(value) : undefined;
  }

  /** Starts a render pass: reads of an earlier pass say nothing about this one. */
  reset(): void {
    this.#last = undefined;
    this.#byValue = new Map();
  }
}

export function objectLabel(kind: string, object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

export function compareObjects(a: KubeObject, b: KubeObject): number {
  return compareCodeUnits(a.metadata.namespace ?? '', b.metadata.namespace ?? '') || compareCodeUnits(a.metadata.name, b.metadata.name);
}

/**
 * Every object's annotations, for templates: Mustache splits names on dots,
 * so `metadata.annotations.haproxy.org/timeout-server` cannot be reached.
 * `annotations` maps normalised names (every character but ASCII letters,
 * digits and `_` made `_`: `haproxy_org_timeout_server`; where two names
 * normalise alike, the first in name order) to values; `annotationList`
 * lists `{name, value}` in name order. A relation of either name wins.
 * Values are recorded as read from `metadata.annotations['<name>']`, so an
 * unsafe one excludes its object like any other value.
 */
const ANNOTATIONS = 'annotations';
const ANNOTATION_LIST = 'annotationList';

interface AnnotationViews {
  readonly map: Readonly<Record<string, string>>;
  readonly list: readonly { readonly name: string; readonly value: string }[];
}

export function normalisedAnnotationName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

function createAnnotationViews(root: Root, tracker: AccessTracker): AnnotationViews {
  const annotations = root.object.metadata.annotations ?? {};
  const names = Object.keys(annotations).sort(compareCodeUnits);
  const field = `metadata.annotations`;
  const read = (name: string) => {
    const value = annotations[name]!;
    tracker.record(value, { object: root.object, label: root.label, field: `${field}['${name}']` });
    return value;
  };
  const byKey = new Map<string, string>();
  for (const name of names) {
    const key = normalisedAnnotationName(name);
    if (!byKey.has(key)) byKey.set(key, name);
  }
  const map = new Proxy(Object.freeze(Object.fromEntries([...byKey].map(([key, name]) => [key, annotations[name]!]))), {
    get: (target, property) => (typeof property === 'string' && byKey.has(property) ? read(byKey.get(property)!) : Reflect.get(target, property)),
  });
  const list = Object.freeze(
    names.map((name) =>
      Object.freeze({
        get name() {
          tracker.record(name, { object: root.object, label: root.label, field });
          return name;
        },
        get value() {
          return read(name);
        },
      }),
    ),
  );
  return { map, list };
}

interface Root {
  readonly object: KubeObject;
  readonly resource: WatchedResource;
  readonly label: string;
}

export interface ResourceViewOptions {
  readonly resources: readonly WatchedResource[];
  readonly stores: ReadonlyMap<string, StoreReader>;
  /** Objects left out of this render pass. */
  readonly excluded: ReadonlySet<KubeObject>;
  readonly tracker: AccessTracker;
}

/**
 * The `resources` object of the template context: one sorted list per
 * watched resource, each object behind a read-only proxy that records every
 * string read and resolves the declared relations lazily through the
 * target's index. Lists and relations leave excluded objects out.
 */
export function createResourceViews(options: ResourceViewOptions): RenderContext['resources'] {
  const byName = new Map(options.resources.map((resource) => [resource.name, resource]));
  const proxies = new WeakMap<object, object>();
  const lists = new Map<string, readonly object[]>();

  const viewsOf = (resource: WatchedResource, objects: readonly KubeObject[]): readonly object[] => {
    const kind = resource.kind ?? resource.resource;
    return objects
      .filter((object) => !options.excluded.has(object))
      .sort(compareObjects)
      .map((object) => view({ object, resource, label: objectLabel(kind, object) }, object, ''));
  };

  const related = (root: Root, relationName: string): readonly object[] | undefined => {
    const relation = root.resource.relations.find((r) => r.name === relationName);
    if (!relation) return undefined;
    const target = byName.get(relation.resource);
    const store = options.stores.get(relation.resource);
    if (!target || !store) return [];
    const keys = relation.keys.map((key) => key.get(root.object));
    if (keys.some((key) => key === undefined)) return [];
    return viewsOf(target, store.lookup(...(keys as string[])));
  };

  const annotationViews = new WeakMap<KubeObject, AnnotationViews>();
  const annotationsOf = (root: Root): AnnotationViews => {
    let views = annotationViews.get(root.object);
    if (!views) {
      views = createAnnotationViews(root, options.tracker);
      annotationViews.set(root.object, views);
    }
    return views;
  };

  const view = (root: Root, target: object, path: string): object => {
    const cached = proxies.get(target);
    if (cached) return cached;
    const isRoot = target === root.object;
    const proxy = new Proxy(target, {
      get(object, property, receiver) {
        if (isRoot && typeof property === 'string' && !(property in object)) {
          const relation = related(root, property);
          if (relation) return relation;
          if (property === ANNOTATIONS) return annotationsOf(root).map;
          if (property === ANNOTATION_LIST) return annotationsOf(root).list;
        }
        const value: unknown = Reflect.get(object, property, receiver);
        if (typeof property !== 'string') return value;
        const field = path ? `${path}.${property}` : property;
        const seen = value !== null && typeof value === 'object' ? view(root, value, field) : value;
        options.tracker.record(seen, { object: root.object, label: root.label, field });
        return seen;
      },
      has(object, property) {
        if (property in object) return true;
        return isRoot && typeof property === 'string' && (property === ANNOTATIONS || property === ANNOTATION_LIST || root.resource.relations.some((r) => r.name === property));
      },
      set: () => false,
      deleteProperty: () => false,
      defineProperty: () => false,
    });
    proxies.set(target, proxy);
    return proxy;
  };

  const resources: Record<string, readonly object[]> = {};
  for (const resource of options.resources) {
    Object.defineProperty(resources, resource.name, {
      enumerable: true,
      get: () => {
        let list = lists.get(resource.name);
        if (!list) {
          list = viewsOf(resource, options.stores.get(resource.name)?.list() ?? []);
          lists.set(resource.name, list);
        }
        return list;
      },
    });
  }
  // The proxies add what ResourceItem declares beyond the stored object's fields.
  return resources as RenderContext['resources'];
}
