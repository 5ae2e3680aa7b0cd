import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import forge from 'node-forge';

/**
 * The webhook's serving certificate: given (files, a Secret) or generated
 * here, a CA and a certificate it signs for the webhook Service's DNS names,
 * whose CA is then the caBundle the API server verifies the webhook with.
 * Node's crypto has no X.509 issuing API; node-forge writes the
 * certificates, keys come from Node.
 */

export interface ServingCertificate {
  /** PEM: the certificate, then any chain. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
  /** PEM of the CA that signed it, when known: what the API server must trust. */
  readonly ca: string | undefined;
}

export interface GeneratedCertificate extends ServingCertificate {
  readonly ca: string;
  /** Kept so the certificate can be renewed under the same CA, leaving the caBundle as it is. */
  readonly caKey: string;
}

export interface GenerateOptions {
  /** The names the API server reaches the webhook by; the first is the subject too. */
  readonly dnsNames: readonly string[];
  readonly now?: Date;
  /** Sign with this CA instead of making a new one. */
  readonly ca?: { readonly cert: string; readonly key: string };
}

const day = 86_400_000;
const certificateDays = 365;
const caDays = 3650;
/** Clocks of the API server and this pod may disagree a little. */
const backdateMs = 3_600_000;

function rsaKey(): forge.pki.rsa.PrivateKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
}

/** A positive 128-bit serial number (its top bit clear: DER integers are signed). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

function newCertificate(key: forge.pki.rsa.PrivateKey, now: Date, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now.getTime() - backdateMs);
  cert.validity.notAfter = new Date(now.getTime() + days * day);
  return cert;
}

export function generateCertificate(options: GenerateOptions): GeneratedCertificate {
  const now = options.now ?? new Date();
  const [subject] = options.dnsNames;
  if (subject === undefined) throw new Error('a serving certificate needs at least one DNS name');
  let caCert: forge.pki.Certificate;
  let caKey: forge.pki.rsa.PrivateKey;
  if (options.ca) {
    caCert = forge.pki.certificateFromPem(options.ca.cert);
    caKey = forge.pki.privateKeyFromPem(options.ca.key) as forge.pki.rsa.PrivateKey;
  } else {
    caKey = rsaKey();
    caCert = newCertificate(caKey, now, caDays);
    const name = [{ name: 'commonName', value: 'haproxy-template-ic webhook CA' }];
    caCert.setSubject(name);
    caCert.setIssuer(name);
    caCert.setExtensions([{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }, { name: 'subjectKeyIdentifier' }]);
    caCert.sign(caKey, forge.md.sha256.create());
  }
  const key = rsaKey();
  const cert = newCertificate(key, now, certificateDays);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // The API server, like any Go client, reads the names from here only.
    { name: 'subjectAltName', altNames: options.dnsNames.map((value) => ({ type: 2, value })) },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(cert),
    key: forge.pki.privateKeyToPem(key),
    ca: forge.pki.certificateToPem(caCert),
    caKey: forge.pki.privateKeyToPem(caKey),
  };
}

/** The DNS names the API server reaches a Service by: the one it checks is `name.namespace.svc`. */
export function serviceDnsNames(namespace: string, name: string): string[] {
  return [`${name}.${namespace}.svc`, `${name}.${namespace}`, `${name}.${namespace}.svc.cluster.local`];
}

/** Why a certificate and key cannot serve (they do not parse, or do not belong together); undefined when they can. */
export function unusableReason(certificate: Pick<ServingCertificate, 'cert' | 'key'>): string | undefined {
  try {
    createSecureContext({ cert: certificate.cert, key: certificate.key });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Whether a certificate should be replaced now: a third of its life or
 * less left (cert-manager's default renewal point), or not valid at all.
 */
export function needsRenewal(certPem: string, now: Date = new Date()): boolean {
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(certPem);
  } catch {
    return true;
  }
  const from = new Date(parsed.validFrom).getTime();
  const to = new Date(parsed.validTo).getTime();
  return now.getTime() >= to - (to - from) / 3;
}
