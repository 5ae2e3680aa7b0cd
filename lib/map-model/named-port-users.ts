import type { BackendRef, ObjectClaims, RouteClaim } from './claim-types.ts';
import { serviceKey } from './backend-names.ts';
import { membersOf, withMember, withoutMember, type OneOrSet } from '../collections/one-or-set.ts';

/** The claims and default backends naming a port of one Service by name: what a change of that Service may move to another backend. */
export interface ServicePortUsers {
  readonly namespace: string;
  readonly service: string;
  readonly claims: Iterable<RouteClaim>;
  readonly defaults: Iterable<ObjectClaims>;
}

interface Users {
  readonly namespace: string;
  readonly service: string;
  // Most Services have one user, and most none by a default backend: no Set for them (one-or-set.ts).
  claims: OneOrSet<RouteClaim> | undefined;
  defaults: OneOrSet<ObjectClaims> | undefined;
}

/** Per Service ("namespace/name"), the claims and default backends naming one of its ports by name. */
export class NamedPortUsers {
  readonly #byService = new Map<string, Users>();

  get size(): number {
    return this.#byService.size;
  }

  /** The Services with users, as "namespace/name". */
  services(): string[] {
    return [...this.#byService.keys()];
  }

  /** The users of a Service's ports ("namespace/name"); undefined when it has none. */
  of(key: string): ServicePortUsers | undefined {
    const users = this.#byService.get(key);
    return users && { namespace: users.namespace, service: users.service, claims: membersOf(users.claims), defaults: membersOf(users.defaults) };
  }

  /** A user of a port of `ref`'s Service named by name. */
  add(ref: BackendRef, user: RouteClaim | ObjectClaims): void {
    const key = serviceKey(ref.namespace, ref.service);
    let users = this.#byService.get(key);
    if (!users) this.#byService.set(key, (users = { namespace: ref.namespace, service: ref.service, claims: undefined, defaults: undefined }));
    if ('map' in user) users.claims = withMember(users.claims, user);
    else users.defaults = withMember(users.defaults, user);
  }

  /** No longer a user; the Service goes with its last. */
  remove(ref: BackendRef, user: RouteClaim | ObjectClaims): void {
    const key = serviceKey(ref.namespace, ref.service);
    const users = this.#byService.get(key)!;
    if ('map' in user) users.claims = withoutMember(users.claims!, user);
    else users.defaults = withoutMember(users.defaults!, user);
    if (users.claims === undefined && users.defaults === undefined) this.#byService.delete(key);
  }
}
