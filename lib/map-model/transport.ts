import type { BackendSettings, CaRef } from '../routing/settings.ts';
import { certificateFile } from './certificate-file.ts';
import type { Transport } from './types.ts';

/** settings.protocol as server line options; undefined for HTTP/1.1 in clear text, HAProxy's default. */
export function transportOf(settings: BackendSettings): Transport | undefined {
  const protocol = settings.protocol;
  if (protocol === undefined || (protocol.version === 'h1' && !protocol.tls)) return undefined;
  const http2 = protocol.version !== 'h1';
  const verifyCa = protocol.tls ? protocol.verifyCa : undefined;
  const caFile = verifyCa !== undefined && verifyCa !== 'system' ? caCertificateFile(verifyCa) : undefined;
  const systemCa = verifyCa === 'system';
  return Object.freeze({
    ssl: protocol.tls,
    alpnH2: http2 && protocol.tls,
    protoH2: http2 && !protocol.tls,
    verifyNone: protocol.tls && verifyCa === undefined,
    caFile,
    systemCa,
    sni: protocol.tls ? protocol.sni : undefined,
    verifyHost: verifyCa !== undefined ? protocol.verifyHost : undefined,
  });
}

/**
 * The general file a CA Secret's (or ConfigMap's) ca.crt is written to: a
 * general file, not a certificate, because HAProxy reads CA files only at
 * start (a change reloads) while certificates change at runtime.
 * Certificate file names never hold "__" (Secret names have no "..", the
 * separator is one "_"), so the names tell the two apart; a ConfigMap's
 * file is apart from the Secret of the same name's.
 */
export function caCertificateFile(ref: CaRef): string {
  return certificateFile(ref.namespace, ref.name).replace(/\.pem$/, ref.configMap ? '__configmap-ca.pem' : '__ca.pem');
}
