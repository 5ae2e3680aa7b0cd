import type { BackendSettings, ServicePortTls } from '../routing/settings.ts';
import { servicePortKey } from '../routing/settings.ts';
import { isDeepStrictEqual } from 'node:util';
import type { Problem } from '../pipeline/model.ts';
import type { BackendRef } from './claim-types.ts';
import { SETTINGS_FIELD, type BackendUser } from './backend-settings.ts';

/**
 * A backend's settings with the TLS its Service port is spoken to with
 * (a Gateway API BackendTLSPolicy, ServicePortTls): one backend per Service
 * port, so every route to the port, an Ingress's too, speaks TLS to it as
 * the policy says, whatever the routes' own settings ask of the protocol
 * but its HTTP version (HTTP/2 in clear text becomes HTTP/2 over TLS).
 */

export type PortTls = ServicePortTls | undefined;

/** What `ports` say of a backend's Service port: of each share of a split backend, which must then all say the same. */
export function tlsOfBackend(ref: BackendRef, ports: ReadonlyMap<string, ServicePortTls> | undefined): PortTls {
  if (ports === undefined || ports.size === 0) return undefined;
  if (ref.split) {
    const each = ref.split.map((share) => ports.get(servicePortKey(share.namespace, share.service, share.port)));
    if (each.every((tls) => tls === each[0])) return each[0];
    return {
      refused: `its Services ${ref.split.map((share) => `${share.namespace}/${share.service}:${share.port}`).join(', ')} are not all spoken to alike (BackendTLSPolicy), and one backend speaks one way`,
      by: 'BackendTLSPolicy',
    };
  }
  return 'number' in ref.port ? ports.get(servicePortKey(ref.namespace, ref.service, ref.port.number)) : undefined;
}

/** The settings a backend is served with under `tls` (see the file). */
export function withPortTls(settings: BackendSettings, tls: PortTls): BackendSettings {
  if (tls === undefined || !('protocol' in tls)) return settings;
  const version = settings.protocol?.version === 'h2c' ? 'h2' : (settings.protocol?.version ?? tls.protocol.version);
  return Object.freeze({ ...settings, protocol: Object.freeze({ ...tls.protocol, version }) });
}

/** The Service ports ("namespace/service") whose entries differ between two tables. */
export function portTlsChanges(before: ReadonlyMap<string, ServicePortTls> | undefined, after: ReadonlyMap<string, ServicePortTls> | undefined): Set<string> {
  const services = new Set<string>();
  const serviceOf = (key: string) => key.slice(0, key.lastIndexOf('/'));
  for (const [key, tls] of before ?? []) if (after?.get(key) !== tls && !sameTls(tls, after?.get(key))) services.add(serviceOf(key));
  for (const key of after?.keys() ?? []) if (!before?.has(key)) services.add(serviceOf(key));
  return services;
}

export function sameTls(a: ServicePortTls | undefined, b: ServicePortTls | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The users of a backend whose own settings ask for TLS other than its
 * Service port's policy says (an Ingress's backend-protocol HTTPS with
 * proxy-ssl-* of its own): the policy's TLS is served, and each is told.
 */
export function tlsOverridden(name: string, tls: PortTls, users: Iterable<BackendUser>): Problem[] {
  if (tls === undefined || !('protocol' in tls)) return [];
  const { verifyCa, sni, verifyHost } = tls.protocol;
  const told: Problem[] = [];
  for (const user of users) {
    const own = user.settings.protocol;
    if (own === undefined || !own.tls || (isDeepStrictEqual(own.verifyCa, verifyCa) && own.sni === sni && own.verifyHost === verifyHost)) continue;
    told.push({ object: user.label, field: SETTINGS_FIELD, message: `backend ${name} speaks TLS as ${tls.by} says for its Service port, not as these settings ask (protocol)` });
  }
  return told;
}
