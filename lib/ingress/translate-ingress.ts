import type { KubeObject, Problem } from '../pipeline/model.ts';
import { isFields } from '../object-fields/fields.ts';
import { checkHost, checkPath, checkRegexPath, describeObject, isDnsLabel, isDnsSubdomain, isPortName, isPortNumber, quote } from '../object-fields/names.ts';
import { placeOf } from '../routing/order.ts';
import type { Standing } from '../routing/precedence.ts';
import { CATCH_ALL_HOST, type PathMatch, type RouteHost, type RouteRecord, type WeightedBackend } from '../routing/route.ts';
import type { ServedRoutes, TlsClaim, TranslatedHost, TranslatedObject } from '../routing/translated.ts';
import { readAnnotationSettings } from '../annotations/read-settings.ts';
import { ingressClassOf } from '../kube-syntax/ingress-class.ts';
import { excludesObject, type ReadSettings } from '../annotations/outcomes.ts';
import { hostField, pathField, ruleField } from './field-paths.ts';

/**
 * The Ingress translator: one Ingress as the routes it asks for (the
 * representation in lib/routing), checked field by field. Every string it
 * keeps passed a check for where it lands (lib/object-fields/names.ts);
 * whatever fails one becomes a Problem naming the field instead.
 *
 * Where the Ingress rules differ from the Gateway API's, the records say
 * so: a host wildcard covers one label, a path read as a regular
 * expression (nginx's use-regex) has the nginx dialect, a backend may name
 * its Service port, and every route's settings are the Ingress's
 * annotations (origin.settingsField).
 */

const CATCH_ALL: TranslatedHost = Object.freeze({ key: CATCH_ALL_HOST, wildcard: 'none' });
const NO_MATCHES: readonly never[] = Object.freeze([]);
const NO_PROBLEMS: readonly Problem[] = Object.freeze([]);
const NO_LEFT_OUT: readonly never[] = Object.freeze([]);
/** An Ingress's settings are its annotations'. */
const SETTINGS_FIELD = 'metadata.annotations';
/** An Ingress is served on every listener: it names none. */
const EVERY_ENTRYPOINT: readonly never[] = Object.freeze([]);

/** The translator of the Ingresses of one class: the others are not served. */
export function ingressTranslator(className: string): (ingress: KubeObject) => TranslatedObject | undefined {
  return (ingress) => (servesClass(ingress, className) ? translateIngress(ingress) : undefined);
}

export function servesClass(ingress: KubeObject, className: string): boolean {
  return ingressClassOf(ingress) === className;
}

/** Translates an Ingress of the served class. */
export function translateIngress(ingress: KubeObject): TranslatedObject {
  const reader = new IngressReader(ingress);
  const served = reader.read();
  const problems = reader.problems.length + reader.tlsProblems.length === 0 ? NO_PROBLEMS : [...reader.problems, ...reader.tlsProblems];
  return { key: ingress, object: ingress, kind: 'Ingress', label: reader.label, place: reader.place, served, problems, warnings: NO_PROBLEMS, leftOut: NO_LEFT_OUT };
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
  /** Paths read so far: a route's origin.rule, which orders an Ingress's own routes. */
  #paths = 0;
  /** The host of the rule being read. */
  #host: RouteHost = CATCH_ALL;
  #settings: ReadSettings | undefined;

  constructor(ingress: KubeObject) {
    this.#ingress = ingress;
    this.place = placeOf(ingress);
    this.label = describeObject('Ingress', ingress.metadata.namespace, ingress.metadata.name);
    const namespace = ingress.metadata.namespace;
    if (!isDnsLabel(namespace)) this.#problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
    this.#namespace = isDnsLabel(namespace) ? namespace : '';
  }

  read(): ServedRoutes | undefined {
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
    const hosts: TranslatedHost[] = [];
    const routes: RouteRecord[] = [];
    const rules = this.#list(spec['rules'], 'spec.rules');
    for (let index = 0; index < rules.length; index++) this.#rule(rules[index], index, hosts, routes);
    const tls: TlsClaim[] = [];
    const entries = this.#list(spec['tls'], 'spec.tls', this.tlsProblems);
    for (let index = 0; index < entries.length; index++) this.#tls(entries[index], `spec.tls[${index}]`, tls, hosts);
    // An invalid value is never written: its Ingress is left out, named with the annotation.
    for (const outcome of settings.outcomes) {
      if (excludesObject(outcome)) this.#problem(`metadata.annotations['${outcome.annotation}']`, `${quote(outcome.value)}: ${outcome.reason}`);
    }
    if (this.problems.length > 0) return undefined;
    return {
      namespace: this.#namespace,
      hosts,
      routes,
      defaultBackend: defaultBackend && { backend: defaultBackend, field: 'spec.defaultBackend' },
      tls,
      settings: { backend: settings.backend, route: settings.route, field: SETTINGS_FIELD },
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

  #rule(rule: unknown, ruleIndex: number, hosts: TranslatedHost[], routes: RouteRecord[]): void {
    const field = ruleField(ruleIndex);
    if (!isFields(rule)) return this.#problem(field, 'is not an object');
    let host = CATCH_ALL;
    if (rule['host'] !== undefined && rule['host'] !== null && rule['host'] !== '') {
      const checked = checkHost(rule['host']);
      if (!checked.ok) return this.#problem(`${field}.host`, `invalid host: ${checked.reason}`);
      host = Object.freeze({ key: checked.value.host, wildcard: checked.value.wildcard ? 'one-label' : 'none', field: hostField(ruleIndex) });
    }
    hosts.push(host);
    this.#host = host;
    const http = rule['http'];
    if (http === undefined || http === null) return;
    if (!isFields(http)) return this.#problem(`${field}.http`, 'is not an object');
    const paths = http['paths'];
    if (paths === undefined || paths === null) return;
    if (!Array.isArray(paths)) return this.#problem(`${field}.http.paths`, 'is not a list');
    for (let index = 0; index < paths.length; index++) this.#path(paths[index], pathField(ruleIndex, index), routes);
  }

  /**
   * Exact: the path alone. Prefix (and ImplementationSpecific, served as
   * Prefix): Kubernetes matches element-wise, so '/foo' matches '/foo' and
   * '/foo/bar' but not '/foobar', kept as lib/routing/route.ts keeps a
   * prefix: without a trailing '/' but for the root.
   */
  #path(path: unknown, field: string, routes: RouteRecord[]): void {
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
    routes.push(this.#route(this.#pathMatch(pathType, regex, checked.value), backend, field));
  }

  #pathMatch(pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific', regex: boolean, path: string): PathMatch {
    if (pathType === 'Exact') return { kind: 'exact', value: path };
    if (regex) return { kind: 'regex', value: path, dialect: 'nginx' };
    let end = path.length;
    while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
    return { kind: 'prefix', value: end === 0 ? '/' : path.slice(0, end) };
  }

  #route(path: PathMatch, backend: WeightedBackend, field: string): RouteRecord {
    const { age, namespace, name } = this.place;
    return {
      host: this.#host,
      path,
      headers: NO_MATCHES,
      query: NO_MATCHES,
      method: undefined,
      backends: [backend],
      settings: this.#settings!.route,
      entrypoints: EVERY_ENTRYPOINT,
      // An Ingress's paths are its rules, in order (lib/routing/precedence.ts).
      origin: { kind: 'Ingress', namespace, name, age, rule: this.#paths++, match: 0, field, settingsField: SETTINGS_FIELD },
    };
  }

  /**
   * A Service backend at `owner` + `suffix` (joined only for a message: most
   * backends have none); undefined, with the problems recorded, when any part
   * fails its check.
   */
  #backend(backend: unknown, owner: string, suffix: string): WeightedBackend | undefined {
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
    return { namespace: this.#namespace, service: name, port, weight: 1 };
  }

  /** The port of the backend at `owner` + `suffix`. */
  #port(port: unknown, owner: string, suffix: string): number | string | undefined {
    const name = isFields(port) ? (port['name'] ?? undefined) : undefined;
    const number = isFields(port) ? (port['number'] ?? undefined) : undefined;
    if ((name === undefined) === (number === undefined)) {
      this.#problem(`${owner}${suffix}.service.port`, 'needs exactly one of name and number');
    } else if (name !== undefined) {
      if (isPortName(name)) return name;
      this.#problem(`${owner}${suffix}.service.port.name`, `${quote(name)} is not a port name (1-15 of a-z, 0-9 and '-', with a letter)`);
    } else {
      if (isPortNumber(number)) return number;
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
  #tls(entry: unknown, field: string, claims: TlsClaim[], ruleHosts: readonly TranslatedHost[]): void {
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
        if (host.key === CATCH_ALL_HOST || hosts.includes(host.key)) continue;
        hosts.push(host.key);
        hostFields.push(host.field!);
      }
      if (hosts.length === 0) this.#problem(`${field}.hosts`, 'names no host, and no rule of the Ingress has one to serve it for', into);
    }
    if (into.length > before || !isDnsSubdomain(secretName)) return;
    claims.push({ secretName, hosts, hostFields, field: `${field}.secretName` });
  }
}
