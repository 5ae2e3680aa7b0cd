/**
 * What the Data Plane API answers for a stored certificate: JSON metadata,
 * never the PEM (v3.3.5 handlers/ssl_cert_storage.go
 * StorageGetOneStorageSSLCertificateHandlerImpl; HEAD
 * handlers/storage/ssl_certificates; the same fields in 3.2.15), built by
 * client-native storage/cert-info.go ParseCertificatesInfo:
 *
 * - `serial`: the leaf's serial number in decimal (Go big.Int String());
 * - `not_after`: the earliest notAfter of every certificate in the file,
 *   `not_before` the latest notBefore (RFC 3339 with milliseconds, strfmt);
 * - `issuers`: the issuers' common names, `domains` the common names and DNS
 *   names of the non-CA certificates, `ip_addresses` their IP SANs, each
 *   joined with ", " (Go map order: sorted here);
 * - `subject`: the leaf's common name; `size` the file's size in bytes.
 *
 * The leaf is the first non-CA certificate with a name that issues no other
 * one (findLeafCertificate), or the only certificate.
 */
import { X509Certificate } from 'node:crypto';

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** A field of a distinguished name as Node prints it (one `KEY=value` per line). */
function nameField(name: string, key: string): string | undefined {
  return name
    .split('\n')
    .map((line) => /^([^=]+)=(.*)$/.exec(line))
    .find((match) => match?.[1] === key)?.[2];
}

function dnsNames(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
}

function ipAddresses(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('IP Address:'))
    .map((entry) => entry.slice('IP Address:'.length));
}

function leafOf(certificates: readonly X509Certificate[]): X509Certificate | undefined {
  if (certificates.length <= 1) return certificates[0];
  const issuers = new Set(certificates.map((certificate) => certificate.issuer));
  return certificates.find((certificate) => !certificate.ca && (nameField(certificate.subject, 'CN') !== undefined || dnsNames(certificate).length > 0) && !issuers.has(certificate.subject));
}

/** strfmt.DateTime's JSON form: RFC 3339 with milliseconds, in UTC. */
function dateTime(date: Date): string {
  return date.toISOString();
}

export function certificateInfo(pem: string, size: number): Record<string, unknown> {
  const certificates = (pem.match(CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
  const issuers = new Set<string>();
  const domains = new Set<string>();
  const ips = new Set<string>();
  let notAfter: Date | undefined;
  let notBefore: Date | undefined;
  for (const certificate of certificates) {
    const after = certificate.validToDate;
    const before = certificate.validFromDate;
    if (notAfter === undefined || after < notAfter) notAfter = after;
    if (notBefore === undefined || before > notBefore) notBefore = before;
    issuers.add(nameField(certificate.issuer, 'CN') ?? '');
    if (certificate.ca) continue;
    const commonName = nameField(certificate.subject, 'CN');
    if (commonName !== undefined && commonName !== '') domains.add(commonName);
    for (const name of dnsNames(certificate)) domains.add(name);
    for (const ip of ipAddresses(certificate)) ips.add(ip);
  }
  const leaf = leafOf(certificates);
  const joined = (values: ReadonlySet<string>): string | undefined => (values.size === 0 ? undefined : [...values].sort().join(', '));
  const info: Record<string, unknown> = {
    size,
    ...(notAfter === undefined ? {} : { not_after: dateTime(notAfter) }),
    ...(notBefore === undefined ? {} : { not_before: dateTime(notBefore) }),
    ...(joined(issuers) === undefined ? {} : { issuers: joined(issuers) }),
    ...(joined(domains) === undefined ? {} : { domains: joined(domains) }),
    ...(joined(ips) === undefined ? {} : { ip_addresses: joined(ips) }),
  };
  if (leaf !== undefined) {
    info['serial'] = BigInt(`0x${leaf.serialNumber}`).toString(10);
    const subject = nameField(leaf.subject, 'CN');
    if (subject !== undefined) info['subject'] = subject;
  }
  return info;
}
