import { expect } from 'chai';
import { describesCertificate } from '../../../lib/dataplane/certificate-identity.ts';
import type { StoredCertificate } from '../../../lib/dataplane/types.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';
import { serialOf } from '../../support/tls-handshake.ts';

const pem = `${LEAF_CERT}${CA_CERT}${LEAF_KEY}`;

/** What the Data Plane API answers for `pem` stored as shop.pem (docs/dataplane-api-contract.md §7a). */
const stored: StoredCertificate = {
  storage_name: 'shop.pem',
  file: '/etc/haproxy/ssl/shop.pem',
  size: Buffer.byteLength(pem),
  serial: BigInt(`0x${serialOf(LEAF_CERT)}`).toString(10),
  not_before: '2026-11-21T08:17:16.000Z',
  not_after: '2036-11-18T08:17:16.000Z',
  subject: 'shop.example.com',
  issuers: 'Fixture-CA',
};

describe('describesCertificate', () => {
  it('recognises a PEM by the size, serial, dates and subject the API gives for it', () => {
    expect(describesCertificate(stored, pem)).to.equal(true);
    // Fields the API left out do not count against it.
    expect(describesCertificate({ storage_name: 'shop.pem', serial: stored.serial }, pem)).to.equal(true);
  });

  it('tells another PEM apart by any of them', () => {
    expect(describesCertificate(stored, `${SELF_SIGNED_CERT}${SELF_SIGNED_KEY}`)).to.equal(false);
    expect(describesCertificate({ ...stored, size: stored.size! + 1 }, pem)).to.equal(false);
    expect(describesCertificate({ ...stored, serial: '1' }, pem)).to.equal(false);
    expect(describesCertificate({ ...stored, not_after: '2036-11-18T08:17:17.000Z' }, pem)).to.equal(false);
    expect(describesCertificate({ ...stored, not_before: '2026-11-22T08:17:16.000Z' }, pem)).to.equal(false);
    expect(describesCertificate({ ...stored, subject: 'other.example.com' }, pem)).to.equal(false);
  });

  it('never takes text without a certificate for one', () => {
    expect(describesCertificate({ storage_name: 'x.pem' }, '# stored certificate x.pem\n')).to.equal(false);
    expect(describesCertificate({ storage_name: 'x.pem' }, '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n')).to.equal(false);
  });
});
