import { isFields } from '../object-fields/fields.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { CaRef } from '../routing/settings.ts';
import { GATEWAY } from './api.ts';
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
    if (!lookup.grants.permits({ ...GATEWAY, namespace: gateway.namespace }, ref)) {
      faults.push({
        condition: 'ResolvedRefs',
        reason: 'RefNotPermitted',
        message: `${ref.field}: ${target} is in another namespace, and no ReferenceGrant there allows Gateways of ${gateway.namespace} to use it`,
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
  for (const ref of validation.refs) {
    const target = `${ref.kind} ${ref.namespace}/${ref.name}`;
    if (!lookup.grants.permits({ ...GATEWAY, namespace: gateway.namespace }, ref)) {
      faults.push({
        condition: 'ResolvedRefs',
        reason: 'RefNotPermitted',
        message: `${ref.field}: ${target} is in another namespace, and no ReferenceGrant there allows Gateways of ${gateway.namespace} to use it`,
      });
    } else if (!holdsCa(ref.kind === 'ConfigMap' ? lookup.configMap?.(ref.namespace, ref.name) : lookup.secret(ref.namespace, ref.name), ref.kind)) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCACertificateRef', message: `${ref.field}: ${target} does not exist or holds no PEM certificate in ca.crt` });
    } else if (usable.length > 0) {
      faults.push({ condition: 'ResolvedRefs', reason: 'InvalidCACertificateRef', message: `${ref.field}: one CA certificate reference is served per listener, and an earlier one is` });
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

function conflictOf(listener: Listener, listeners: readonly Listener[]): ListenerState['conflict'] {
  const samePort = listeners.filter((other) => other !== listener && other.port === listener.port);
  const otherProtocol = samePort.find((other) => other.protocol !== listener.protocol);
  if (otherProtocol) return { reason: 'ProtocolConflict', message: `listener ${otherProtocol.name} serves ${otherProtocol.protocol} on port ${listener.port}` };
  const sameHost = samePort.find((other) => other.hostname === listener.hostname);
  if (sameHost) return { reason: 'HostnameConflict', message: `listener ${sameHost.name} serves the same hostname on port ${listener.port}` };
  return undefined;
}

export function resolveListeners(gateway: Gateway, lookup: ListenerLookup): ListenerState[] {
  return gateway.listeners.map((listener) => {
    const faults = [...listener.faults, ...certificateFaults(gateway, listener, lookup)];
    const clientCa = clientCaOf(gateway, listener, lookup, faults);
    const frontend = lookup.frontends?.some((candidate) => candidate.port === listener.port && candidate.protocol === listener.protocol) ?? true;
    if (!frontend && !faults.some((fault) => fault.reason === 'UnsupportedProtocol')) {
      faults.push({ condition: 'Accepted', reason: 'PortUnavailable', message: `no frontend of the template serves ${listener.protocol} on port ${listener.port}` });
    }
    const conflict = conflictOf(listener, gateway.listeners);
    const certificateFault = faults.some((fault) => fault.reason === 'InvalidCertificateRef' || fault.reason === 'RefNotPermitted');
    const serving = conflict === undefined && !certificateFault && !faults.some((fault) => fault.condition === 'Accepted') && listener.kinds.length > 0;
    return { listener, faults, conflict, serving, clientCa };
  });
}
