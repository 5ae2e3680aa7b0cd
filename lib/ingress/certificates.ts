import { Buffer } from 'node:buffer';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KubeObject } from '../pipeline/model.ts';

/** A TLS Secret turned into the PEM file HAProxy loads, or the field that stopped it. */
export type CheckedCertificate =
  | { readonly ok: true; readonly pem: string }
  | { readonly ok: false; readonly field: string; readonly reason: string };

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\r\n]+[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/g;

/**
 * Kubernetes stores Secret data as canonical base64. Buffer.from skips any
 * character it does not know, so a round trip is the strict check: it
 * refuses text that would otherwise decode to something unintended.
 */
function decodeBase64(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.toString('base64') === value ? bytes : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads `tls.crt` (the certificate, then any chain) and `tls.key` of a TLS
 * Secret, checks that every certificate parses and that the key belongs to
 * the first one, and writes the PEM file from the parsed objects. Writing
 * from the parsed objects rather than passing the Secret's text through means
 * only well-formed PEM produced by Node reaches the file: anything else the
 * Secret holds (comments, other blocks, stray bytes) is dropped.
 */
export function checkTlsSecret(secret: KubeObject): CheckedCertificate {
  const data = secret['data'];
  const fields = typeof data === 'object' && data !== null ? (data as Readonly<Record<string, unknown>>) : {};

  const certificateBytes = decodeBase64(fields['tls.crt']);
  if (!certificateBytes) return { ok: false, field: 'data[tls.crt]', reason: 'is missing or not base64' };
  const keyBytes = decodeBase64(fields['tls.key']);
  if (!keyBytes) return { ok: false, field: 'data[tls.key]', reason: 'is missing or not base64' };

  const blocks = certificateBytes.toString('latin1').match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) return { ok: false, field: 'data[tls.crt]', reason: 'holds no PEM certificate' };
  const chain: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block));
    } catch (error) {
      return { ok: false, field: 'data[tls.crt]', reason: `certificate ${index + 1} does not parse: ${errorMessage(error)}` };
    }
  }

  let keyPem: string;
  try {
    const key = createPrivateKey({ key: keyBytes, format: 'pem' });
    if (!chain[0]!.checkPrivateKey(key)) {
      return { ok: false, field: 'data[tls.key]', reason: 'does not match the certificate in data[tls.crt]' };
    }
    keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch (error) {
    return { ok: false, field: 'data[tls.key]', reason: `is not an unencrypted PEM private key: ${errorMessage(error)}` };
  }

  return { ok: true, pem: chain.map((certificate) => certificate.toString()).join('') + keyPem };
}
