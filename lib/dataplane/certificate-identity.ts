/**
 * Whether the metadata the Data Plane API gives for a stored certificate
 * (docs/dataplane-api-contract.md §7a) describes a given PEM. The API never
 * returns the PEM, so a deployed certificate is recognised by what the
 * metadata carries: the file's size, a serial number of one of its
 * certificates (the leaf's, in decimal), the latest notBefore and the
 * earliest notAfter of its certificates, and the subject when given.
 */
import { X509Certificate } from 'node:crypto';
import type { StoredCertificate } from './types.ts';

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function parsed(pem: string): X509Certificate[] | undefined {
  try {
    return (pem.match(CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
  } catch {
    return undefined;
  }
}

function sameInstant(stated: string | undefined, date: Date): boolean {
  return stated === undefined || Date.parse(stated) === date.getTime();
}

export function describesCertificate(stored: StoredCertificate, pem: string): boolean {
  if (stored.size !== undefined && stored.size !== Buffer.byteLength(pem)) return false;
  const certificates = parsed(pem);
  if (certificates === undefined || certificates.length === 0) return false;
  if (stored.serial !== undefined && !certificates.some((certificate) => BigInt(`0x${certificate.serialNumber}`).toString(10) === stored.serial)) {
    return false;
  }
  const notBefore = new Date(Math.max(...certificates.map((certificate) => certificate.validFromDate.getTime())));
  const notAfter = new Date(Math.min(...certificates.map((certificate) => certificate.validToDate.getTime())));
  if (!sameInstant(stored.not_before, notBefore) || !sameInstant(stored.not_after, notAfter)) return false;
  return stored.subject === undefined || certificates.some((certificate) => certificate.subject.split('\n').includes(`CN=${stored.subject}`));
}
