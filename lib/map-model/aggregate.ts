import type { KubeObject, Problem } from '../pipeline/model.ts';
import { resolvedBackend, setBackend } from './backend-names.ts';
import { HostOwnership, type HostSharing } from './host-ownership.ts';
import type { BackendRef, ObjectClaims, RouteClaim } from './claim-types.ts';
import { compareCodeUnits } from '../compare.ts';
import { firstItem, withItem, withoutItem, type OneOrMore } from '../collections/one-or-more.ts';
import { NamedPortUsers } from './named-port-users.ts';
import { DefaultBackends } from './default-backends.ts';
import { NO_PROBLEMS, ProblemList, Referrers } from './problems.ts';
import { claimOrder, RouteClaims } from './route-claims.ts';
import { SecretUses } from './secret-uses.ts';
import { patchSorted } from '../collections/sorted-list.ts';
import type { HostEntry, Route, SecretUse } from './types.ts';
import { PolicyUses } from './policy-uses.ts';
import { ConditionalClaims, prefixOrder } from './route-lists.ts';
import { MirrorBackends } from './mirror-backends.ts';
import { backendUses } from './backend-choice.ts';
import { NOTHING_UNSERVED, unservedObjects } from './unserved.ts';

/**
 * What the served Ingresses decide together: which namespace each host
 * belongs to (see host-ownership.ts), hosts, routes and their conflicts,
 * which backends and Secrets are used and by whom, the default backend.
 * Kept from one build to the next and updated per Ingress that came, went
 * or changed, so a build after one change costs about as much as that
 * Ingress, whatever the number of others.
 */

/** What the changes applied since the last settle() changed. */
export interface AggregateChanges {
  /** False when no Ingress came, went or changed. */
  readonly any: boolean;
  /** Backends that came, went, or are asked for by other Ingresses than before. */
  readonly backends: ReadonlySet<string>;
}

/** How an Ingress of the served class is read; undefined for one of another class. */
export type ReadClaims = (ingress: KubeObject) => ObjectClaims | undefined;

/** The Service stored under a namespace and name: what a port named by an Ingress resolves against. */
export type ServiceLookup = (namespace: string, name: string) => KubeObject | undefined;

export class RouteAggregate {
  // The lists the model hands out are frozen, so a renderer may reuse what it made of them (see SafeWriter).
  /** Every distinct host key, sorted. */
  hosts: readonly HostEntry[] = Object.freeze([]);
  /** Winning regex-map lines, longest key first (map_reg takes the first match), ties by key. */
  regexRoutes: readonly Route[] = Object.freeze([]);
  /** Secrets named by served TLS entries, in no particular order. */
  secrets: readonly SecretUse[] = [];
  /** Problems of the Ingresses themselves, sorted. */
  excluded: readonly Problem[] = NO_PROBLEMS;
  /** Route conflicts and default backends not served, sorted. */
  warnings: readonly Problem[] = NO_PROBLEMS;
  /** The objects it serves nothing of (unserved.ts): a new set whenever that changes, never changed after. */
  unserved: ReadonlySet<KubeObject> = NOTHING_UNSERVED;

  /** The Ingresses of the served class, as read. */
  readonly #reads = new Map<KubeObject, ObjectClaims>();
  readonly #withProblems = new Map<ObjectClaims, KubeObject>();
  readonly #ownership: HostOwnership;
  /** Served Ingresses refused some host, and what they are told. */
  readonly #refused = new Map<ObjectClaims, readonly Problem[]>();
  /** Per host key, the entry first seen for it. */
  readonly #hosts = new Map<string, HostEntry>();
  /** Per host key named by more than one rule, how many more: most are named once. */
  readonly #hostRepeats = new Map<string, number>();
  readonly #claims = new RouteClaims();
  /** Path map lines (winners, and candidate lists in their place: route-lists.ts), candidates.map lines, conditions. */
  readonly routeLines = new ConditionalClaims(this.#claims);
  /** Per backend, the claims it wins: any one has its ref, all are its referrers. */
  readonly #routedTo = new Map<string, OneOrMore<RouteClaim>>();
  readonly #policies = new PolicyUses();
  readonly #mirrors = new MirrorBackends();
  readonly #defaults = new DefaultBackends();
  readonly secretUses: SecretUses;
  /** Per Service ("namespace/name"), those naming one of its ports by name. */
  readonly #namedPorts = new NamedPortUsers();

  // What changed since the last settle().
  /** Backends that gained or lost users outside a settle (a Service renamed their ports' backend). */
  #movedBackends = new Set<string>();
  #any = false;
  #problemsTouched = false;
  readonly #touchedHosts = new Set<string>();

  constructor(sharing: HostSharing = []) {
    this.#ownership = new HostOwnership(sharing);
    this.secretUses = new SecretUses(this.#ownership);
  }

  /** Whether it settles host ownership with this sharing (a change of setting needs a fresh aggregate). */
  sharesHostsAs(sharing: HostSharing): boolean {
    return this.#ownership.sameSharing(sharing);
  }

  /** Makes the Ingresses those of `list` that `read` accepts: reads the new ones, drops the gone. */
  sync(list: readonly KubeObject[], read: ReadClaims, lookup: ServiceLookup): void {
    if (this.#reads.size > 0) {
      const listed = new Set(list);
      for (const ingress of this.#reads.keys()) if (!listed.has(ingress)) this.#remove(ingress);
    }
    for (let i = 0; i < list.length; i++) {
      const ingress = list[i]!;
      if (this.#reads.has(ingress)) continue;
      const result = read(ingress);
      if (result) this.#add(ingress, result, lookup);
    }
  }

  /**
   * Brings the Ingresses named by `changed` (a store's change log: objects
   * as they were and as they are) in line with what `current` says is
   * stored under their namespace and name now.
   */
  update(changed: readonly KubeObject[], current: (ingress: KubeObject) => KubeObject | undefined, read: ReadClaims, lookup: ServiceLookup): void {
    for (let i = 0; i < changed.length; i++) {
      const ingress = changed[i]!;
      const now = current(ingress);
      if (now !== ingress && this.#reads.has(ingress)) this.#remove(ingress);
      if (now === undefined || this.#reads.has(now)) continue;
      const result = read(now);
      if (result) this.#add(now, result, lookup);
    }
  }

  /**
   * Resolves again the ports Ingresses name by name on the Services in
   * `touched` ("namespace/name"; undefined: on every Service), which changed:
   * a claim or default backend whose backend that renames moves to the new
   * one, and its map line is made again.
   */
  renamePorts(touched: ReadonlySet<string> | undefined, lookup: ServiceLookup): void {
    if (this.#namedPorts.size === 0) return;
    for (const key of touched ?? this.#namedPorts.services()) {
      const users = this.#namedPorts.of(key);
      if (!users) continue;
      const service = lookup(users.namespace, users.service);
      for (const claim of users.claims) {
        const resolved = resolvedBackend(claim.asked, service);
        if (resolved.name === claim.backend.name) continue;
        const routed = this.#claims.isWinner(claim);
        if (routed) this.#unroute(claim, this.#movedBackends);
        setBackend(claim, resolved);
        if (routed) this.#route(claim, this.#movedBackends);
        this.#claims.touch(claim);
        this.#any = true;
      }
      for (const read of users.defaults) {
        const fallback = read.served!.defaultBackend!;
        const resolved = resolvedBackend(fallback.asked, service);
        if (resolved.name === fallback.backend.name) continue;
        if (read === this.#defaults.served) this.#movedBackends.add(fallback.backend.name).add(resolved.name);
        fallback.backend = resolved;
        this.#defaults.touch();
        this.#any = true;
      }
    }
  }

  #add(ingress: KubeObject, read: ObjectClaims, lookup: ServiceLookup): void {
    this.#any = true;
    this.#reads.set(ingress, read);
    if (read.problems.length > 0) {
      this.#withProblems.set(read, ingress);
      this.#problemsTouched = true;
    }
    const served = read.served;
    if (!served) return;
    // Its hosts and routes count once the hosts are settled to be its namespace's (see #grant);
    // the backends of its routes are resolved now, so that a grant routes them to the right one.
    this.#ownership.add(read);
    for (let i = 0; i < served.routes.length; i++) {
      const claim = served.routes[i]!;
      if ('name' in claim.asked.port) {
        setBackend(claim, resolvedBackend(claim.asked, lookup(claim.asked.namespace, claim.asked.service)));
        this.#namedPorts.add(claim.asked, claim);
      }
    }
    if (served.defaultBackend) {
      const fallback = served.defaultBackend;
      if ('name' in fallback.asked.port) {
        fallback.backend = resolvedBackend(fallback.asked, lookup(fallback.asked.namespace, fallback.asked.service));
        this.#namedPorts.add(fallback.asked, read);
      }
      this.#defaults.add(read);
    }
    this.secretUses.add(read);
  }

  #remove(ingress: KubeObject): void {
    this.#any = true;
    const read = this.#reads.get(ingress)!;
    this.#reads.delete(ingress);
    if (this.#withProblems.delete(read)) this.#problemsTouched = true;
    const served = read.served;
    if (!served) return;
    this.#ownership.remove(read, (from, host) => this.#withdraw(from, host));
    if (this.#refused.delete(read)) this.#problemsTouched = true;
    for (let i = 0; i < served.routes.length; i++) {
      const claim = served.routes[i]!;
      if ('name' in claim.asked.port) this.#namedPorts.remove(claim.asked, claim);
    }
    if (served.defaultBackend) {
      if ('name' in served.defaultBackend.asked.port) this.#namedPorts.remove(served.defaultBackend.asked, read);
      this.#defaults.remove(read);
    }
    this.secretUses.remove(read);
  }

  /** An Ingress may serve a host now: its rules for it count, and its TLS entries naming it. */
  #grant(read: ObjectClaims, host: string): void {
    const served = read.served!;
    for (let i = 0; i < served.hosts.length; i++) {
      const entry = served.hosts[i]!;
      if (entry.host !== host) continue;
      if (!this.#hosts.has(host)) {
        this.#hosts.set(host, entry);
        this.#touchedHosts.add(host);
      } else {
        this.#hostRepeats.set(host, (this.#hostRepeats.get(host) ?? 0) + 1);
      }
    }
    // Claims with conditions (HTTPRoute matches) are candidates of lists, never winners alone.
    for (const claim of served.routes) if (claim.host === host) (claim.conditions ? this.routeLines : this.#claims).add(claim);
    this.secretUses.touchNaming(read, host);
  }

  /** An Ingress may no longer serve a host (it went, or an older Ingress of another namespace claims the host). */
  #withdraw(read: ObjectClaims, host: string): void {
    const served = read.served!;
    for (let i = 0; i < served.hosts.length; i++) {
      if (served.hosts[i]!.host !== host) continue;
      const repeats = this.#hostRepeats.get(host);
      if (repeats === undefined) {
        this.#hosts.delete(host);
        this.#touchedHosts.add(host);
      } else if (repeats === 1) {
        this.#hostRepeats.delete(host);
      } else {
        this.#hostRepeats.set(host, repeats - 1);
      }
    }
    for (const claim of served.routes) if (claim.host === host) (claim.conditions ? this.routeLines : this.#claims).remove(claim);
    this.secretUses.touchNaming(read, host);
  }

  /** Hosts changed hands: the Ingresses refused them are told so, and certificates for wildcards over them are looked at again. */
  #settleOwnership(): void {
    const { refusals, hosts } = this.#ownership.settle(
      (read, host) => this.#grant(read, host),
      (read, host) => this.#withdraw(read, host),
    );
    for (const read of refusals) {
      const problems = this.#ownership.refusalsOf(read);
      const before = this.#refused.get(read) ?? NO_PROBLEMS;
      if (problems.length === 0) this.#refused.delete(read);
      else this.#refused.set(read, problems);
      if (problems.length + before.length > 0) this.#problemsTouched = true;
    }
    this.secretUses.changedHands(hosts);
  }

  /** Settles what the Ingresses added and removed since the last call changed, and says what that was. */
  settle(): AggregateChanges {
    this.#settleOwnership();
    const backends = this.#movedBackends;
    this.#movedBackends = new Set();
    const { keys, warningsChanged } = this.#claims.settle((before, after) => {
      if (before) this.#unroute(before, backends);
      if (after) this.#route(after, backends);
    });
    const warningsMoved = this.#defaults.settle(backends) || warningsChanged;
    this.hosts = patchSorted(
      this.hosts,
      [...this.#touchedHosts],
      (host) => this.#hosts.get(host),
      () => this.#hosts.values(),
      (host) => host.host,
      compareCodeUnits,
    );
    const claims = this.#claims;
    this.regexRoutes = patchSorted(
      this.regexRoutes,
      keys.regex,
      (key) => claims.line('regex', key),
      () => claims.lines('regex'),
      (route) => route.key,
      prefixOrder,
    );
    const listWarningsMoved = this.routeLines.settle(
      keys,
      (claim) => this.#route(claim, backends),
      (claim) => this.#unroute(claim, backends),
    );
    if (this.#problemsTouched) {
      const list = new ProblemList();
      for (const read of this.#withProblems.keys()) list.addAll(read.problems);
      for (const problems of this.#refused.values()) list.addAll(problems);
      this.excluded = list.sorted();
      this.unserved = unservedObjects(this.#withProblems, this.#refused.keys(), this.#ownership);
    }
    if (warningsMoved || listWarningsMoved) {
      const list = new ProblemList();
      for (const problems of this.#claims.warnings()) list.addAll(problems);
      list.addAll(this.routeLines.warnings);
      list.addAll(this.#defaults.warnings);
      this.warnings = list.sorted();
    }
    this.#policies.settle();
    this.secrets = this.secretUses.settle() ?? this.secrets;
    const any = this.#any;
    this.#any = false;
    this.#problemsTouched = false;
    this.#touchedHosts.clear();
    return { any, backends };
  }

  /** A claim that wins its key: its backends have it among their users. */
  #route(claim: RouteClaim, moved: Set<string>): void {
    for (const { backend, policy } of backendUses(claim)) {
      this.#routedTo.set(backend.name, withItem(this.#routedTo.get(backend.name), claim));
      moved.add(backend.name);
      if (policy) this.#policies.add(policy);
    }
    this.#mirrors.add(claim, moved);
  }

  #unroute(claim: RouteClaim, moved: Set<string>): void {
    for (const { backend, policy } of backendUses(claim)) {
      const routed = withoutItem(this.#routedTo.get(backend.name)!, claim);
      if (routed) this.#routedTo.set(backend.name, routed);
      else this.#routedTo.delete(backend.name);
      moved.add(backend.name);
      if (policy) this.#policies.remove(policy);
    }
    this.#mirrors.remove(claim, moved);
  }

  /** The backend of this name, while something routes or mirrors requests to it or it is the default backend. */
  backend(name: string): BackendRef | undefined {
    const routed = this.#routedTo.get(name);
    if (routed) return backendUses(firstItem(routed)).find((use) => use.backend.name === name)!.backend;
    const fallback = this.#defaults.served?.served!.defaultBackend!.backend;
    return fallback?.name === name ? fallback : this.#mirrors.backend(name);
  }

  /** Every backend used, in no particular order. */
  backendNames(): string[] {
    const names = [...this.#routedTo.keys()];
    const fallback = this.defaultBackend;
    if (fallback !== undefined && !this.#routedTo.has(fallback)) names.push(fallback);
    for (const name of this.#mirrors.names()) if (!this.#routedTo.has(name) && name !== fallback) names.push(name);
    return names;
  }

  /** The policies of the winning claims (`list`: each once, sorted by key), their header slots and policies.map lines (route-policies.ts). */
  get policies(): Pick<PolicyUses, 'list' | 'slots' | 'lines' | 'settings'> {
    return this.#policies;
  }

  /** Backend of spec.defaultBackend of the oldest served Ingress that has one. */
  get defaultBackend(): string | undefined {
    return this.#defaults.served?.served!.defaultBackend!.backend.name;
  }

  /** Who uses a backend, in the order a fresh build meets them: the claims it wins, then the default backend's Ingress; with what they ask of it. */
  referrers(name: string): Referrers {
    const referrers = new Referrers();
    const routed = this.#routedTo.get(name);
    const claims = routed === undefined ? [] : Array.isArray(routed) ? [...routed].sort(claimOrder) : [routed];
    for (const claim of claims) referrers.add(claim.label, claim.field, { place: claim.place, settings: this.#reads.get(claim.ingress)!.served!.settings.backend });
    const served = this.#defaults.served?.served;
    if (served?.defaultBackend!.backend.name === name) referrers.add(served.label, served.defaultBackend!.field, { place: this.#defaults.served!.place, settings: served.settings.backend });
    return referrers;
  }
}
