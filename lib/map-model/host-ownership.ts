import type { Problem } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { CATCH_ALL_HOST } from '../routing/route.ts';
import type { ObjectClaims } from './claim-types.ts';
import { quote } from '../object-fields/names.ts';
import { firstItem, withItem, withoutItem, type OneOrMore } from '../collections/one-or-more.ts';
import { aheadBy, compareStanding } from '../routing/precedence.ts';
import { NO_PROBLEMS } from './problems.ts';

/**
 * Which namespace each host belongs to: the namespace of the oldest
 * Ingress claiming it, by a rule or a TLS entry alike. Ingresses of other
 * namespaces are refused that host (their rules for it and their TLS
 * entries for it), unless both namespaces are allowed to share hosts. So a
 * tenant can neither take another's routes nor have its certificate served
 * for another's host. Rules without a host (the catch-all) belong to no
 * one: their paths are settled route by route, as before.
 *
 * Kept from one build to the next: a settle looks only at the hosts whose
 * claims changed, and tells which Ingresses gained or lost which hosts.
 * Whether an Ingress may serve a host follows from the host's owner, so
 * nothing is kept per Ingress.
 */

/** Who may share hosts across namespaces: these namespaces with each other, or everyone with `*`. */
export type HostSharing = readonly string[];

const SHARED = '\u0000shared';

interface HostClaim {
  /** Every served Ingress claiming the host; the oldest first once settled. */
  claimers: OneOrMore<ObjectClaims>;
  /** Claimers added since the last settle: they serve nothing of it yet. */
  added: OneOrMore<ObjectClaims> | undefined;
  /** The group (namespace, or the shared group) of the oldest, as of the last settle. */
  owner: string | undefined;
}

function includes<T extends object>(items: OneOrMore<T> | undefined, item: T): boolean {
  return items === item || (Array.isArray(items) && items.includes(item));
}

export class HostOwnership {
  readonly #sharing: HostSharing;
  readonly #shared: ReadonlySet<string>;
  readonly #everyone: boolean;
  readonly #hosts = new Map<string, HostClaim>();
  readonly #touched = new Set<string>();

  constructor(sharing: HostSharing) {
    this.#sharing = sharing;
    this.#shared = new Set(sharing);
    this.#everyone = sharing.includes('*');
  }

  /** Whether this is the sharing it was made with (a change of setting needs a fresh one). */
  sameSharing(sharing: HostSharing): boolean {
    return sharing.length === this.#sharing.length && sharing.every((namespace, i) => namespace === this.#sharing[i]);
  }

  groupOf(namespace: string): string {
    return this.#everyone || this.#shared.has(namespace) ? SHARED : namespace;
  }

  /** An object of its own group (HTTPRoutes) shares with everyone only when everyone shares. */
  #groupOfRead(read: ObjectClaims): string {
    const own = read.served!.hostGroup;
    return own === undefined ? this.groupOf(read.served!.namespace) : this.#everyone ? SHARED : own;
  }

  /** A served Ingress's claims came. */
  add(read: ObjectClaims): void {
    for (const host of read.served!.hostKeys) {
      const claim = this.#hosts.get(host);
      if (!claim) this.#hosts.set(host, { claimers: read, added: read, owner: undefined });
      else {
        claim.claimers = withItem(claim.claimers, read);
        claim.added = withItem(claim.added, read);
      }
      this.#touched.add(host);
    }
  }

  /** A served Ingress's claims went; `withdraw` is told each host it could serve. */
  remove(read: ObjectClaims, withdraw: (read: ObjectClaims, host: string) => void): void {
    for (const host of read.served!.hostKeys) {
      if (this.admitted(read, host)) withdraw(read, host);
      const claim = this.#hosts.get(host)!;
      if (includes(claim.added, read)) claim.added = withoutItem(claim.added!, read);
      const rest = withoutItem(claim.claimers, read);
      if (rest) claim.claimers = rest;
      else this.#hosts.delete(host);
      this.#touched.add(host);
    }
  }

  /**
   * Settles the hosts whose claims changed: each claimer of the owner's
   * group may serve the host, the others not. `grant` and `withdraw` are
   * told what changed; returns the Ingresses whose refusals may read
   * differently now, and the hosts settled.
   */
  settle(
    grant: (read: ObjectClaims, host: string) => void,
    withdraw: (read: ObjectClaims, host: string) => void,
  ): { readonly refusals: Set<ObjectClaims>; readonly hosts: readonly string[] } {
    const refusals = new Set<ObjectClaims>();
    const hosts = [...this.#touched];
    this.#touched.clear();
    for (const host of hosts) {
      const claim = this.#hosts.get(host);
      if (!claim) continue;
      if (Array.isArray(claim.claimers)) claim.claimers.sort((a, b) => compareStanding(a.place, b.place));
      const claimers = Array.isArray(claim.claimers) ? claim.claimers : [claim.claimers];
      const before = claim.owner;
      const owner = this.#groupOfRead(claimers[0]!);
      for (const read of claimers) {
        const group = this.#groupOfRead(read);
        const had = !includes(claim.added, read) && (host === CATCH_ALL_HOST || group === before);
        const may = host === CATCH_ALL_HOST || group === owner;
        if (may && !had) grant(read, host);
        else if (!may && had) withdraw(read, host);
        if (!may || owner !== before) refusals.add(read);
      }
      claim.owner = owner;
      claim.added = undefined;
    }
    return { refusals, hosts };
  }

  /** Whether an Ingress may serve a host, as of the last settle. */
  admitted(read: ObjectClaims, host: string): boolean {
    const claim = this.#hosts.get(host);
    if (!claim || includes(claim.added, read) || !includes(claim.claimers, read)) return false;
    return host === CATCH_ALL_HOST || this.#groupOfRead(read) === claim.owner;
  }

  /** The group a host belongs to, as of the last settle. */
  ownerOf(host: string): string | undefined {
    return this.#hosts.get(host)?.owner;
  }

  /** The claimed hosts another group than `group` holds (the catch-all, which no SNI name is, left out). */
  hostsHeldOutside(group: string): string[] {
    const held: string[] = [];
    for (const [host, claim] of this.#hosts) if (claim.owner !== undefined && claim.owner !== group && host !== CATCH_ALL_HOST) held.push(host);
    return held;
  }

  /** The claimed hosts one label below `domain` (those `*.domain` covers): looked for only for wildcard certificates. */
  *hostsUnder(domain: string): Generator<string> {
    for (const host of this.#hosts.keys()) if (parentOf(host) === domain) yield host;
  }

  /** What an Ingress is refused, field by field: its rules and TLS hosts for hosts another namespace holds. */
  refusalsOf(read: ObjectClaims): readonly Problem[] {
    const served = read.served!;
    let problems: Problem[] | undefined;
    const holder = (host: string) => {
      const first = firstItem(this.#hosts.get(host)!.claimers);
      const oldest = first.served!;
      return `host ${quote(host)} belongs to namespace ${oldest.namespace}: ${aheadBy(first.place, read.place, oldest.label)} claims it`;
    };
    for (const entry of served.hosts) {
      if (this.admitted(read, entry.host)) continue;
      (problems ??= []).push({ object: served.label, field: sourceOf(entry)!.field, message: `${holder(entry.host)}; rule not served` });
    }
    for (const claim of served.tls) {
      claim.hosts.forEach((host, i) => {
        if (!this.admitted(read, host)) (problems ??= []).push({ object: served.label, field: claim.hostFields[i]!, message: `${holder(host)}; TLS entry not served for it` });
      });
    }
    return problems ?? NO_PROBLEMS;
  }
}

/** A group of host ownership in words: a namespace's Ingresses, or those of the namespaces sharing hosts. */
export function describeGroup(group: string): string {
  return group === SHARED ? 'the Ingresses of the namespaces sharing hosts' : `the Ingresses of namespace ${group}`;
}

/** The domain a host is one label below; undefined for the catch-all and wildcards. */
export function parentOf(host: string): string | undefined {
  if (host === CATCH_ALL_HOST || host.startsWith('*.')) return undefined;
  const dot = host.indexOf('.');
  return dot < 0 ? undefined : host.slice(dot + 1);
}
