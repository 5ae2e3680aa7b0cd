import type { BackendSettings, SecretRef } from '../routing/settings.ts';
import { certificateFile } from './certificate-file.ts';
import type { Transport } from './types.ts';

/** settings.protocol as server line options; undefined for HTTP/1.1 in clear text, HAProxy's default. */
export function transportOf(settings: BackendSettings): Transport | undefined {
  const protocol = settings.protocol;
  if (protocol === undefined || (protocol.version === 'h1' && !protocol.tls)) return undefined;
  const http2 = protocol.version !== 'h1';
  const caFile = protocol.tls && protocol.verifyCa !== undefined ? caCertificateFile(protocol.verifyCa) : undefined;
  return Object.freeze({
    ssl: protocol.tls,
    alpnH2: http2 && protocol.tls,
    protoH2: http2 && !protocol.tls,
    verifyNone: protocol.tls && caFile === undefined,
    caFile,
    sni: protocol.tls ? protocol.sni : undefined,
  });
}

/**
 * The general file a CA Secret's ca.crt is written to: a general file, not
 * a certificate, because HAProxy reads CA files only at start (a change
 * reloads) while certificates change at runtime. Certificate file names
 * never hold "__" (Secret names have no "..", the separator is one "_"),
 * so the names tell the two apart.
 */
export function caCertificateFile(secret: SecretRef): string {
  return certificateFile(secret.namespace, secret.name).replace(/\.pem$/, '__ca.pem');
}
