import { expect } from 'chai';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { checkTlsSecret } from '../../../lib/ingress/certificates.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY, UNRELATED_KEY } from '../../support/tls-fixture.ts';
import { tlsSecret } from './fixtures.ts';

function pemOf(secret: KubeObject): string {
  const checked = checkTlsSecret(secret);
  if (!checked.ok) throw new Error(`${checked.field}: ${checked.reason}`);
  return checked.pem;
}

describe('checkTlsSecret', () => {
  it('writes the certificate, then the key as PKCS#8, in a PEM file HAProxy loads', () => {
    const pem = pemOf(tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY));
    expect(new X509Certificate(pem).subject).to.equal('CN=example.com');
    expect(createPrivateKey(pem).asymmetricKeyType).to.equal('rsa');
    expect(pem.startsWith(SELF_SIGNED_CERT.trim())).to.equal(true);
    expect(pem).to.contain('-----BEGIN PRIVATE KEY-----');
  });

  it('keeps the chain in order and re-encodes a key given in another PEM form', () => {
    const sec1 = createPrivateKey(LEAF_KEY).export({ type: 'sec1', format: 'pem' }).toString();
    expect(sec1).to.contain('BEGIN EC PRIVATE KEY');
    const pem = pemOf(tlsSecret('shop', `${LEAF_CERT}${CA_CERT}`, sec1));
    const blocks = pem.match(/-----BEGIN [A-Z ]+-----/g);
    expect(blocks).to.deep.equal(['-----BEGIN CERTIFICATE-----', '-----BEGIN CERTIFICATE-----', '-----BEGIN PRIVATE KEY-----']);
    expect(pem.indexOf(LEAF_CERT.trim())).to.equal(0);
    expect(pem.indexOf(CA_CERT.trim())).to.be.greaterThan(0);
  });

  it('drops everything in the Secret that is not a certificate or the key', () => {
    const noisy = `Bag Attributes\n    friendlyName: web\nsubject=/CN=example.com\n${SELF_SIGNED_CERT}\n# crt /etc/passwd\n`;
    const pem = pemOf(tlsSecret('web', noisy, `# comment\n${SELF_SIGNED_KEY}\ntrailing text\n`));
    expect(pem).to.not.contain('Bag Attributes');
    expect(pem).to.not.contain('/etc/passwd');
    expect(pem).to.not.contain('comment');
    expect(pem).to.not.contain('trailing');
  });

  it('names the field that stops a Secret', () => {
    const cases: [KubeObject, string, RegExp][] = [
      [{ ...tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY), data: {} }, 'data[tls.crt]', /missing/],
      [{ ...tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY), data: undefined }, 'data[tls.crt]', /missing/],
      [{ ...tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY), data: { 'tls.crt': 'a b', 'tls.key': 'x' } }, 'data[tls.crt]', /base64/],
      [{ ...tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY), data: { 'tls.crt': Buffer.from(SELF_SIGNED_CERT).toString('base64') } }, 'data[tls.key]', /missing/],
      [tlsSecret('web', 'no certificate here', SELF_SIGNED_KEY), 'data[tls.crt]', /no PEM certificate/],
      // A line of the body missing: still PEM-shaped, but not a certificate.
      [tlsSecret('web', SELF_SIGNED_CERT.split('\n').toSpliced(3, 1).join('\n'), SELF_SIGNED_KEY), 'data[tls.crt]', /does not parse/],
      [tlsSecret('web', SELF_SIGNED_CERT, 'no key here'), 'data[tls.key]', /private key/],
      [tlsSecret('web', SELF_SIGNED_CERT, UNRELATED_KEY), 'data[tls.key]', /does not match/],
      // The key must match the first certificate, not any in the chain.
      [tlsSecret('web', `${CA_CERT}${LEAF_CERT}`, LEAF_KEY), 'data[tls.key]', /does not match/],
    ];
    for (const [secret, field, reason] of cases) {
      const checked = checkTlsSecret(secret);
      expect(checked.ok, field).to.equal(false);
      if (checked.ok) continue;
      expect(checked.field).to.equal(field);
      expect(checked.reason).to.match(reason);
    }
  });
});
