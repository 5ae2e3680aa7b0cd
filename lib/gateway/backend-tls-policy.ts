import type { KubeObject } from '../pipeline/model.ts';
import { servicePortKey, type BackendSettings, type ServicePortTls } from '../routing/settings.ts';
import { compareStanding, type Standing } from '../routing/precedence.ts';
import { placeOf } from '../routing/order.ts';
import { isFields, type Fields } from '../object-fields/fields.ts';
import { describeObject, isPortNumber, quote } from '../object-fields/names.ts';
import { checkHostname } from './hostnames.ts';
import { GATEWAY_GROUP } from './api.ts';
import { desired, type DesiredCondition } from './conditions.ts';

/**
 * BackendTLSPolicy (apis/v1/backendtlspolicy_types.go): TLS from HAProxy to
 * the endpoints of a Service port, verified against the CA of a ConfigMap's
 * ca.crt (caCertificateRefs, one reference: the Core support) or the system
 * bundle (wellKnownCACertificates: System, HAProxy's `ca-file @system-ca`),
 * with `hostname` sent as SNI and, unless subjectAltNames say otherwise,
 * the name the certificate must carry (HAProxy's `verifyhost`).
 *
 * HAProxy checks one name per server (verifyhost), so subjectAltNames are
 * served when they are one Hostname (not a wildcard): the certificate must
 * then carry that name, and `hostname` is the SNI alone. URI names, or more
 * than one name, cannot be checked: such a policy is not accepted (Invalid)
 * and its Service port refuses every request rather than verify less than
 * asked. So does a policy whose CA reference is unusable (the specification:
 * connections using an invalid reference fail with a 5xx), and one with
 * options, none of which is implemented.
 *
 * A policy names Services by name and ports by name (sectionName); its
 * Service port is `<namespace>/<service>/<port number>`, one backend of the
 * map model. Policies naming the same Service and sectionName: the oldest,
 * then the first by namespace/name, applies; the others are not accepted
 * (Conflicted). A policy naming the port (sectionName) applies on that port
 * before one naming the whole Service.
 */

/** What a policy came to, for its status. */
export interface BackendTlsPolicyOutcome {
  readonly object: KubeObject;
  readonly label: string;
  /** The Service ports it applies to (`<namespace>/<service>/<port>`): its status goes to the Gateways of the routes using them. */
  readonly ports: readonly string[];
  readonly conditions: readonly DesiredCondition[];
}

export interface BackendTlsRead {
  /** By `<namespace>/<service>/<port number>`. */
  readonly byPort: ReadonlyMap<string, ServicePortTls>;
  readonly outcomes: readonly BackendTlsPolicyOutcome[];
}

export const NO_BACKEND_TLS: BackendTlsRead = Object.freeze({ byPort: new Map(), outcomes: Object.freeze([]) });

export interface BackendTlsSources {
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  readonly configMap: (namespace: string, name: string) => KubeObject | undefined;
}

/** One policy read: what it asks of its targets, or why it is refused, and its conditions but Conflicted. */
interface PolicyRead {
  readonly object: KubeObject;
  readonly label: string;
  readonly place: Standing;
  readonly tls: ServicePortTls;
  readonly accepted: DesiredCondition;
  readonly resolvedRefs: DesiredCondition;
  /** Service and sectionName ('' for the whole Service). */
  readonly targets: readonly { readonly service: string; readonly section: string }[];
}

const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';

function invalid(message: string): DesiredCondition {
  return desired('Accepted', false, 'Invalid', message);
}

const ACCEPTED = desired('Accepted', true, 'Accepted', 'accepted');
const RESOLVED = desired('ResolvedRefs', true, 'ResolvedRefs', 'all references resolved');

/** The CA a policy's validation names, or the conditions that refuse it. */
function readCa(
  validation: Fields,
  namespace: string,
  sources: BackendTlsSources,
): { readonly verifyCa: NonNullable<BackendSettings['protocol']>['verifyCa'] } | { readonly accepted: DesiredCondition; readonly resolvedRefs: DesiredCondition } {
  const refs = Array.isArray(validation['caCertificateRefs']) ? validation['caCertificateRefs'] : [];
  const wellKnown = validation['wellKnownCACertificates'];
  if (refs.length > 0 && wellKnown !== undefined && wellKnown !== '') {
    return { accepted: invalid('spec.validation: caCertificateRefs and wellKnownCACertificates are both set'), resolvedRefs: RESOLVED };
  }
  if (refs.length === 0) {
    if (wellKnown === 'System') return { verifyCa: 'system' };
    const why =
      wellKnown === undefined || wellKnown === ''
        ? 'neither caCertificateRefs nor wellKnownCACertificates is set'
        : `wellKnownCACertificates ${quote(wellKnown)} is not supported (System is)`;
    return { accepted: invalid(`spec.validation: ${why}`), resolvedRefs: RESOLVED };
  }
  if (refs.length > 1) {
    return { accepted: invalid(`spec.validation.caCertificateRefs: ${refs.length} references; one is supported (HAProxy verifies a server against one CA file)`), resolvedRefs: RESOLVED };
  }
  const ref: Fields = isFields(refs[0]) ? refs[0] : {};
  const field = 'spec.validation.caCertificateRefs[0]';
  const group = typeof ref['group'] === 'string' ? ref['group'] : '';
  const kind = ref['kind'];
  const name = ref['name'];
  if (group !== '' || kind !== 'ConfigMap') {
    return {
      accepted: desired('Accepted', false, 'NoValidCACertificate', 'no valid CA certificate'),
      resolvedRefs: desired('ResolvedRefs', false, 'InvalidKind', `${field}: kind ${quote(group === '' ? kind : `${group}/${String(kind)}`)} is not supported (ConfigMap is)`),
    };
  }
  const label = describeObject('ConfigMap', namespace, String(name));
  const configMap = typeof name === 'string' ? sources.configMap(namespace, name) : undefined;
  const data = configMap && isFields(configMap['data']) ? configMap['data'] : undefined;
  const text = data?.['ca.crt'];
  const fault = configMap === undefined ? 'is not found' : typeof text !== 'string' ? 'has no ca.crt' : text.includes(PEM_CERTIFICATE) ? undefined : 'ca.crt holds no PEM certificate';
  if (fault !== undefined) {
    return {
      accepted: desired('Accepted', false, 'NoValidCACertificate', 'no valid CA certificate'),
      resolvedRefs: desired('ResolvedRefs', false, 'InvalidCACertificateRef', `${field}: ${label} ${fault}`),
    };
  }
  return { verifyCa: { namespace, name: String(name), configMap: true } };
}

/** The name the servers' certificates must carry: `hostname`, or the one Hostname of subjectAltNames; or why it cannot be checked. */
function readVerifiedName(validation: Fields, hostname: string): { readonly name: string } | { readonly refused: string } {
  const names = Array.isArray(validation['subjectAltNames']) ? validation['subjectAltNames'] : [];
  if (names.length === 0) return { name: hostname };
  const field = 'spec.validation.subjectAltNames';
  const [only] = names;
  if (names.length > 1) return { refused: `${field}: ${names.length} names, and HAProxy checks one name per server (verifyhost)` };
  if (!isFields(only) || only['type'] !== 'Hostname') {
    return { refused: `${field}[0]: type ${quote(isFields(only) ? only['type'] : only)} cannot be checked (HAProxy checks one DNS name per server, verifyhost)` };
  }
  const checked = checkHostname(only['hostname']);
  if (!checked.ok) return { refused: `${field}[0].hostname: ${checked.reason}` };
  if (checked.value.startsWith('*.')) return { refused: `${field}[0].hostname: a wildcard cannot be checked (HAProxy's verifyhost takes a name)` };
  return { name: checked.value };
}

function readPolicy(object: KubeObject, sources: BackendTlsSources): PolicyRead {
  const namespace = String(object.metadata.namespace ?? '');
  const label = describeObject('BackendTLSPolicy', namespace, object.metadata.name);
  const spec: Fields = isFields(object['spec']) ? object['spec'] : {};
  const targets: { service: string; section: string }[] = [];
  for (const target of Array.isArray(spec['targetRefs']) ? spec['targetRefs'] : []) {
    // Only Services are served (the Extended support); a target of another kind applies to nothing here.
    if (!isFields(target) || (target['group'] ?? '') !== '' || target['kind'] !== 'Service' || typeof target['name'] !== 'string') continue;
    targets.push({ service: target['name'], section: typeof target['sectionName'] === 'string' ? target['sectionName'] : '' });
  }
  const read = (tls: ServicePortTls, accepted: DesiredCondition, resolvedRefs: DesiredCondition): PolicyRead => ({
    object,
    label,
    place: placeOf(object),
    tls,
    accepted,
    resolvedRefs,
    targets,
  });
  const validation: Fields = isFields(spec['validation']) ? spec['validation'] : {};
  const hostname = checkHostname(validation['hostname']);
  const refusedBy = (condition: DesiredCondition) => ({ refused: `${label} is not accepted: ${condition.message}`, by: label });
  if (!hostname.ok || hostname.value.startsWith('*.')) {
    const condition = invalid(`spec.validation.hostname: ${hostname.ok ? 'a wildcard is not a precise hostname' : hostname.reason}`);
    return read(refusedBy(condition), condition, RESOLVED);
  }
  const ca = readCa(validation, namespace, sources);
  if ('accepted' in ca) return read({ refused: `${label}: ${ca.resolvedRefs.status === 'False' ? ca.resolvedRefs.message : ca.accepted.message}`, by: label }, ca.accepted, ca.resolvedRefs);
  const options = isFields(spec['options']) ? Object.keys(spec['options']) : [];
  if (options.length > 0) {
    const condition = invalid(`spec.options: ${options.map(quote).join(', ')} not supported (no option is)`);
    return read(refusedBy(condition), condition, RESOLVED);
  }
  const verified = readVerifiedName(validation, hostname.value);
  if ('refused' in verified) {
    const condition = invalid(verified.refused);
    return read(refusedBy(condition), condition, RESOLVED);
  }
  return read({ protocol: Object.freeze({ version: 'h1', tls: true, verifyCa: ca.verifyCa, sni: hostname.value, verifyHost: verified.name }), by: label }, ACCEPTED, RESOLVED);
}

/** The Service ports a target names: every port of the Service, or the one named sectionName; none while the Service or port is missing. */
function targetPorts(namespace: string, target: PolicyRead['targets'][number], sources: BackendTlsSources): number[] {
  const service = sources.service(namespace, target.service);
  const spec = service && isFields(service['spec']) ? service['spec'] : {};
  const ports = Array.isArray(spec['ports']) ? spec['ports'].filter(isFields) : [];
  return ports.filter((port) => isPortNumber(port['port']) && (target.section === '' || port['name'] === target.section)).map((port) => port['port'] as number);
}

/** Every policy read and judged against the others: which applies to each Service port, and each one's conditions. */
export function readBackendTlsPolicies(policies: readonly KubeObject[], sources: BackendTlsSources): BackendTlsRead {
  if (policies.length === 0) return NO_BACKEND_TLS;
  const reads = policies.map((object) => readPolicy(object, sources)).sort((a, b) => compareStanding(a.place, b.place));
  /** By Service and sectionName: the policy that applies (the first, in standing order). */
  const winners = new Map<string, PolicyRead>();
  const conflicted = new Map<PolicyRead, string>();
  for (const read of reads) {
    const namespace = String(read.object.metadata.namespace ?? '');
    for (const target of read.targets) {
      const key = `${namespace}/${target.service}/${target.section}`;
      const winner = winners.get(key);
      if (winner === undefined) winners.set(key, read);
      else if (!conflicted.has(read))
        conflicted.set(
          read,
          `${winner.label} targets Service ${target.service}${target.section === '' ? '' : ` port ${target.section}`} too and takes precedence (older, or first by namespace/name)`,
        );
    }
  }
  /** Per Service port, the policy that applies: one naming the port (sectionName) before one naming the whole Service. */
  const applying = new Map<string, PolicyRead>();
  for (const wholeService of [true, false]) {
    for (const [key, read] of winners) {
      const [namespace, service, section] = key.split('/') as [string, string, string];
      if (conflicted.has(read) || (section === '') !== wholeService) continue;
      for (const port of targetPorts(namespace, { service, section }, sources)) applying.set(servicePortKey(namespace, service, port), read);
    }
  }
  const byPort = new Map<string, ServicePortTls>();
  const ports = new Map<PolicyRead, string[]>();
  for (const [key, read] of applying) {
    byPort.set(key, read.tls);
    const list = ports.get(read);
    if (list) list.push(key);
    else ports.set(read, [key]);
  }
  const outcomes = reads.map((read): BackendTlsPolicyOutcome => {
    const conflict = conflicted.get(read);
    const accepted = conflict === undefined ? read.accepted : desired('Accepted', false, 'Conflicted', conflict);
    return { object: read.object, label: read.label, ports: ports.get(read) ?? [], conditions: [accepted, read.resolvedRefs] };
  });
  return { byPort, outcomes };
}

/** A Gateway as a policy's status names it (status.ancestors[].ancestorRef). */
export function gatewayAncestorRef(namespace: string, name: string): Fields {
  return { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name };
}

/** What policyAncestors reads of a route: the Gateways it is accepted by, and the Service ports its records send requests to. */
export interface RouteThrough {
  readonly parents: readonly { readonly parent: { readonly namespace: string; readonly name: string }; readonly acceptance: { readonly accepted: boolean } }[];
  readonly records: readonly { readonly backends: readonly { readonly namespace: string; readonly service: string; readonly port: number | string }[] }[];
}

/** Per Service port, the Gateways ("namespace/name", sorted) whose accepted routes send requests to it: a policy's status ancestors. */
export function gatewaysByPort(routes: Iterable<RouteThrough>): ReadonlyMap<string, readonly string[]> {
  const byPort = new Map<string, Set<string>>();
  for (const route of routes) {
    const gateways = route.parents.filter((entry) => entry.acceptance.accepted).map(({ parent }) => `${parent.namespace}/${parent.name}`);
    if (gateways.length === 0) continue;
    for (const record of route.records) {
      for (const backend of record.backends) {
        if (typeof backend.port !== 'number') continue;
        const key = servicePortKey(backend.namespace, backend.service, backend.port);
        const set = byPort.get(key) ?? byPort.set(key, new Set()).get(key)!;
        for (const gateway of gateways) set.add(gateway);
      }
    }
  }
  return new Map([...byPort].map(([key, set]) => [key, [...set].sort()]));
}

/** The Gateways a policy's status names: those of the routes through the Service ports it applies to. */
export function ancestorsOf(outcome: BackendTlsPolicyOutcome, byPort: ReadonlyMap<string, readonly string[]>): { readonly namespace: string; readonly name: string }[] {
  const keys = new Set(outcome.ports.flatMap((port) => byPort.get(port) ?? []));
  return [...keys].sort().map((key) => {
    const slash = key.indexOf('/');
    return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  });
}
