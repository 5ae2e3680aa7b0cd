import { compareCodeUnits } from '../compare.ts';
import type { Problem } from '../pipeline/model.ts';
import { describeGroup, parentOf, type HostOwnership } from './host-ownership.ts';
import { HTTP_ROUTE_HOST_GROUP } from '../routing/translated.ts';
import { quote } from '../object-fields/names.ts';
import { NO_PROBLEMS, Referrers } from './problems.ts';
import type { ClientCaUse, ListenerCertificate, SecretUse } from './types.ts';

/** The Secrets HTTPS listeners name, as uses, and the names they were refused. */
export interface ListenerUses {
  readonly uses: readonly SecretUse[];
  readonly warnings: readonly Problem[];
  /** The Secret of the certificate for names no crt-list line lists (see lib/gateway/certificates.ts), with its referrer. */
  readonly fallback: Pick<SecretUse, 'namespace' | 'name' | 'referrers' | 'fallbackClientCa'> | undefined;
}

/**
 * The certificates HTTPS listeners ask for (lib/gateway/certificates.ts),
 * used as TLS entries' Secrets are (secret-uses.ts): one crt-list line per
 * Secret, for the SNI names its listeners ask for that HTTPRoutes may
 * serve. A listener's certificate must not answer for another tenant's
 * host any more than an Ingress's may: a name an Ingress namespace holds
 * (host-ownership.ts) is left out of its line, with a warning naming the
 * listener, and a wildcard's line excludes (`!host`) the hosts one label
 * below it that such a namespace holds. A host's client certificates are
 * asked for as the first listener naming it validates them. Made again
 * only when the claims change or a host they cover changes hands.
 */
export class ListenerSecretUses {
  readonly #ownership: HostOwnership;
  #last: { readonly content: string; readonly hosts: ReadonlySet<string>; readonly uses: ListenerUses } | undefined;
  #touched = false;

  constructor(ownership: HostOwnership) {
    this.#ownership = ownership;
  }

  /** Hosts changed hands: the uses are made again when one is a name the listeners ask for, or one label below a wildcard they ask for. */
  changedHands(hosts: readonly string[]): void {
    const asked = this.#last?.hosts;
    if (this.#touched || asked === undefined || asked.size === 0) return;
    for (const host of hosts) {
      const parent = parentOf(host);
      if (asked.has(host) || (parent !== undefined && asked.has(`*.${parent}`))) {
        this.#touched = true;
        return;
      }
    }
  }

  /**
   * The hosts groups other than the HTTPRoutes' hold, as of the last settle:
   * beside a fallback certificate, those no certificate of their own lists
   * are refused rather than answered with it.
   */
  heldElsewhere(): string[] {
    const group = this.#ownership.groupOf(HTTP_ROUTE_HOST_GROUP);
    return this.#ownership.hostsHeldOutside(group);
  }

  /** The uses for these claims, as of the last settle of host ownership: the last ones while nothing they depend on moved. */
  uses(claims: readonly ListenerCertificate[]): ListenerUses {
    const content = JSON.stringify(claims);
    if (this.#last?.content === content && !this.#touched) return this.#last.uses;
    this.#touched = false;
    const group = this.#ownership.groupOf(HTTP_ROUTE_HOST_GROUP);
    const holder = (host: string): string | undefined => {
      const owner = this.#ownership.ownerOf(host);
      return owner === undefined || owner === group ? undefined : owner;
    };
    const asked = new Set<string>();
    const warnings: Problem[] = [];
    let fallback: ListenerUses['fallback'];
    const bySecret = new Map<
      string,
      { readonly namespace: string; readonly name: string; readonly hosts: Set<string>; readonly referrers: Referrers; readonly clientCas: Record<string, ClientCaUse> }
    >();
    const validated = new Set<string>();
    for (const claim of claims) {
      const key = `${claim.namespace}/${claim.name}`;
      let use = bySecret.get(key);
      if (!use) bySecret.set(key, (use = { namespace: claim.namespace, name: claim.name, hosts: new Set(), referrers: new Referrers(), clientCas: {} }));
      let served = false;
      if (claim.fallback && fallback === undefined) {
        const referrers = new Referrers();
        referrers.add(claim.label, claim.field);
        fallback = { namespace: claim.namespace, name: claim.name, referrers, ...(claim.clientCa ? { fallbackClientCa: claim.clientCa } : {}) };
      }
      for (const host of claim.hosts) {
        asked.add(host);
        const owner = holder(host);
        if (owner === undefined) {
          use.hosts.add(host);
          served = true;
          if (!validated.has(host) && claim.clientCa) use.clientCas[host] = claim.clientCa;
          validated.add(host);
        } else {
          warnings.push({ object: claim.label, field: claim.field, message: `not served for host ${quote(host)}: it belongs to ${describeGroup(owner)}` });
        }
      }
      if (served) use.referrers.add(claim.label, claim.field);
    }
    const uses: SecretUse[] = [];
    for (const { namespace, name, hosts, referrers, clientCas } of bySecret.values()) {
      if (hosts.size === 0) continue;
      const excluded = new Set<string>();
      for (const host of hosts) {
        if (!host.startsWith('*.')) continue;
        for (const below of this.#ownership.hostsUnder(host.slice(2))) if (holder(below) !== undefined) excluded.add(below);
      }
      const client = Object.keys(clientCas).length > 0 ? { clientCas } : {};
      uses.push({ namespace, name, hosts: [...hosts].sort(compareCodeUnits), excludedHosts: [...excluded].sort(compareCodeUnits), referrers, ...client });
    }
    const result = { uses, warnings: warnings.length > 0 ? warnings : NO_PROBLEMS, fallback };
    this.#last = { content, hosts: asked, uses: result };
    return result;
  }
}
