import { compareCodeUnits } from '../compare.ts';
import type { GatewayApiModel } from './gateway-api.ts';
import type { CaRef } from '../routing/settings.ts';

/**
 * The certificates HTTPS listeners ask HAProxy to serve: each Secret a
 * served listener references (already resolved: a TLS Secret this Gateway
 * may use), for the SNI names of the listener's hostname, or, without one,
 * of the hostnames its attached routes are served for. A certificate with
 * no name to serve is not asked for: a crt-list line without SNI names
 * would answer for whatever names the certificate holds, another tenant's
 * too (the rule lib/ingress/translate-ingress.ts follows for TLS entries).
 *
 * A listener without a hostname serves every name (apis/v1/gateway_types.go
 * Listener.Hostname: "all hostnames are matched"), so the certificate of the
 * first such listener (by Gateway, then listener order) is instead the
 * `fallback`: the one for names no other certificate lists, its routes'
 * names among them.
 */
export interface CertificateClaim {
  readonly namespace: string;
  readonly secret: string;
  /** Sorted SNI names, wildcards included. */
  readonly hosts: readonly string[];
  /** Where it was asked, for messages: "Gateway ns/name", the certificateRefs field. */
  readonly object: string;
  readonly field: string;
  /** The certificate for names no crt-list line lists (the first listener without a hostname's first certificateRef). */
  readonly fallback: boolean;
  /** The listener's client certificate validation: the handshake refused without a valid certificate (`required`) or not. */
  readonly clientCa?: { readonly ca: CaRef; readonly verify: 'required' | 'optional' };
}

export function certificateClaims(model: GatewayApiModel): CertificateClaim[] {
  const claims: CertificateClaim[] = [];
  let fallback = false;
  const outcomes = [...model.gateways.values()].filter((outcome) => outcome.served !== undefined);
  outcomes.sort((a, b) => compareCodeUnits(a.served!.gateway.label, b.served!.gateway.label));
  for (const outcome of outcomes) {
    for (const state of outcome.served?.listeners ?? []) {
      const { listener } = state;
      if (!state.serving || listener.protocol !== 'HTTPS') continue;
      const names = listener.hostname !== undefined ? [listener.hostname] : [...(outcome.attachedHostnames.get(listener.name) ?? [])].filter((host) => host !== '*');
      const isFallback: boolean = !fallback && listener.hostname === undefined && listener.certificateRefs.length > 0;
      if (names.length === 0 && !isFallback) continue;
      fallback ||= isFallback;
      const hosts = names.toSorted();
      const client = state.clientCa && { clientCa: { ca: state.clientCa.ca, verify: state.clientCa.mode === 'AllowValidOnly' ? ('required' as const) : ('optional' as const) } };
      listener.certificateRefs.forEach((ref, index) => {
        // The fallback answers every name no line lists: its routes' names need no line (nor a reload when one comes).
        const first = isFallback && index === 0;
        claims.push({ namespace: ref.namespace, secret: ref.name, hosts: first ? [] : hosts, object: outcome.served!.gateway.label, field: ref.field, fallback: first, ...client });
      });
    }
  }
  return claims;
}
