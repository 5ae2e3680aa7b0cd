import type { Problem } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { CATCH_ALL_HOST, type IngressRead } from './ingress-reader.ts';
import { quote } from './names.ts';
import { firstItem, withItem, withoutItem, type OneOrMore } from './one-or-more.ts';
import { olderFirst } from './order.ts';
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
 */

/** Who may share hosts across namespaces: these namespaces with each other, or everyone with `*`. */
export type HostSharing = readonly string[];

const SHARED = '\u0000shared';

interface HostClaim {
  /** Every served Ingress claiming the host; the oldest first once settled. */
  claimers: OneOrMore<IngressRead>;
  /** The group (namespace, or the shared group) of the oldest, as of the last settle. */
  owner: string | undefined;
}

export class HostOwnership {
  readonly #sharing: HostSharing;
  readonly #everyone: boolean;
  readonly #hosts = new Map<string, HostClaim>();
  /** Per Ingress, the hosts it may serve now. */
  readonly #admitted = new Map<IngressRead, Set<string>>();
  /** Per parent domain ("example.com" for "shop.example.com"), its claimed hosts one label down: what a wildcard covers. */
  readonly #byParent = new Map<string, Set<string>>();
  readonly #touched = new Set<string>();

  constructor(sharing: HostSharing) {
    this.#sharing = sharing;
    this.#everyone = sharing.includes('*');
  }

  /** Whether this is the sharing it was made with (a change of setting needs a fresh one). */
  sameSharing(sharing: HostSharing): boolean {
    return sharing.length === this.#sharing.length && sharing.every((namespace, i) => namespace === this.#sharing[i]);
  }

  groupOf(namespace: string): string {
    return this.#everyone || this.#sharing.includes(namespace) ? SHARED : namespace;
  }

  /** A served Ingress's claims came. */
  add(read: IngressRead): void {
    this.#admitted.set(read, new Set());
    for (const host of read.served!.hostKeys) {
      let claim = this.#hosts.get(host);
      if (!claim) {
        this.#hosts.set(host, (claim = { claimers: read, owner: undefined }));
        const parent = parentOf(host);
        if (parent !== undefined) {
          let hosts = this.#byParent.get(parent);
          if (!hosts) this.#byParent.set(parent, (hosts = new Set()));
          hosts.add(host);
        }
      } else {
        claim.claimers = withItem(claim.claimers, read);
      }
      this.#touched.add(host);
    }
  }

  /** A served Ingress's claims went; `withdraw` is told each host it could serve. */
  remove(read: IngressRead, withdraw: (read: IngressRead, host: string) => void): void {
    const admitted = this.#admitted.get(read)!;
    this.#admitted.delete(read);
    for (const host of read.served!.hostKeys) {
      if (admitted.has(host)) withdraw(read, host);
      const claim = this.#hosts.get(host)!;
      const rest = withoutItem(claim.claimers, read);
      if (rest) claim.claimers = rest;
      else {
        this.#hosts.delete(host);
        const parent = parentOf(host);
        const siblings = parent === undefined ? undefined : this.#byParent.get(parent);
        siblings?.delete(host);
        if (siblings?.size === 0) this.#byParent.delete(parent!);
      }
      this.#touched.add(host);
    }
  }

  /**
   * Settles the hosts whose claims changed: each claimer of the owner's
   * group may serve the host, the others not. `grant` and `withdraw` are
   * told what changed; returns the Ingresses whose refusals may read
   * differently now, and the hosts settled.
   */
  settle(grant: (read: IngressRead, host: string) => void, withdraw: (read: IngressRead, host: string) => void): { readonly refusals: Set<IngressRead>; readonly hosts: readonly string[] } {
    const refusals = new Set<IngressRead>();
    const hosts = [...this.#touched];
    this.#touched.clear();
    for (const host of hosts) {
      const claim = this.#hosts.get(host);
      if (!claim) continue;
      if (Array.isArray(claim.claimers)) claim.claimers.sort((a, b) => olderFirst(a.place, b.place));
      const claimers = Array.isArray(claim.claimers) ? claim.claimers : [claim.claimers];
      const owner = this.groupOf(claimers[0]!.served!.namespace);
      const ownerMoved = owner !== claim.owner;
      claim.owner = owner;
      for (const read of claimers) {
        const admitted = this.#admitted.get(read)!;
        const may = host === CATCH_ALL_HOST || this.groupOf(read.served!.namespace) === owner;
        if (may && !admitted.has(host)) {
          admitted.add(host);
          grant(read, host);
        } else if (!may && admitted.has(host)) {
          admitted.delete(host);
          withdraw(read, host);
        }
        if (!may) refusals.add(read);
        else if (ownerMoved) refusals.add(read);
      }
    }
    return { refusals, hosts };
  }

  admitted(read: IngressRead, host: string): boolean {
    return this.#admitted.get(read)?.has(host) ?? false;
  }

  /** The group a host belongs to, as of the last settle. */
  ownerOf(host: string): string | undefined {
    return this.#hosts.get(host)?.owner;
  }

  /** The claimed hosts one label below `domain` (those `*.domain` covers). */
  hostsUnder(domain: string): Iterable<string> {
    return this.#byParent.get(domain) ?? [];
  }

  /** What an Ingress is refused, field by field: its rules and TLS hosts for hosts another namespace holds. */
  refusalsOf(read: IngressRead): readonly Problem[] {
    const served = read.served!;
    const admitted = this.#admitted.get(read)!;
    if (admitted.size === served.hostKeys.length) return NO_PROBLEMS;
    const problems: Problem[] = [];
    const holder = (host: string) => {
      const oldest = firstItem(this.#hosts.get(host)!.claimers).served!;
      return `host ${quote(host)} belongs to namespace ${oldest.namespace}: older ${oldest.label} claims it`;
    };
    for (const entry of served.hosts) {
      if (!admitted.has(entry.host)) problems.push({ object: served.label, field: sourceOf(entry)!.field, message: `${holder(entry.host)}; rule not served` });
    }
    for (const claim of served.tls) {
      claim.hosts.forEach((host, i) => {
        if (!admitted.has(host)) problems.push({ object: served.label, field: claim.hostFields[i]!, message: `${holder(host)}; TLS entry not served for it` });
      });
    }
    return problems;
  }
}

/** The domain a host is one label below; undefined for the catch-all and wildcards. */
export function parentOf(host: string): string | undefined {
  if (host === CATCH_ALL_HOST || host.startsWith('*.')) return undefined;
  const dot = host.indexOf('.');
  return dot < 0 ? undefined : host.slice(dot + 1);
}
