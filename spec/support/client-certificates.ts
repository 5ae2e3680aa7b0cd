import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

/**
 * Certificate authorities and the client certificates they sign, made
 * fresh per spec run with node-forge (Node's crypto cannot issue X.509);
 * keys come from Node. Test-only: they protect nothing.
 */

export interface Issued {
  /** PEM. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

export interface Authority extends Issued {
  /** A client certificate for `commonName` (and organisation `organisation`), signed by this CA. */
  readonly issue: (commonName: string, organisation: string) => Issued;
}

const HOUR = 3_600_000;

function rsaKey(): forge.pki.rsa.PrivateKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
}

function certificate(key: forge.pki.rsa.PrivateKey, subject: forge.pki.CertificateField[], issuer: forge.pki.CertificateField[], extensions: object[]): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(Date.now() - HOUR);
  cert.validity.notAfter = new Date(Date.now() + 24 * HOUR);
  cert.setSubject(subject);
  cert.setIssuer(issuer);
  cert.setExtensions(extensions);
  return cert;
}

export function certificateAuthority(commonName: string): Authority {
  const key = rsaKey();
  const name = [{ name: 'commonName', value: commonName }];
  const ca = certificate(key, name, name, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  ca.sign(key, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(ca),
    key: forge.pki.privateKeyToPem(key),
    issue: (client, organisation) => {
      const clientKey = rsaKey();
      const leaf = certificate(
        clientKey,
        [
          { name: 'commonName', value: client },
          { name: 'organizationName', value: organisation },
        ],
        name,
        [
          { name: 'basicConstraints', cA: false },
          { name: 'extKeyUsage', clientAuth: true },
        ],
      );
      leaf.sign(key, forge.md.sha256.create());
      return { cert: forge.pki.certificateToPem(leaf), key: forge.pki.privateKeyToPem(clientKey) };
    },
  };
}
