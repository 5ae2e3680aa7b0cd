import { compareCodeUnits } from '../compare.ts';
import { parentOf, type HostOwnership } from './host-ownership.ts';
import type { ObjectClaims } from './claim-types.ts';
import { ListenerSecretUses } from './listener-secret-uses.ts';
import { compareStanding } from '../routing/precedence.ts';
import { Referrers } from './problems.ts';
import type { ClientCaUse, SecretUse } from './types.ts';

/**
 * The Secrets that served TLS entries name, and the SNI names each may be
 * served for: the hosts its Ingresses' namespace holds, and none of its
 * wildcards' hosts that other namespaces hold. Updated per Ingress that
 * came or went and per host that changed hands; settle() makes again only
 * the uses that those touched.
 */
export class SecretUses {
  readonly #ownership: HostOwnership;
  /** Per Secret ("namespace/name"), the served Ingresses naming it. */
  readonly #users = new Map<string, { readonly namespace: string; readonly name: string; readonly users: Set<ObjectClaims> }>();
  readonly #uses = new Map<string, SecretUse>();
  /** Per host, the Secrets whose SNI names hold it (wildcards included): who to look at again when it changes hands. */
  readonly #byHost = new Map<string, Set<string>>();
  /** Wildcard hosts among those: without any, no change of hands touches a certificate. */
  #wildcards = 0;
  readonly #touched = new Set<string>();
  /** The Secrets HTTPS listeners name, under the same host ownership. */
  readonly listeners: ListenerSecretUses;

  constructor(ownership: HostOwnership) {
    this.#ownership = ownership;
    this.listeners = new ListenerSecretUses(ownership);
  }

  /** A served Ingress came: the Secrets its TLS entries name count it among their users. */
  add(read: ObjectClaims): void {
    const served = read.served!;
    for (const tls of served.tls) {
      const id = `${served.namespace}/${tls.secretName}`;
      let secret = this.#users.get(id);
      if (!secret) this.#users.set(id, (secret = { namespace: served.namespace, name: tls.secretName, users: new Set() }));
      secret.users.add(read);
      this.#touched.add(id);
    }
  }

  remove(read: ObjectClaims): void {
    const served = read.served!;
    for (const tls of served.tls) {
      const id = `${served.namespace}/${tls.secretName}`;
      const secret = this.#users.get(id);
      if (secret?.users.delete(read) && secret.users.size === 0) this.#users.delete(id);
      this.#touched.add(id);
    }
  }

  /** The Ingress may now serve the host, or no longer: its TLS entries naming the host are looked at again. */
  touchNaming(read: ObjectClaims, host: string): void {
    const served = read.served!;
    for (const tls of served.tls) if (tls.hosts.includes(host)) this.#touched.add(`${served.namespace}/${tls.secretName}`);
  }

  /** Hosts changed hands: certificates for wildcards over them are looked at again. */
  changedHands(hosts: readonly string[]): void {
    this.listeners.changedHands(hosts);
    if (this.#wildcards === 0) return;
    for (const host of hosts) {
      const parent = parentOf(host);
      for (const id of (parent === undefined ? undefined : this.#byHost.get(`*.${parent}`)) ?? []) this.#touched.add(id);
    }
  }

  /** The uses after what was touched since the last call; undefined when nothing was. */
  settle(): readonly SecretUse[] | undefined {
    if (this.#touched.size === 0) return undefined;
    for (const id of this.#touched) {
      const secret = this.#users.get(id);
      if (!secret) {
        this.#uses.delete(id);
        continue;
      }
      const { namespace, name, users } = secret;
      // Referrers in Ingress order, each Ingress's entries in spec order, as a fresh build meets
      // them: the order decides which field is named when two Ingresses share a label.
      const referrers = new Referrers();
      const hosts = new Set<string>();
      // A host's client certificates are asked for on its crt-list line: the oldest Ingress asking decides.
      const clientCas: Record<string, ClientCaUse> = {};
      for (const user of [...users].sort((a, b) => compareStanding(a.place, b.place))) {
        const served = user.served!;
        const clientCa = served.settings.route.clientCertificate?.ca;
        for (const tls of served.tls) {
          if (tls.secretName !== name) continue;
          const admitted = tls.hosts.filter((host) => this.#ownership.admitted(user, host));
          for (const host of admitted) {
            hosts.add(host);
            if (clientCa !== undefined) clientCas[host] ??= { ca: clientCa, verify: 'optional' };
          }
          if (admitted.length > 0) referrers.add(served.label, tls.field);
        }
      }
      this.#indexHosts(id, this.#uses.get(id)?.hosts ?? [], hosts);
      if (hosts.size === 0) {
        this.#uses.delete(id);
        continue;
      }
      // A wildcard line would also answer for the hosts below it that other namespaces hold.
      const group = this.#ownership.groupOf(namespace);
      const excluded = new Set<string>();
      for (const host of hosts) {
        if (!host.startsWith('*.')) continue;
        for (const below of this.#ownership.hostsUnder(host.slice(2))) if (this.#ownership.ownerOf(below) !== group) excluded.add(below);
      }
      this.#uses.set(id, {
        namespace,
        name,
        hosts: [...hosts].sort(compareCodeUnits),
        excludedHosts: [...excluded].sort(compareCodeUnits),
        referrers,
        ...(Object.keys(clientCas).length > 0 ? { clientCas } : {}),
      });
    }
    this.#touched.clear();
    return Array.from(this.#uses.values());
  }

  #indexHosts(id: string, before: readonly string[], after: ReadonlySet<string>): void {
    for (const host of before) {
      if (after.has(host)) continue;
      const ids = this.#byHost.get(host)!;
      ids.delete(id);
      if (ids.size > 0) continue;
      this.#byHost.delete(host);
      if (host.startsWith('*.')) this.#wildcards--;
    }
    for (const host of after) {
      let ids = this.#byHost.get(host);
      if (!ids) {
        this.#byHost.set(host, (ids = new Set()));
        if (host.startsWith('*.')) this.#wildcards++;
      }
      ids.add(id);
    }
  }
}
