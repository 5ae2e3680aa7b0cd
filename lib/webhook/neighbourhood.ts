import { claimsOf } from '../map-model/claims.ts';
import { type ObjectClaims } from '../map-model/claim-types.ts';
import { servesClass, translateIngress } from '../ingress/translate-ingress.ts';
import { CATCH_ALL_HOST } from '../routing/route.ts';
import { placeOf } from '../routing/order.ts';
import { compareStanding } from '../routing/precedence.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';

/**
 * Which stored Ingresses an object can be decided together with: the
 * Ingresses of the class that claim one of its hosts (a wildcard over them,
 * a host under its wildcard), its catch-all routes, its TLS Secret or its
 * Services, and the oldest other default backend. Everything the view
 * model settles between Ingresses (route conflicts, which Ingress a host
 * belongs to, which default backend wins) involves only Ingresses that
 * share one of these, so rendering an object with its neighbours gives the
 * problems a render of the whole cluster gives it, at the cost of a handful
 * of objects instead of all of them.
 *
 * The index follows the Ingress store through its change log, so keeping
 * it up to date costs as much as the Ingresses that changed.
 */

type Key = string;

/** The domain a host is one label below; undefined for wildcards and the catch-all. */
function parentOf(host: string): string | undefined {
  if (host === CATCH_ALL_HOST || host.startsWith('*.')) return undefined;
  const dot = host.indexOf('.');
  return dot < 0 ? undefined : host.slice(dot + 1);
}

function hostKeys(host: string, into: Set<Key>): void {
  into.add(`host:${host}`);
  const parent = parentOf(host);
  if (parent !== undefined) into.add(`parent:${parent}`);
}

/** The keys an Ingress is filed under, from the pipeline's own reading of it. */
function keysOf(read: ObjectClaims): Set<Key> {
  const keys = new Set<Key>();
  const served = read.served;
  if (!served) return keys;
  for (const host of served.hosts) if (host.host !== CATCH_ALL_HOST) hostKeys(host.host, keys);
  for (const route of served.routes) {
    // Rules without a host belong to no one: they meet others only on the very same route.
    if (route.key.startsWith(`${CATCH_ALL_HOST}/`)) keys.add(`route:${route.map}:${route.key}`);
    keys.add(`service:${route.asked.namespace}/${route.asked.service}`);
  }
  for (const tls of served.tls) {
    keys.add(`secret:${served.namespace}/${tls.secretName}`);
    for (const host of tls.hosts) hostKeys(host, keys);
  }
  if (served.defaultBackend) {
    keys.add('default');
    keys.add(`service:${served.defaultBackend.asked.namespace}/${served.defaultBackend.asked.service}`);
  }
  return keys;
}

/**
 * The keys whose Ingresses an Ingress with these keys meets: its own, and
 * wildcards over its hosts or hosts under its wildcards. Ingresses sharing
 * a Service are not among them: the backend they share warns each of them
 * of its own use alone.
 */
function lookupKeys(keys: ReadonlySet<Key>): Key[] {
  const found: Key[] = [];
  for (const key of keys) {
    if (key === 'default' || key.startsWith('service:')) continue;
    if (key.startsWith('parent:')) {
      found.push(`host:*.${key.slice('parent:'.length)}`);
      continue;
    }
    found.push(key);
    if (key.startsWith('host:*.')) found.push(`parent:${key.slice('host:*.'.length)}`);
  }
  return found;
}

function sameName(a: KubeObject, b: KubeObject): boolean {
  return a.metadata.name === b.metadata.name && (a.metadata.namespace ?? '') === (b.metadata.namespace ?? '');
}

export class IngressNeighbourhood {
  readonly #className: string;
  readonly #byKey = new Map<Key, Set<KubeObject>>();
  readonly #filed = new Map<KubeObject, readonly Key[]>();
  /** Reads of Ingresses, kept while the object lives: a rebuild reads nothing again. */
  readonly #reads = new WeakMap<KubeObject, ObjectClaims | undefined>();
  #store: StoreReader | undefined;
  #version = -1;

  constructor(className: string) {
    this.#className = className;
  }

  /** The pipeline's reading of an Ingress of the class; undefined for another class. */
  read(ingress: KubeObject): ObjectClaims | undefined {
    if (this.#reads.has(ingress)) return this.#reads.get(ingress);
    const read = servesClass(ingress, this.#className) ? claimsOf(translateIngress(ingress)).read : undefined;
    this.#reads.set(ingress, read);
    return read;
  }

  /** Brings the index in line with the Ingress store: only what its change log names, or everything for another store or a gap in the log. */
  follow(store: StoreReader): void {
    if (store === this.#store && store.version === this.#version) return;
    const changed = store === this.#store ? store.changesSince?.(this.#version) : undefined;
    if (changed === undefined) {
      this.#byKey.clear();
      this.#filed.clear();
      for (const ingress of store.list()) this.#file(ingress);
    } else {
      for (const ingress of changed) {
        this.#unfile(ingress);
        const now = store.get(ingress.metadata.namespace, ingress.metadata.name);
        if (now !== undefined) this.#file(now);
      }
    }
    this.#store = store;
    this.#version = store.version;
  }

  /**
   * The stored Ingresses an Ingress (as read), a TLS Secret or a Service
   * with this namespace and name is decided with; never one stored under
   * the object's own namespace and name, which the object replaces.
   */
  neighboursOf(object: KubeObject, role: 'ingress' | 'secret' | 'service'): KubeObject[] {
    let keys: Set<Key>;
    if (role === 'ingress') {
      const read = this.read(object);
      keys = read ? keysOf(read) : new Set();
    } else {
      keys = new Set([`${role}:${object.metadata.namespace ?? ''}/${object.metadata.name}`]);
    }
    const found = new Set<KubeObject>();
    for (const key of role === 'ingress' ? lookupKeys(keys) : keys) for (const ingress of this.#byKey.get(key) ?? []) found.add(ingress);
    if (keys.has('default')) {
      const oldest = this.#oldestDefault(object);
      if (oldest) found.add(oldest);
    }
    return [...found].filter((ingress) => role !== 'ingress' || !sameName(ingress, object));
  }

  /** The oldest other Ingress with a default backend: the only one that decides whether this one's is served. */
  #oldestDefault(object: KubeObject): KubeObject | undefined {
    let oldest: KubeObject | undefined;
    for (const ingress of this.#byKey.get('default') ?? []) {
      if (sameName(ingress, object)) continue;
      if (oldest === undefined || compareStanding(placeOf(ingress), placeOf(oldest)) < 0) oldest = ingress;
    }
    return oldest;
  }

  #file(ingress: KubeObject): void {
    if (this.#filed.has(ingress)) return;
    const read = this.read(ingress);
    const keys = read ? [...keysOf(read)] : [];
    this.#filed.set(ingress, keys);
    for (const key of keys) {
      let filed = this.#byKey.get(key);
      if (!filed) this.#byKey.set(key, (filed = new Set()));
      filed.add(ingress);
    }
  }

  #unfile(ingress: KubeObject): void {
    const keys = this.#filed.get(ingress);
    if (keys === undefined) return;
    this.#filed.delete(ingress);
    for (const key of keys) {
      const filed = this.#byKey.get(key)!;
      filed.delete(ingress);
      if (filed.size === 0) this.#byKey.delete(key);
    }
  }
}
