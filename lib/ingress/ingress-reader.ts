import type { KubeObject, Problem, ValueSource } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { HostItem, ModelSource, RouteItem } from './model-source.ts';
import { isFields } from './fields.ts';
import { checkHost, checkPath, checkRegexPath, describeObject, isDnsLabel, isDnsSubdomain, isPortName, isPortNumber, quote } from './names.ts';
import { placeOf } from './order.ts';
import type { Ranked, Standing } from '../routing/precedence.ts';
import type { PathMatch, RouteHost } from '../routing/route.ts';
import { NO_PROBLEMS } from './problems.ts';
import type { RouteConditions } from './route-conditions.ts';
import type { BackendShare, HostEntry, Route } from './types.ts';
import { readAnnotationSettings } from '../annotations/read-settings.ts';
import { ingressClassOf } from '../kube-syntax/ingress-class.ts';
import { excludesObject, type ReadSettings } from '../annotations/settings.ts';
import { withBackendSource } from './backend-settings.ts';
import { escapeRegex, rewritesOwnPath, routePolicy, type RoutePolicy } from './route-policies.ts';

/**
 * Reading one Ingress: what it asks to be served, checked field by field.
 * Every string it keeps passed a check for where it lands (see names.ts);
 * whatever fails one becomes a Problem naming the field instead.
 */

/** The host key of rules without a host. */
export const CATCH_ALL_HOST = '*';
const CATCH_ALL_ENTRY: HostEntry = Object.freeze({ host: CATCH_ALL_HOST, wildcard: false });
const CATCH_ALL_RANK_HOST: RouteHost = Object.freeze({ key: CATCH_ALL_HOST, wildcard: 'none' });
const NO_MATCHES: readonly never[] = Object.freeze([]);

/** What one Ingress contributes, and its problems. */
export interface IngressRead {
  /** Undefined when a problem leaves the whole Ingress out. */
  readonly served: ServedIngress | undefined;
  readonly problems: readonly Problem[];
  readonly place: Standing;
}

export interface BackendRef {
  /** `<namespace>_<service>_<port>`: no part can hold '_', so one name is one (namespace, service, port); see backend-names.ts. */
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: { readonly name: string } | { readonly number: number };
  /**
   * A backend of several Services' servers, each Service's share of the
   * requests by weight (an HTTPRoute rule's weighted backendRefs; see
   * http-route-reads.ts): the name is the rule's, so a weight change is a
   * server weight change, not another backend.
   */
  readonly split?: readonly BackendShare[];
  /**
   * A choice made per request between Service backends, each with the
   * policy of its backendRef's own filters (http-route-reads.ts, see
   * backend-choice.ts): the name is the choice's map value, which carries
   * the weights, so a weight change is a map change.
   */
  readonly choice?: readonly ChoiceShare[];
}

/** One backendRef of a choice: its Service backend, share of the requests and policy (its rule's filters, then its own). */
export interface ChoiceShare {
  readonly backend: BackendRef;
  readonly weight: number;
  readonly policy: RoutePolicy | undefined;
}

/** One map line an Ingress asks for, before conflicts are settled. */
export interface RouteClaim {
  /** exact: path-exact.map; prefix: path-prefix.map; regex: path-regex.map (a path read as a regular expression). */
  readonly map: 'exact' | 'prefix' | 'regex';
  readonly key: string;
  /** The host key it is under (CATCH_ALL_HOST for rules without a host): served only while the Ingress may serve that host. */
  readonly host: string;
  /** The backend as the Ingress names it. */
  readonly asked: BackendRef;
  /**
   * The backend it resolves to, which the aggregate keeps in line with the
   * Service: a port named by the Ingress becomes the Service port's number
   * (see backend-names.ts). `asked` until the aggregate resolves it.
   */
  backend: BackendRef;
  /** An Exact path outranks the exact line a Prefix path adds for itself, as Kubernetes ranks Exact over Prefix. */
  readonly fromExactPath: boolean;
  /** The rule set its requests get (see route-policies.ts); undefined when its Ingress asks for no route setting. */
  readonly policy: RoutePolicy | undefined;
  /**
   * What a request must pass besides host and path (HTTPRoute header, query
   * parameter and method matches): such a claim never wins its key alone, it
   * is a candidate of the key's list (route-lists.ts).
   */
  readonly conditions?: RouteConditions | undefined;
  readonly field: string;
  /** The Ingress asking, and its label for messages. */
  readonly ingress: KubeObject;
  readonly label: string;
  /** Where the Ingress stands in conflicts. */
  readonly place: Standing;
  /** What precedence reads of it (lib/routing/precedence.ts): its HTTPRoute record, or its Ingress path's host, path and place among the Ingress's claims. */
  readonly rank: Ranked;
  /** The map line, made again only when `backend` changes: an unchanged route is the same object in every model. */
  line: Route;
}

export interface TlsClaim {
  readonly secretName: string;
  /** SNI names: the entry's hosts, or, when it names none, the hosts of the Ingress's rules. */
  readonly hosts: readonly string[];
  /** The field each host came from. */
  readonly hostFields: readonly string[];
  /** `spec.tls[i].secretName`. */
  readonly field: string;
}

/** An Ingress that passed every check, reduced to what it contributes. */
export interface ServedIngress {
  readonly label: string;
  readonly namespace: string;
  /** Its group in host ownership when not its namespace's (see host-ownership.ts): HTTPRoutes share one. */
  readonly hostGroup?: string;
  readonly hosts: readonly HostEntry[];
  /** Every host key it claims, by rules (CATCH_ALL_HOST for rules without a host) or TLS entries, each once. */
  readonly hostKeys: readonly string[];
  readonly routes: readonly RouteClaim[];
  /** `backend` as for a RouteClaim: resolved by the aggregate. */
  readonly defaultBackend: { readonly asked: BackendRef; backend: BackendRef; readonly field: string } | undefined;
  readonly tls: readonly TlsClaim[];
  /** What its annotations ask of its backends and routes. */
  readonly settings: ReadSettings;
}

export function servesClass(ingress: KubeObject, className: string): boolean {
  return ingressClassOf(ingress) === className;
}

/** Reads an Ingress of the served class. */
export function readIngress(ingress: KubeObject): IngressRead {
  const reader = new IngressReader(ingress);
  const served = reader.read();
  const problems = reader.problems.length + reader.tlsProblems.length === 0 ? NO_PROBLEMS : [...reader.problems, ...reader.tlsProblems];
  return { served, problems, place: reader.place };
}

/** Reads one Ingress; every field it cannot trust becomes a Problem instead. */
class IngressReader {
  readonly problems: Problem[] = [];
  /** Problems that leave out only a TLS entry, not the whole Ingress. */
  readonly tlsProblems: Problem[] = [];
  readonly label: string;
  readonly place: Standing;
  readonly #ingress: KubeObject;
  readonly #namespace: string;
  #claims = 0;
  /** The host of the rule being read, as precedence reads it. */
  #rankHost: RouteHost = CATCH_ALL_RANK_HOST;
  #settings: ReadSettings | undefined;
  /** The policy of the Ingress's routes, made once (a rewrite of the route's own path makes one per path instead). */
  #policy: RoutePolicy | undefined;
  /** The host key of the rule being read. */
  #hostKey = CATCH_ALL_HOST;

  constructor(ingress: KubeObject) {
    this.#ingress = ingress;
    this.place = placeOf(ingress);
    this.label = describeObject('Ingress', ingress.metadata.namespace, ingress.metadata.name);
    const namespace = ingress.metadata.namespace;
    if (!isDnsLabel(namespace)) this.#problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
    this.#namespace = isDnsLabel(namespace) ? namespace : '';
  }

  read(): ServedIngress | undefined {
    const spec = this.#ingress['spec'] ?? {};
    if (!isFields(spec)) {
      this.#problem('spec', 'is not an object');
      return undefined;
    }
    const tlsEntries = spec['tls'];
    // Both controllers redirect an Ingress with TLS to HTTPS unless told not to.
    const settings = readAnnotationSettings(this.#ingress.metadata.annotations, {
      namespace: this.#namespace,
      tls: Array.isArray(tlsEntries) && tlsEntries.length > 0,
    });
    this.#settings = settings;
    const defaultBackend = spec['defaultBackend'] === undefined || spec['defaultBackend'] === null ? undefined : this.#backend(spec['defaultBackend'], 'spec.defaultBackend', '');
    const hosts: HostEntry[] = [];
    const routes: RouteClaim[] = [];
    const rules = this.#list(spec['rules'], 'spec.rules');
    for (let index = 0; index < rules.length; index++) this.#rule(rules[index], `spec.rules[${index}]`, hosts, routes);
    const tls: TlsClaim[] = [];
    const entries = this.#list(spec['tls'], 'spec.tls', this.tlsProblems);
    for (let index = 0; index < entries.length; index++) this.#tls(entries[index], `spec.tls[${index}]`, tls, hosts);
    // An invalid value is never written: its Ingress is left out, named with the annotation.
    for (const outcome of settings.outcomes) {
      if (excludesObject(outcome)) this.#problem(`metadata.annotations['${outcome.annotation}']`, `${quote(outcome.value)}: ${outcome.reason}`);
    }
    if (this.problems.length > 0) return undefined;
    const hostKeys = new Set<string>();
    for (const host of hosts) hostKeys.add(host.host);
    for (const claim of tls) for (const host of claim.hosts) hostKeys.add(host);
    return {
      label: this.label,
      namespace: this.#namespace,
      hosts,
      hostKeys: [...hostKeys],
      routes,
      defaultBackend: defaultBackend && { asked: defaultBackend, backend: defaultBackend, field: 'spec.defaultBackend' },
      tls,
      settings: withBackendSource(settings, this.#ingress),
    };
  }

  #problem(field: string, message: string, into: Problem[] = this.problems): void {
    into.push({ object: this.label, field, message });
  }

  /** An optional list: absent is empty, anything but a list is a problem. */
  #list(value: unknown, field: string, into: Problem[] = this.problems): readonly unknown[] {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    this.#problem(field, 'is not a list', into);
    return [];
  }

  #rule(rule: unknown, field: string, hosts: HostEntry[], routes: RouteClaim[]): void {
    if (!isFields(rule)) return this.#problem(field, 'is not an object');
    let hostKey = CATCH_ALL_HOST;
    if (rule['host'] === undefined || rule['host'] === null || rule['host'] === '') {
      hosts.push(CATCH_ALL_ENTRY);
    } else {
      const host = checkHost(rule['host']);
      if (!host.ok) return this.#problem(`${field}.host`, `invalid host: ${host.reason}`);
      hostKey = host.value.host;
      hosts.push(Object.freeze(new HostItem(host.value.host, host.value.wildcard, this.#source(`${field}.host`))));
    }
    this.#hostKey = hostKey;
    this.#rankHost = hostKey === CATCH_ALL_HOST ? CATCH_ALL_RANK_HOST : Object.freeze({ key: hostKey, wildcard: hostKey.startsWith('*.') ? 'one-label' : 'none' });
    const http = rule['http'];
    if (http === undefined || http === null) return;
    if (!isFields(http)) return this.#problem(`${field}.http`, 'is not an object');
    const paths = http['paths'];
    if (paths === undefined || paths === null) return;
    if (!Array.isArray(paths)) return this.#problem(`${field}.http.paths`, 'is not a list');
    for (let index = 0; index < paths.length; index++) this.#path(paths[index], `${field}.http.paths[${index}]`, hostKey, routes);
  }

  /**
   * Exact: one exact line. Prefix (and ImplementationSpecific, served as
   * Prefix): Kubernetes matches element-wise, so '/foo' matches '/foo' and
   * '/foo/bar' but not '/foobar': an exact line for '/foo' and a prefix line
   * for '/foo/'; '/' is the prefix line '/' alone.
   */
  #path(path: unknown, field: string, hostKey: string, routes: RouteClaim[]): void {
    if (!isFields(path)) return this.#problem(field, 'is not an object');
    const pathType = path['pathType'] ?? 'ImplementationSpecific';
    if (pathType !== 'Exact' && pathType !== 'Prefix' && pathType !== 'ImplementationSpecific') {
      return this.#problem(`${field}.pathType`, `${quote(pathType)} is not Exact, Prefix or ImplementationSpecific`);
    }
    // Only ImplementationSpecific may leave the path out; it then means everything.
    const given = path['path'];
    const omitted = given === undefined || given === null || given === '';
    // nginx's use-regex (and rewrite-target with captures) reads every path but Exact ones as a regular expression.
    const regex = pathType !== 'Exact' && this.#settings!.route.regexPath === true;
    const checked = (regex ? checkRegexPath : checkPath)(omitted && pathType === 'ImplementationSpecific' ? '/' : given);
    if (!checked.ok) this.#problem(`${field}.path`, `invalid path: ${checked.reason}`);
    const backend = this.#backend(path['backend'], field, '.backend');
    if (!checked.ok || !backend) return;
    // The lines of one path share their source.
    const source = this.#source(field);
    const policy = this.#policyOf(checked.value);
    if (pathType === 'Exact') {
      routes.push(this.#claim('exact', hostKey + checked.value, { kind: 'exact', value: checked.value }, backend, policy, true, field, source));
      return;
    }
    if (regex) {
      // Matched against "<host key><path>" from its start, case-insensitive as nginx's `location ~*`.
      routes.push(this.#claim('regex', `(?i)^${escapeRegex(hostKey)}${checked.value}`, { kind: 'regex', value: checked.value }, backend, policy, false, field, source));
      return;
    }
    let end = checked.value.length;
    while (end > 0 && checked.value.charCodeAt(end - 1) === 47) end--;
    const trimmed = checked.value.slice(0, end);
    // Kept as lib/routing/route.ts keeps a prefix: without a trailing '/' but for the root.
    const prefix: PathMatch = { kind: 'prefix', value: trimmed === '' ? '/' : trimmed };
    if (trimmed !== '') routes.push(this.#claim('exact', hostKey + trimmed, prefix, backend, policy, false, field, source));
    routes.push(this.#claim('prefix', `${hostKey}${trimmed}/`, prefix, backend, policy, false, field, source));
  }

  /** The policy of a path's routes: the Ingress's settings (and the path, for a rewrite of the route's own path). */
  #policyOf(path: string): RoutePolicy | undefined {
    const route = this.#settings!.route;
    if (rewritesOwnPath(route)) return routePolicy(route, path, this.#source('metadata.annotations'));
    this.#policy ??= routePolicy(route, path, this.#source('metadata.annotations'));
    return this.#policy;
  }

  #source(field: string): ValueSource {
    return new ModelSource('Ingress', this.#ingress, field);
  }

  #claim(map: RouteClaim['map'], key: string, path: PathMatch, backend: BackendRef, policy: RoutePolicy | undefined, fromExactPath: boolean, field: string, source: ValueSource): RouteClaim {
    const line = Object.freeze(new RouteItem(key, backend.name, policy, source));
    const host = this.#hostKey;
    // An Ingress's paths are its rules, in order (lib/routing/precedence.ts).
    const rank: Ranked = { host: this.#rankHost, path, method: undefined, headers: NO_MATCHES, query: NO_MATCHES, origin: { ...this.place, rule: this.#claims++, match: 0 } };
    return { map, key, host, asked: backend, backend, fromExactPath, policy, field, ingress: this.#ingress, label: this.label, place: this.place, rank, line };
  }

  /**
   * A Service backend at `owner` + `suffix` (joined only for a message: most
   * backends have none); undefined, with the problems recorded, when any part
   * fails its check.
   */
  #backend(backend: unknown, owner: string, suffix: string): BackendRef | undefined {
    if (!isFields(backend)) {
      this.#problem(`${owner}${suffix}`, 'is not an object');
      return undefined;
    }
    if (backend['resource'] !== undefined && backend['resource'] !== null) {
      this.#problem(`${owner}${suffix}.resource`, 'resource backends are not supported; use a Service');
      return undefined;
    }
    const service = backend['service'];
    if (!isFields(service)) {
      this.#problem(`${owner}${suffix}.service`, 'is missing');
      return undefined;
    }
    const name = service['name'];
    if (!isDnsLabel(name)) this.#problem(`${owner}${suffix}.service.name`, `${quote(name)} is not a Service name`);
    const port = this.#port(service['port'], owner, suffix);
    if (!isDnsLabel(name) || !port || this.#namespace === '') return undefined;
    return { name: `${this.#namespace}_${name}_${portText(port)}`, namespace: this.#namespace, service: name, port };
  }

  /** The port of the backend at `owner` + `suffix`. */
  #port(port: unknown, owner: string, suffix: string): BackendRef['port'] | undefined {
    const name = isFields(port) ? (port['name'] ?? undefined) : undefined;
    const number = isFields(port) ? (port['number'] ?? undefined) : undefined;
    if ((name === undefined) === (number === undefined)) {
      this.#problem(`${owner}${suffix}.service.port`, 'needs exactly one of name and number');
    } else if (name !== undefined) {
      if (isPortName(name)) return { name };
      this.#problem(`${owner}${suffix}.service.port.name`, `${quote(name)} is not a port name (1-15 of a-z, 0-9 and '-', with a letter)`);
    } else {
      if (isPortNumber(number)) return { number };
      this.#problem(`${owner}${suffix}.service.port.number`, `${quote(number)} is not a port number (1-65535)`);
    }
    return undefined;
  }

  /**
   * A TLS entry; its problems leave out only the entry. Without secretName
   * it asks for nothing to serve; without hosts it is for the hosts of the
   * Ingress's rules, since a certificate line without SNI names would be
   * served for whatever names the certificate holds, another tenant's too.
   */
  #tls(entry: unknown, field: string, claims: TlsClaim[], ruleHosts: readonly HostEntry[]): void {
    const into = this.tlsProblems;
    if (!isFields(entry)) {
      this.#problem(field, 'is not an object', into);
      return;
    }
    const secretName = entry['secretName'];
    if (secretName === undefined || secretName === null || secretName === '') return;
    const before = into.length;
    if (!isDnsSubdomain(secretName)) this.#problem(`${field}.secretName`, `${quote(secretName)} is not a Secret name`, into);
    const hosts: string[] = [];
    const hostFields: string[] = [];
    const listed = this.#list(entry['hosts'], `${field}.hosts`, into);
    listed.forEach((host, index) => {
      const checked = checkHost(host);
      if (!checked.ok) return this.#problem(`${field}.hosts[${index}]`, `invalid host: ${checked.reason}`, into);
      hosts.push(checked.value.host);
      hostFields.push(`${field}.hosts[${index}]`);
    });
    if (listed.length === 0) {
      for (const host of ruleHosts) {
        if (host.host === CATCH_ALL_HOST || hosts.includes(host.host)) continue;
        hosts.push(host.host);
        hostFields.push(sourceOf(host)!.field);
      }
      if (hosts.length === 0) this.#problem(`${field}.hosts`, 'names no host, and no rule of the Ingress has one to serve it for', into);
    }
    if (into.length > before || !isDnsSubdomain(secretName)) return;
    claims.push({ secretName, hosts, hostFields, field: `${field}.secretName` });
  }
}

export function portText(port: BackendRef['port']): string {
  return 'name' in port ? port.name : String(port.number);
}
