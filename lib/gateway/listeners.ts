import { isFields } from '../object-fields/fields.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { GATEWAY } from './api.ts';
import type { Gateway, Listener, ListenerFault } from './gateway.ts';
import type { ReferenceGrants } from './reference-grants.ts';

/**
 * A Gateway's listeners judged against the cluster and one another: their
 * certificates (a TLS Secret, across namespaces only with a ReferenceGrant),
 * their port (a frontend of the template must serve it), and conflicts
 * between listeners on one port. A listener that fails serves nothing.
 */

export interface ListenerState {
  readonly listener: Listener;
  /** Every fault, read and resolved, in field order. */
  readonly faults: readonly ListenerFault[];
  readonly conflict: { readonly reason: 'HostnameConflict' | 'ProtocolConflict'; readonly message: string } | undefined;
  /** Routes may attach and are served. */
  readonly serving: boolean;
}

/** A port and protocol a frontend of the template serves. */
export interface Frontend {
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
}

export interface ListenerLookup {
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
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

/** Protocols served at layer 4: a frontend in tcp mode of their own per port (lib/routing/l4-route.ts), not the template's HTTP frontends. */
export function isL4Protocol(protocol: string): protocol is 'TLS' | 'TCP' {
  return protocol === 'TLS' || protocol === 'TCP';
}

function protocolText(listener: Listener): string {
  return listener.protocol === 'TLS' ? `TLS (${listener.tlsMode})` : listener.protocol;
}

function conflictOf(listener: Listener, listeners: readonly Listener[]): ListenerState['conflict'] {
  const samePort = listeners.filter((other) => other !== listener && other.port === listener.port);
  // One port either ends TLS or passes it through: mixed modes are refused, as the conformance suite asks of an implementation without TLSRouteModeMixed.
  const otherProtocol = samePort.find((other) => other.protocol !== listener.protocol || other.tlsMode !== listener.tlsMode);
  if (otherProtocol) return { reason: 'ProtocolConflict', message: `listener ${otherProtocol.name} serves ${protocolText(otherProtocol)} on port ${listener.port}` };
  // Two TCP listeners on one port are not distinct (apis/v1/gateway_types.go, Listeners; the CRD refuses a hostname on them), whatever a manifest says.
  const sameHost = samePort.find((other) => other.hostname === listener.hostname || listener.protocol === 'TCP');
  if (sameHost) return { reason: 'HostnameConflict', message: `listener ${sameHost.name} serves the same hostname on port ${listener.port}` };
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

export function resolveListeners(gateway: Gateway, lookup: ListenerLookup): ListenerState[] {
  return gateway.listeners.map((listener) => {
    const faults = [...listener.faults, ...certificateFaults(gateway, listener, lookup)];
    if (!faults.some((fault) => fault.reason === 'UnsupportedProtocol')) {
      const fault = portFault(listener, lookup.frontends);
      if (fault) faults.push({ condition: 'Accepted', reason: 'PortUnavailable', message: fault });
    }
    const conflict = conflictOf(listener, gateway.listeners);
    const certificateFault = faults.some((fault) => fault.reason === 'InvalidCertificateRef' || fault.reason === 'RefNotPermitted');
    const serving = conflict === undefined && !certificateFault && !faults.some((fault) => fault.condition === 'Accepted') && listener.kinds.length > 0;
    return { listener, faults, conflict, serving };
  });
}
