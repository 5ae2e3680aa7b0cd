import { isFields, type Fields } from '../object-fields/fields.ts';
import { describeObject, isDnsLabel, isDnsSubdomain, isPortNumber, quote } from '../object-fields/names.ts';
import type { LabelSelector } from '../kube-syntax/label-selector.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { GATEWAY, GATEWAY_GROUP, KINDS, LISTENER_SET, SECRET, sameGroupKind, type GroupKind } from './api.ts';
import { readFrontendValidation, type ClientValidation, type FrontendValidation } from './frontend-validation.ts';
import { absent, FieldReader } from './field-reader.ts';
import { checkHostname } from './hostnames.ts';
import { readLabelSelector } from './label-selector.ts';

/**
 * Reading one Gateway (apis/v1/gateway_types.go) and its listeners. A
 * listener's fault is its own: it is marked with the reason its conditions
 * give and serves nothing, the Gateway's other listeners go on. Only a
 * Gateway that cannot be read at all (no class, no listener list) is left
 * out whole.
 */

export type FromNamespaces = 'Same' | 'All' | 'Selector' | 'None';

export interface CertificateRef extends GroupKind {
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
}

/** Why a listener is not accepted or its references do not resolve; reasons as the listener conditions name them. */
export interface ListenerFault {
  readonly condition: 'Accepted' | 'ResolvedRefs';
  readonly reason:
    | 'UnsupportedProtocol'
    | 'UnsupportedValue'
    | 'PortUnavailable'
    | 'InvalidRouteKinds'
    | 'InvalidCertificateRef'
    | 'RefNotPermitted'
    | 'InvalidCACertificateRef'
    | 'InvalidCACertificateKind'
    | 'NoValidCACertificate';
  readonly message: string;
}

export interface Listener {
  readonly name: string;
  readonly index: number;
  readonly port: number;
  readonly protocol: string;
  /** Lowercase; undefined for every host. */
  readonly hostname: string | undefined;
  /** For HTTPS and TLS listeners: whether TLS ends here (Terminate) or the stream goes to the backend as it came (Passthrough). */
  readonly tlsMode: 'Terminate' | 'Passthrough' | undefined;
  readonly certificateRefs: readonly CertificateRef[];
  /** An HTTPS listener's client certificate validation (spec.tls.frontend, its port's or the default). */
  readonly clientValidation: ClientValidation | undefined;
  readonly namespaces: { readonly from: FromNamespaces; readonly selector: LabelSelector | undefined };
  /** The route kinds it admits that this controller serves (status `supportedKinds`). */
  readonly kinds: readonly GroupKind[];
  /** Faults found reading it; more are found resolving it (listeners.ts). */
  readonly faults: readonly ListenerFault[];
}

export interface Gateway {
  readonly object: KubeObject;
  /**
   * GATEWAY, or LISTENER_SET for the listeners a ListenerSet adds to its
   * Gateway, read as a Gateway of their own: routes attach to it by its
   * kind and name, and ReferenceGrants name it as `from` for its
   * certificates (a grant to the Gateway is not one to its ListenerSets).
   */
  readonly groupKind: GroupKind;
  readonly label: string;
  readonly namespace: string;
  readonly name: string;
  readonly className: string;
  readonly listeners: readonly Listener[];
  /** spec.addresses is set: this controller publishes the HAProxy Service's addresses and cannot take others. */
  readonly asksAddresses: boolean;
  /** Some HTTPS listener's client certificate validation is AllowInsecureFallback (condition InsecureFrontendValidationMode). */
  readonly insecureFallback: boolean;
  /** spec.tls.frontend, read: a ListenerSet's HTTPS listeners validate client certificates by their Gateway's. */
  readonly frontendValidation: FrontendValidation;
  /** Whose spec.tls.frontend it is, as ReferenceGrants name it as `from` for its CA certificates: the Gateway's (a ListenerSet's parent's). */
  readonly validationFrom: GroupKind & { readonly namespace: string; readonly label: string };
  /** spec.allowedListeners: the namespaces whose ListenerSets may add listeners (None for a ListenerSet). */
  readonly allowedListeners: { readonly from: FromNamespaces; readonly selector: LabelSelector | undefined };
}

export interface GatewayRead {
  readonly label: string;
  readonly gateway: Gateway | undefined;
  readonly problems: readonly Problem[];
}

const HTTP_KINDS: readonly GroupKind[] = [
  { group: GATEWAY_GROUP, kind: KINDS.httpRoute },
  { group: GATEWAY_GROUP, kind: KINDS.grpcRoute },
];

/** The route kinds each protocol's listeners serve: a TLS listener TLSRoutes alone, as the conformance suite's supportedKinds ask. */
const SERVED_KINDS: Readonly<Record<string, readonly GroupKind[]>> = {
  HTTP: HTTP_KINDS,
  HTTPS: HTTP_KINDS,
  TLS: [{ group: GATEWAY_GROUP, kind: KINDS.tlsRoute }],
  TCP: [{ group: GATEWAY_GROUP, kind: KINDS.tcpRoute }],
};
const PROTOCOLS = Object.keys(SERVED_KINDS);

/** Why a protocol is not served, in the listener's UnsupportedProtocol message. */
function unsupportedProtocol(protocol: string): string {
  // Community HAProxy balances no UDP (QUIC alone is HTTP/3): a UDPRoute listener is refused, never half-served.
  if (protocol === 'UDP') return 'is not served: HAProxy (community edition) has no UDP load balancing';
  return `is not served (${PROTOCOLS.join(', ')} are)`;
}

function readKinds(reader: FieldReader, value: unknown, field: string, protocol: string, faults: ListenerFault[]): GroupKind[] {
  const servedKinds = SERVED_KINDS[protocol] ?? [];
  const listed = reader.list(value, field);
  if (listed.length === 0) return [...servedKinds];
  const kinds: GroupKind[] = [];
  const refused: string[] = [];
  listed.forEach((entry, index) => {
    const kind = isFields(entry) ? entry['kind'] : undefined;
    const group = isFields(entry) ? (entry['group'] ?? GATEWAY_GROUP) : undefined;
    const served = servedKinds.find((candidate) => candidate.kind === kind && candidate.group === group);
    if (served) kinds.push(served);
    else refused.push(`${field}[${index}] ${quote(kind)}`);
  });
  const which = servedKinds.map((kind) => kind.kind).join(' and ') || 'none';
  const verb = servedKinds.length === 1 ? 'is' : 'are';
  if (refused.length > 0)
    faults.push({ condition: 'ResolvedRefs', reason: 'InvalidRouteKinds', message: `route kinds not served: ${refused.join(', ')} (${which} ${verb}, on ${protocol})` });
  return kinds;
}

function readCertificateRefs(value: Fields | undefined, field: string, namespace: string, faults: ListenerFault[]): CertificateRef[] {
  const refs: CertificateRef[] = [];
  const listed = Array.isArray(value?.['certificateRefs']) ? (value['certificateRefs'] as unknown[]) : [];
  listed.forEach((entry, index) => {
    const at = `${field}.certificateRefs[${index}]`;
    const ref = isFields(entry) ? entry : {};
    const group = ref['group'] ?? '';
    const kind = ref['kind'] ?? 'Secret';
    const refNamespace = ref['namespace'] ?? namespace;
    if (group !== SECRET.group || kind !== SECRET.kind) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCertificateRef', message: `${at}: ${quote(kind)} in group ${quote(group)} is not a Secret` });
    } else if (!isDnsSubdomain(ref['name']) || !isDnsLabel(refNamespace)) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCertificateRef', message: `${at}: ${quote(ref['name'])} in ${quote(refNamespace)} is not a Secret name` });
    } else {
      refs.push({ ...SECRET, namespace: refNamespace, name: ref['name'], field: at });
    }
  });
  if (listed.length === 0) faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCertificateRef', message: `${field}.certificateRefs: a listener ending TLS needs a certificate` });
  return refs;
}

function readListener(reader: FieldReader, value: unknown, index: number, namespace: string, validation: FrontendValidation): Listener | undefined {
  const field = `spec.listeners[${index}]`;
  if (!isFields(value)) {
    reader.problem(field, 'is not an object');
    return undefined;
  }
  const faults: ListenerFault[] = [];
  const name = reader.name(value['name'], `${field}.name`, 'listener');
  const port = isPortNumber(value['port']) ? value['port'] : undefined;
  if (port === undefined) reader.problem(`${field}.port`, `${quote(value['port'])} is not a port number (1-65535)`);
  const protocol = typeof value['protocol'] === 'string' ? value['protocol'] : '';
  if (!PROTOCOLS.includes(protocol)) faults.push({ condition: 'Accepted', reason: 'UnsupportedProtocol', message: `${field}.protocol: ${quote(protocol)} ${unsupportedProtocol(protocol)}` });
  let hostname: string | undefined;
  if (!absent(value['hostname']) && value['hostname'] !== '') {
    const checked = checkHostname(value['hostname']);
    if (checked.ok) hostname = checked.value;
    else faults.push({ condition: 'Accepted', reason: 'UnsupportedValue', message: `${field}.hostname: ${checked.reason}` });
  }
  const tls = reader.fields(value['tls'], `${field}.tls`);
  let certificateRefs: CertificateRef[] = [];
  let tlsMode: Listener['tlsMode'];
  if (protocol === 'HTTPS' || protocol === 'TLS') {
    const mode = tls?.['mode'] ?? 'Terminate';
    // HTTPS ends TLS (apis/v1/gateway_types.go: Passthrough is for TLS listeners); a TLS listener does either.
    const modes = protocol === 'HTTPS' ? ['Terminate'] : ['Terminate', 'Passthrough'];
    if (typeof mode === 'string' && modes.includes(mode)) tlsMode = mode as Listener['tlsMode'];
    else faults.push({ condition: 'Accepted', reason: 'UnsupportedValue', message: `${field}.tls.mode: ${quote(mode)} is not served on ${protocol} (${modes.join(' and ')} are)` });
    if (tlsMode !== 'Passthrough') certificateRefs = readCertificateRefs(tls, `${field}.tls`, namespace, faults);
  }
  const clientValidation = protocol !== 'HTTPS' || port === undefined ? undefined : validation.perPort.has(port) ? validation.perPort.get(port) : validation.default;
  for (const message of clientValidation?.badKinds ?? []) faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCACertificateKind', message });
  const allowed = reader.fields(value['allowedRoutes'], `${field}.allowedRoutes`);
  const namespaces = reader.fields(allowed?.['namespaces'], `${field}.allowedRoutes.namespaces`);
  const from = reader.oneOf(namespaces?.['from'], `${field}.allowedRoutes.namespaces.from`, ['Same', 'All', 'Selector', 'None'], 'Same');
  let selector: LabelSelector | undefined;
  if (from === 'Selector') selector = readLabelSelector(reader, namespaces?.['selector'], `${field}.allowedRoutes.namespaces.selector`);
  const kinds = readKinds(reader, allowed?.['kinds'], `${field}.allowedRoutes.kinds`, protocol, faults);
  if (name === undefined || port === undefined || from === undefined || (from === 'Selector' && selector === undefined)) return undefined;
  return { name, index, port, protocol, hostname, tlsMode, certificateRefs, clientValidation, namespaces: { from, selector }, kinds, faults };
}

export function readGateway(object: KubeObject): GatewayRead {
  const { namespace, name } = object.metadata;
  const reader = new FieldReader(describeObject(KINDS.gateway, namespace, name));
  if (!isDnsLabel(namespace)) reader.problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
  const spec = isFields(object['spec']) ? object['spec'] : {};
  const className = reader.name(spec['gatewayClassName'], 'spec.gatewayClassName', 'GatewayClass');
  const listed = reader.list(spec['listeners'], 'spec.listeners');
  if (listed.length === 0) reader.problem('spec.listeners', 'lists no listener');
  const validation = readFrontendValidation(reader, spec['tls'], String(namespace));
  const listeners = readListeners(reader, listed, String(namespace), validation);
  const allowed = reader.fields(reader.fields(spec['allowedListeners'], 'spec.allowedListeners')?.['namespaces'], 'spec.allowedListeners.namespaces');
  const from = reader.oneOf(allowed?.['from'], 'spec.allowedListeners.namespaces.from', ['Same', 'All', 'Selector', 'None'], 'None');
  const selector = from === 'Selector' ? readLabelSelector(reader, allowed?.['selector'], 'spec.allowedListeners.namespaces.selector') : undefined;
  const label = reader.label;
  if (reader.problems.length > 0 || className === undefined || from === undefined) return { label, gateway: undefined, problems: reader.problems };
  const asksAddresses = Array.isArray(spec['addresses']) && spec['addresses'].length > 0;
  const insecureFallback = listeners.some((listener) => listener.clientValidation?.mode === 'AllowInsecureFallback');
  const allowedListeners = { from, selector };
  const gateway = {
    object,
    groupKind: GATEWAY,
    label,
    namespace: String(namespace),
    name: String(name),
    className,
    listeners,
    asksAddresses,
    insecureFallback,
    frontendValidation: validation,
    validationFrom: { ...GATEWAY, namespace: String(namespace), label },
    allowedListeners,
  };
  return { label, gateway, problems: [] };
}

/** The listeners of spec.listeners, each name once (a Gateway's and a ListenerSet's alike); those that cannot be read are problems of `reader`. */
function readListeners(reader: FieldReader, listed: readonly unknown[], namespace: string, validation: FrontendValidation): Listener[] {
  const listeners = listed.map((listener, index) => readListener(reader, listener, index, namespace, validation));
  const names = new Set<string>();
  for (const listener of listeners) {
    if (listener === undefined) continue;
    if (names.has(listener.name)) reader.problem(`spec.listeners[${listener.index}].name`, `${quote(listener.name)} is the name of another listener`);
    names.add(listener.name);
  }
  return listeners.filter((listener) => listener !== undefined);
}

/** A ListenerSet's spec.parentRef (apis/v1/shared_types.go ParentGatewayReference): the Gateway it adds listeners to, or undefined when it names another kind. */
export function listenerSetParent(object: KubeObject): { readonly namespace: string; readonly name: string } | undefined {
  const spec = isFields(object['spec']) ? object['spec'] : {};
  const ref = isFields(spec['parentRef']) ? spec['parentRef'] : undefined;
  if (ref === undefined || typeof ref['name'] !== 'string') return undefined;
  const groupKind = { group: typeof ref['group'] === 'string' ? ref['group'] : GATEWAY_GROUP, kind: typeof ref['kind'] === 'string' ? ref['kind'] : KINDS.gateway };
  if (!sameGroupKind(groupKind, GATEWAY)) return undefined;
  return { namespace: typeof ref['namespace'] === 'string' ? ref['namespace'] : String(object.metadata.namespace), name: ref['name'] };
}

/**
 * A ListenerSet (apis/v1/listenerset_types.go) read as a Gateway of its
 * own listeners, of its parent's class: their certificates, allowedRoutes
 * (`Same`: the ListenerSet's namespace) and names are its own. Its HTTPS
 * listeners validate client certificates as the Gateway's spec.tls.frontend
 * says of its port (it is "for all Listeners handling HTTPS traffic", and
 * the specification treats the Gateway as having the merged list), so a
 * ListenerSet cannot serve a port of the Gateway without the validation
 * the Gateway asks there.
 */
export function readListenerSet(object: KubeObject, parent: Gateway): GatewayRead {
  const { namespace, name } = object.metadata;
  const reader = new FieldReader(describeObject(KINDS.listenerSet, namespace, name));
  if (!isDnsLabel(namespace)) reader.problem('metadata.namespace', `${quote(namespace)} is not a namespace name`);
  const spec = isFields(object['spec']) ? object['spec'] : {};
  const listed = reader.list(spec['listeners'], 'spec.listeners');
  if (listed.length === 0) reader.problem('spec.listeners', 'lists no listener');
  const listeners = readListeners(reader, listed, String(namespace), parent.frontendValidation);
  const label = reader.label;
  if (reader.problems.length > 0) return { label, gateway: undefined, problems: reader.problems };
  const gateway: Gateway = {
    object,
    groupKind: LISTENER_SET,
    label,
    namespace: String(namespace),
    name: String(name),
    className: parent.className,
    listeners,
    asksAddresses: false,
    insecureFallback: listeners.some((listener) => listener.clientValidation?.mode === 'AllowInsecureFallback'),
    frontendValidation: parent.frontendValidation,
    validationFrom: parent.validationFrom,
    allowedListeners: { from: 'None', selector: undefined },
  };
  return { label, gateway, problems: [] };
}
