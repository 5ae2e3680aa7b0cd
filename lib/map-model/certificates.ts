import { Buffer } from 'node:buffer';
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { KubeObject } from '../pipeline/model.ts';

/** A TLS Secret turned into the PEM file HAProxy loads, or the field that stopped it. */
export type CheckedCertificate =
  | {
      readonly ok: true;
      readonly pem: string;
      /** When the first certificate to expire in the chain does, in milliseconds since the epoch. */
      readonly notAfter: number;
    }
  | { readonly ok: false; readonly field: string; readonly reason: string };

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\r\n]+[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/g;

/**
 * Debian 12's OpenSSL runs HAProxy at security level 2: keys and
 * signatures weaker than 112 bits of security are refused when the
 * certificate loads, and the whole configuration with it.
 */
const MIN_SECURITY_BITS = 112;
const LEVEL = "HAProxy's OpenSSL (security level 2)";

/**
 * The security of an RSA or DSA modulus as OpenSSL 3 rates it
 * (ossl_ifc_ffc_compute_security_bits: NIST SP 800-56B's estimate, rounded
 * to a multiple of 8, with exact values for the standard sizes), so the
 * limit falls where HAProxy's does: 2047 bits still pass, 1024 do not.
 */
export function modulusSecurityBits(bits: number): number {
  const exact: Readonly<Record<number, number>> = { 2048: 112, 3072: 128, 4096: 152, 6144: 176, 7680: 192, 8192: 200, 15360: 256 };
  if (exact[bits] !== undefined) return exact[bits];
  if (bits >= 687737) return 1200;
  if (bits < 8) return 0;
  const cap = bits <= 7680 ? 192 : bits <= 15360 ? 256 : 1200;
  const x = bits * Math.LN2;
  const y = Math.floor((1.923 * Math.cbrt(x * Math.log(x) ** 2) - 4.69) / Math.LN2);
  return Math.min((y + 4) & ~7, cap);
}

/** Security bits of the named curves OpenSSL knows (half the order's size); others are left to HAProxy. */
const CURVE_BITS: Readonly<Record<string, number>> = {
  prime192v1: 96,
  secp192k1: 96,
  secp160k1: 80,
  secp160r1: 80,
  secp160r2: 80,
  brainpoolP160r1: 80,
  brainpoolP192r1: 96,
  secp224k1: 112,
  secp224r1: 112,
  brainpoolP224r1: 112,
  prime256v1: 128,
  secp256k1: 128,
  brainpoolP256r1: 128,
  secp384r1: 192,
  brainpoolP384r1: 192,
  secp521r1: 256,
  brainpoolP512r1: 256,
};

/** What a key is and its strength, when HAProxy's OpenSSL would refuse it; undefined when it is fine. */
function weakKey(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  const type = key.asymmetricKeyType;
  let described: string;
  let bits: number | undefined;
  switch (type) {
    case 'rsa':
    case 'rsa-pss':
      described = `an RSA key of ${details.modulusLength} bits`;
      bits = modulusSecurityBits(details.modulusLength ?? 0);
      break;
    case 'dsa':
      described = `a DSA key of ${details.modulusLength} bits`;
      bits = Math.min(modulusSecurityBits(details.modulusLength ?? 0), Math.floor((details.divisorLength ?? 0) / 2));
      break;
    case 'ec':
      described = `an EC key on ${details.namedCurve}`;
      bits = CURVE_BITS[details.namedCurve ?? ''];
      break;
    case 'ed25519':
    case 'ed448':
      return undefined;
    default:
      return `a ${type ?? 'unknown'} key, which cannot sign a TLS handshake`;
  }
  if (bits === undefined || bits >= MIN_SECURITY_BITS) return undefined;
  return `${described} (${bits} bits of security); ${LEVEL} needs ${MIN_SECURITY_BITS} bits of security (RSA: 2048 bits, EC: 224)`;
}

/** Digests OpenSSL 3 rates below 80 bits in a signature: refused at any security level above 0. */
const WEAK_DIGEST = /(?:^|[^a-z0-9])(?:md2|md4|md5|sha1)(?![0-9])/i;

function certificateName(index: number, certificate: X509Certificate): string {
  const subject = certificate.subject.split('\n').find((part) => part.startsWith('CN=')) ?? certificate.subject.split('\n')[0];
  return `certificate ${index + 1} (${subject})`;
}

/** Why HAProxy's OpenSSL would refuse this certificate of the chain (its key, or its signature unless self-signed). */
function weakCertificate(certificate: X509Certificate, index: number): string | undefined {
  const key = weakKey(certificate.publicKey);
  if (key !== undefined) return `${certificateName(index, certificate)} has ${key}`;
  const selfSigned = certificate.issuer === certificate.subject && certificate.checkIssued(certificate);
  const algorithm = certificate.signatureAlgorithm ?? '';
  if (!selfSigned && WEAK_DIGEST.test(algorithm)) return `${certificateName(index, certificate)} is signed with ${algorithm}, which ${LEVEL} refuses`;
  return undefined;
}

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
 * Secret, checks that every certificate parses, that the key belongs to the
 * first one, that HAProxy's OpenSSL takes every key and signature (one it
 * refuses would make it refuse the whole configuration) and that no
 * certificate has expired by `now`, and writes the PEM file from the parsed
 * objects. Writing from the parsed objects rather than passing the Secret's
 * text through means only well-formed PEM produced by Node reaches the
 * file: anything else the Secret holds (comments, other blocks, stray
 * bytes) is dropped.
 */
export function checkTlsSecret(secret: KubeObject, now: number = Date.now()): CheckedCertificate {
  const chain = secretCertificates(secret, 'tls.crt');
  if (!Array.isArray(chain)) return chain;
  const keyBytes = decodeBase64(secretData(secret)['tls.key']);
  if (!keyBytes) return { ok: false, field: 'data[tls.key]', reason: 'is missing or not base64' };

  let key: KeyObject;
  try {
    key = createPrivateKey({ key: keyBytes, format: 'pem' });
  } catch (error) {
    return { ok: false, field: 'data[tls.key]', reason: `is not an unencrypted PEM private key: ${errorMessage(error)}` };
  }
  if (!chain[0]!.checkPrivateKey(key)) return { ok: false, field: 'data[tls.key]', reason: 'does not match the certificate in data[tls.crt]' };
  const weak = weakKey(key);
  if (weak !== undefined) return { ok: false, field: 'data[tls.key]', reason: weak };
  for (const [index, certificate] of chain.entries()) {
    const refused = weakCertificate(certificate, index);
    if (refused !== undefined) return { ok: false, field: 'data[tls.crt]', reason: refused };
    if (certificate.validToDate.getTime() < now) {
      return { ok: false, field: 'data[tls.crt]', reason: `${certificateName(index, certificate)} expired on ${certificate.validToDate.toISOString()}` };
    }
  }
  const keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const notAfter = Math.min(...chain.map((certificate) => certificate.validToDate.getTime()));
  return { ok: true, pem: chain.map((certificate) => certificate.toString()).join('') + keyPem, notAfter };
}

/** A Secret's `ca.crt` as the PEM file servers are verified against, or the field that stopped it. */
export type CheckedCa = { readonly ok: true; readonly pem: string } | { readonly ok: false; readonly field: string; readonly reason: string };

/**
 * Reads `ca.crt` of a Secret (one or more CA certificates), checks that each
 * parses and that HAProxy's OpenSSL takes it, and writes the PEM file from
 * the parsed objects, as checkTlsSecret does for certificates.
 */
export function checkCaSecret(secret: KubeObject): CheckedCa {
  return checkedCa(secretCertificates(secret, 'ca.crt'));
}

/** As checkCaSecret, for a ConfigMap's `ca.crt`, which holds the PEM itself (Gateway API caCertificateRefs). */
export function checkCaConfigMap(configMap: KubeObject): CheckedCa {
  const text = secretData(configMap)['ca.crt'];
  return checkedCa(typeof text === 'string' ? pemCertificates(Buffer.from(text, 'latin1'), 'data[ca.crt]') : { ok: false, field: 'data[ca.crt]', reason: 'is missing' });
}

function checkedCa(certificates: X509Certificate[] | { readonly ok: false; readonly field: string; readonly reason: string }): CheckedCa {
  if (!Array.isArray(certificates)) return certificates;
  for (const [index, certificate] of certificates.entries()) {
    const refused = weakCertificate(certificate, index);
    if (refused !== undefined) return { ok: false, field: 'data[ca.crt]', reason: refused };
  }
  return { ok: true, pem: certificates.map((certificate) => certificate.toString()).join('') };
}

function secretData(secret: KubeObject): Readonly<Record<string, unknown>> {
  const data = secret['data'];
  return typeof data === 'object' && data !== null ? (data as Readonly<Record<string, unknown>>) : {};
}

/** The PEM certificates under `key` of a Secret's data, each parsed, or the field and why not. */
function secretCertificates(secret: KubeObject, key: string): X509Certificate[] | { readonly ok: false; readonly field: string; readonly reason: string } {
  const field = `data[${key}]`;
  const bytes = decodeBase64(secretData(secret)[key]);
  if (!bytes) return { ok: false, field, reason: 'is missing or not base64' };
  return pemCertificates(bytes, field);
}

/** The PEM certificates of some bytes, each parsed, or the field and why not. */
function pemCertificates(bytes: Buffer, field: string): X509Certificate[] | { readonly ok: false; readonly field: string; readonly reason: string } {
  const blocks = bytes.toString('latin1').match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) return { ok: false, field, reason: 'holds no PEM certificate' };
  const certificates: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch (error) {
      return { ok: false, field, reason: `certificate ${index + 1} does not parse: ${errorMessage(error)}` };
    }
  }
  return certificates;
}

/** A TLS Secret's check, kept per object while it holds: checked again once it has expired since (the check then says so, with the date). */
export function cachedTlsCheck(secret: KubeObject, cache: WeakMap<KubeObject, CheckedCertificate>, now: number): CheckedCertificate {
  let checked = cache.get(secret);
  if (!checked || (checked.ok && checked.notAfter < now)) {
    checked = checkTlsSecret(secret, now);
    cache.set(secret, checked);
  }
  return checked;
}
