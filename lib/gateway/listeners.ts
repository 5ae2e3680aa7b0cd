import { isFields } from '../object-fields/fields.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { CaRef } from '../routing/settings.ts';
import type { CaCertificateRef, ValidationMode } from './frontend-validation.ts';
import type { Gateway, Listener, ListenerFault } from './gateway.ts';
import type { ReferenceGrants } from './reference-grants.ts';

/**
 * A Gateway's listeners judged against the cluster and one another: their
 * certificates (a TLS Secret, across namespaces only with a ReferenceGrant),
 * their port (a frontend of the template must serve it), the CA
 * certificates client certificates are validated against, and conflicts
 * between listeners on one port. A listener that fails serves nothing.
 */

export interface ListenerState {
  readonly listener: Listener;
  /** Every fault, read and resolved, in field order. */
  readonly faults: readonly ListenerFault[];
  readonly conflict: { readonly reason: 'HostnameConflict' | 'ProtocolConflict'; readonly message: string } | undefined;
  /** Routes may attach and are served. */
  readonly serving: boolean;
  /** The CA client certificates are validated against (spec.tls.frontend), when the listener validates them. */
  readonly clientCa: { readonly ca: CaRef; readonly mode: ValidationMode } | undefined;
}

/** A port and protocol a frontend of the template serves. */
export interface Frontend {
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
}

export interface ListenerLookup {
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  /** ConfigMaps (caCertificateRefs), when watched. */
  readonly configMap?: (namespace: string, name: string) => KubeObject | undefined;
  readonly grants: ReferenceGrants;
  /** The frontends listeners map onto; undefined admits every port (until the template declares its own). */
  readonly frontends: readonly Frontend[] | undefined;
}

function isTlsSecret(secret: KubeObject | undefined): boolean {
  const data = secret?.['data'];
  return secret?.['type'] === 'kubernetes.io/tls' && isFields(data) && typeof data['tls.crt'] === 'string' && typeof data['tls.key'] === 'string';
}

function certificateFaults(gateway: Gateway, listener: Listener, lookup: ListenerLookup): ListenerFault[] {
  const faults: ListenerFault[] = [];
  for (const ref of listener.certificateRefs) {
    const target = `Secret ${ref.namespace}/${ref.name}`;
    if (!lookup.grants.permits({ ...gateway.groupKind, namespace: gateway.namespace }, ref)) {
      faults.push({
        condition: 'ResolvedRefs',
        reason: 'RefNotPermitted',
        message: `${ref.field}: ${target} is in another namespace, and no ReferenceGrant there allows ${gateway.groupKind.kind}s of ${gateway.namespace} to use it`,
      });
    } else if (!isTlsSecret(lookup.secret(ref.namespace, ref.name))) {
      faults.push({
        condition: 'ResolvedRefs',
        reason: 'InvalidCertificateRef',
        message: `${ref.field}: ${target} does not exist or is not a kubernetes.io/tls Secret with tls.crt and tls.key`,
      });
    }
  }
  return faults;
}

/** Protocols served at layer 4: a frontend in tcp mode of their own per port (lib/routing/l4-route.ts), not the template's HTTP frontends. */
export function isL4Protocol(protocol: string): protocol is 'TLS' | 'TCP' {
  return protocol === 'TLS' || protocol === 'TCP';
}

function protocolText(listener: Listener): string {
  return listener.protocol === 'TLS' ? `TLS (${listener.tlsMode})` : listener.protocol;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;

/** Whether an object's `ca.crt` holds a PEM certificate: a ConfigMap's as text, a Secret's in base64. */
function holdsCa(object: KubeObject | undefined, kind: string): boolean {
  const data = object?.['data'];
  const value = isFields(data) ? data['ca.crt'] : undefined;
  if (typeof value !== 'string') return false;
  return PEM_CERTIFICATE.test(kind === 'ConfigMap' ? value : Buffer.from(value, 'base64').toString('latin1'));
}

/**
 * The CA of a listener's client certificate validation, with the faults of
 * its references (apis/v1/gateway_types.go FrontendTLSValidation
 * CACertificateRefs): one in another namespace without a ReferenceGrant is
 * RefNotPermitted, one that does not exist or holds no `ca.crt`
 * InvalidCACertificateRef; with none usable, the listener is not accepted
 * (NoValidCACertificate). One CA reference is served per listener (the
 * specification's core): those after the first usable one are refused.
 */
function clientCaOf(gateway: Gateway, listener: Listener, lookup: ListenerLookup, faults: ListenerFault[]): ListenerState['clientCa'] {
  const validation = listener.clientValidation;
  if (validation === undefined) return undefined;
  const usable: CaCertificateRef[] = [];
  const from = gateway.validationFrom;
  // A ListenerSet's listener validates by its Gateway's spec.tls.frontend: its faults name the Gateway's field.
  const fieldOf = (ref: CaCertificateRef) => (from.label === gateway.label ? ref.field : `${from.label} ${ref.field}`);
  for (const ref of validation.refs) {
    const target = `${ref.kind} ${ref.namespace}/${ref.name}`;
    if (!lookup.grants.permits(from, ref)) {
      faults.push({
        condition: 'ResolvedRefs',
        reason: 'RefNotPermitted',
        message: `${fieldOf(ref)}: ${target} is in another namespace, and no ReferenceGrant there allows ${from.kind}s of ${from.namespace} to use it`,
      });
    } else if (!holdsCa(ref.kind === 'ConfigMap' ? lookup.configMap?.(ref.namespace, ref.name) : lookup.secret(ref.namespace, ref.name), ref.kind)) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCACertificateRef', message: `${fieldOf(ref)}: ${target} does not exist or holds no PEM certificate in ca.crt` });
    } else if (usable.length > 0) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCACertificateRef', message: `${fieldOf(ref)}: one CA certificate reference is served per listener, and an earlier one is` });
    } else {
      usable.push(ref);
    }
  }
  const [first] = usable;
  if (first === undefined) {
    faults.push({ condition: 'Accepted', reason: 'NoValidCACertificate', message: 'no caCertificateRefs entry of its client certificate validation can be used' });
    return undefined;
  }
  return { ca: { namespace: first.namespace, name: first.name, ...(first.kind === 'ConfigMap' ? { configMap: true as const } : {}) }, mode: validation.mode };
}

/**
 * What keeps a listener from its port: one of `earlier`, the listeners
 * served before it on its Gateway (apis/v1/listenerset_types.go
 * ListenerSetSpec.Listeners: the Gateway's first, then ListenerSets by
 * age, then namespace/name), which keeps the port; else another of its
 * own `listeners` not refused so (either of the two, as neither goes first).
 */
function conflictOf(listener: Listener, listeners: readonly Listener[], earlier: readonly EarlierListener[]): ListenerState['conflict'] {
  const labels = new Map(earlier.map((other) => [other.listener, other.label]));
  const byEarlier = (candidate: Listener) =>
    conflictAmong(
      candidate,
      earlier.map((other) => other.listener),
      (other) => `listener ${other.name} of ${labels.get(other)}`,
    );
  return byEarlier(listener) ?? conflictAmong(listener, earlier.length === 0 ? listeners : listeners.filter((other) => byEarlier(other) === undefined), (other) => `listener ${other.name}`);
}

/** A listener served before those of a ListenerSet, and where it is from ("Gateway ns/name", "ListenerSet ns/name"). */
export interface EarlierListener {
  readonly listener: Listener;
  readonly label: string;
}

function conflictAmong(listener: Listener, listeners: readonly Listener[], nameOf: (other: Listener) => string): ListenerState['conflict'] {
  const samePort = listeners.filter((other) => other !== listener && other.port === listener.port);
  // One port either ends TLS or passes it through: mixed modes are refused, as the conformance suite asks of an implementation without TLSRouteModeMixed.
  const otherProtocol = samePort.find((other) => other.protocol !== listener.protocol || other.tlsMode !== listener.tlsMode);
  if (otherProtocol) return { reason: 'ProtocolConflict', message: `${nameOf(otherProtocol)} serves ${protocolText(otherProtocol)} on port ${listener.port}` };
  // Two TCP listeners on one port are not distinct (apis/v1/gateway_types.go, Listeners; the CRD refuses a hostname on them), whatever a manifest says.
  const sameHost = samePort.find((other) => other.hostname === listener.hostname || listener.protocol === 'TCP');
  if (sameHost) return { reason: 'HostnameConflict', message: `${nameOf(sameHost)} serves the same hostname on port ${listener.port}` };
  return undefined;
}

/**
 * Why a listener's port cannot be served: an HTTP(S) listener needs a
 * frontend of the template for its port and protocol; a TLS or TCP
 * listener gets a frontend of its own on its port, which must not be one
 * the template's frontends bind.
 */
function portFault(listener: Listener, frontends: readonly Frontend[] | undefined): string | undefined {
  if (frontends === undefined) return undefined;
  if (isL4Protocol(listener.protocol)) {
    const taken = frontends.find((candidate) => candidate.port === listener.port);
    return taken && `port ${listener.port} is the template's ${taken.protocol} frontend's`;
  }
  if (frontends.some((candidate) => candidate.port === listener.port && candidate.protocol === listener.protocol)) return undefined;
  return `no frontend of the template serves ${listener.protocol} on port ${listener.port}`;
}

/** The listeners of a Gateway, or of a ListenerSet after the `earlier` ones of its Gateway (conflictOf), judged. */
export function resolveListeners(gateway: Gateway, lookup: ListenerLookup, earlier: readonly EarlierListener[] = []): ListenerState[] {
  return gateway.listeners.map((listener) => {
    const faults = [...listener.faults, ...certificateFaults(gateway, listener, lookup)];
    const clientCa = clientCaOf(gateway, listener, lookup, faults);
    if (!faults.some((fault) => fault.reason === 'UnsupportedProtocol')) {
      const fault = portFault(listener, lookup.frontends);
      if (fault) faults.push({ condition: 'Accepted', reason: 'PortUnavailable', message: fault });
    }
    const conflict = conflictOf(listener, gateway.listeners, earlier);
    const certificateFault = faults.some((fault) => fault.reason === 'InvalidCertificateRef' || fault.reason === 'RefNotPermitted');
    const serving = conflict === undefined && !certificateFault && !faults.some((fault) => fault.condition === 'Accepted') && listener.kinds.length > 0;
    return { listener, faults, conflict, serving, clientCa };
  });
}
