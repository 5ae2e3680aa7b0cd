import { expect } from 'chai';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { checkTlsSecret, modulusSecurityBits } from '../../../lib/map-model/certificates.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY, UNRELATED_KEY } from '../../support/tls-fixture.ts';
import {
  ED25519_CERT,
  ED25519_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  GOOD_CA_CERT,
  P192_CERT,
  P192_KEY,
  RSA_1024_CERT,
  RSA_1024_KEY,
  SHA1_LEAF_CERT,
  SHA1_LEAF_KEY,
  WEAK_CA_CERT,
  WEAK_CHAIN_LEAF_CERT,
  WEAK_CHAIN_LEAF_KEY,
} from '../../support/tls-refused-fixture.ts';
import { tlsSecret } from '../ingress/fixtures.ts';

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

  it('refuses what the OpenSSL of HAProxy refuses at security level 2, naming the field and why, and passes what it takes', () => {
    const refused: [string, KubeObject, string, RegExp][] = [
      [
        'RSA-1024',
        tlsSecret('weak', RSA_1024_CERT, RSA_1024_KEY),
        'data[tls.key]',
        /^an RSA key of 1024 bits \(80 bits of security\); HAProxy's OpenSSL \(security level 2\) needs 112 bits of security \(RSA: 2048 bits/,
      ],
      ['P-192', tlsSecret('weak', P192_CERT, P192_KEY), 'data[tls.key]', /^an EC key on prime192v1 \(96 bits of security\)/],
      [
        'a SHA-1 signature',
        tlsSecret('sha1', SHA1_LEAF_CERT + GOOD_CA_CERT, SHA1_LEAF_KEY),
        'data[tls.crt]',
        /^certificate 1 \(CN=sha1\.example\.com\) is signed with ecdsa-with-SHA1, which HAProxy's OpenSSL \(security level 2\) refuses/,
      ],
      [
        'an RSA-1024 chain certificate',
        tlsSecret('chain', WEAK_CHAIN_LEAF_CERT + WEAK_CA_CERT, WEAK_CHAIN_LEAF_KEY),
        'data[tls.crt]',
        /^certificate 2 \(CN=Fixture-Weak-CA\) has an RSA key of 1024 bits/,
      ],
      ['an expired certificate', tlsSecret('old', EXPIRED_CERT + GOOD_CA_CERT, EXPIRED_KEY), 'data[tls.crt]', /^certificate 1 \(CN=old\.example\.com\) expired on 2021-01-01T00:00:00\.000Z/],
    ];
    for (const [what, secret, field, reason] of refused) {
      const checked = checkTlsSecret(secret);
      expect(checked.ok, what).to.equal(false);
      if (checked.ok) continue;
      expect(checked.field, what).to.equal(field);
      expect(checked.reason, what).to.match(reason);
    }
    for (const [what, secret] of [
      ['Ed25519', tlsSecret('ed', ED25519_CERT, ED25519_KEY)],
      ['RSA-2048', tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
      ['P-256 with its CA', tlsSecret('shop', LEAF_CERT + CA_CERT, LEAF_KEY)],
    ] as const) {
      expect(checkTlsSecret(secret).ok, what).to.equal(true);
    }
  });

  it('rates RSA moduli as OpenSSL 3 does: 2047 bits pass level 2 (haproxy -c takes them), 1024 do not', () => {
    expect([1024, 1536, 2047, 2048, 3072, 4096].map(modulusSecurityBits)).to.deep.equal([80, 96, 112, 112, 128, 152]);
  });

  it('says when a certificate stops being valid, and refuses one that already has', () => {
    const checked = checkTlsSecret(tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY));
    if (!checked.ok) throw new Error(checked.reason);
    expect(checked.notAfter).to.equal(new X509Certificate(SELF_SIGNED_CERT).validToDate.getTime());
    const later = checkTlsSecret(tlsSecret('web', SELF_SIGNED_CERT, SELF_SIGNED_KEY), checked.notAfter + 1);
    expect(later.ok).to.equal(false);
  });
});
