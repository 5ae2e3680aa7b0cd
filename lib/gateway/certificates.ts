import type { GatewayApiModel } from './gateway-api.ts';

/**
 * The certificates HTTPS listeners ask HAProxy to serve: each Secret a
 * served listener references (already resolved: a TLS Secret this Gateway
 * may use), for the SNI names of the listener's hostname, or, without one,
 * of the hostnames its attached routes are served for. A certificate with
 * no name to serve is not asked for: a crt-list line without SNI names
 * would answer for whatever names the certificate holds, another tenant's
 * too (the rule lib/ingress/ingress-reader.ts follows for TLS entries).
 */
export interface CertificateClaim {
  readonly namespace: string;
  readonly secret: string;
  /** Sorted SNI names, wildcards included. */
  readonly hosts: readonly string[];
  /** Where it was asked, for messages: "Gateway ns/name", the certificateRefs field. */
  readonly object: string;
  readonly field: string;
}

export function certificateClaims(model: GatewayApiModel): CertificateClaim[] {
  const claims: CertificateClaim[] = [];
  for (const outcome of model.gateways.values()) {
    for (const state of outcome.served?.listeners ?? []) {
      const { listener } = state;
      if (!state.serving || listener.protocol !== 'HTTPS') continue;
      const names = listener.hostname !== undefined ? [listener.hostname] : [...(outcome.attachedHostnames.get(listener.name) ?? [])].filter((host) => host !== '*');
      if (names.length === 0) continue;
      const hosts = names.toSorted();
      for (const ref of listener.certificateRefs) {
        claims.push({ namespace: ref.namespace, secret: ref.name, hosts, object: outcome.served!.gateway.label, field: ref.field });
      }
    }
  }
  return claims;
}
