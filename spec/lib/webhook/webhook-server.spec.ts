import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { generateCertificate, needsRenewal, serviceDnsNames, unusableReason, type GeneratedCertificate } from '../../../lib/webhook/serving-certificate.ts';
import { WebhookServer } from '../../../lib/webhook/webhook-server.ts';
import { LEAF_CERT, UNRELATED_KEY } from '../../support/tls-fixture.ts';

/**
 * The webhook's HTTPS side, reached as the API server reaches it: TLS
 * verified against the CA bundle for the Service's DNS name (client.go sets
 * ServerName to name.namespace.svc), JSON in and out.
 */

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly fingerprint: string;
}

function call(port: number, ca: string, path: string, method = 'GET', body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, ca, servername: 'hti.ingress.svc', agent: false, headers: { 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint: (response.socket as TLSSocket).getPeerX509Certificate()!.fingerprint256 }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('webhook serving certificate and server', () => {
  let generated: GeneratedCertificate;
  before(() => {
    generated = generateCertificate({ dnsNames: serviceDnsNames('ingress', 'hti') });
  });

  it('generates a CA and a certificate it signs for the Service names, valid a year', () => {
    const cert = new X509Certificate(generated.cert);
    const ca = new X509Certificate(generated.ca);
    expect(cert.verify(ca.publicKey)).to.equal(true);
    expect(ca.ca).to.equal(true);
    expect(cert.ca).to.equal(false);
    expect(cert.subjectAltName).to.equal('DNS:hti.ingress.svc, DNS:hti.ingress, DNS:hti.ingress.svc.cluster.local');
    expect(cert.checkHost('hti.ingress.svc')).to.equal('hti.ingress.svc');
    const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
    expect(days).to.be.within(364, 366);
    expect(unusableReason(generated)).to.equal(undefined);
  });

  it('renews under the same CA, so the CA bundle stays as it is', () => {
    const renewed = generateCertificate({ dnsNames: ['hti.ingress.svc'], ca: { cert: generated.ca, key: generated.caKey } });
    expect(renewed.ca).to.equal(generated.ca);
    expect(new X509Certificate(renewed.cert).verify(new X509Certificate(generated.ca).publicKey)).to.equal(true);
  });

  it('knows when a certificate is due: a third of its life left, or none', () => {
    expect(needsRenewal(generated.cert)).to.equal(false);
    expect(needsRenewal(generated.cert, new Date(Date.now() + 250 * 86_400_000))).to.equal(true);
    expect(needsRenewal('not a certificate')).to.equal(true);
  });

  it("tells a key that is not the certificate's", () => {
    expect(unusableReason({ cert: LEAF_CERT, key: UNRELATED_KEY })).to.be.a('string');
  });

  describe('server', () => {
    let server: WebhookServer;
    const reviewed: { body: unknown; timeoutMs: number }[] = [];
    let notReady: string | undefined;
    beforeEach(async () => {
      reviewed.length = 0;
      notReady = undefined;
      server = await WebhookServer.start({
        host: '127.0.0.1',
        port: 0,
        certificate: generated,
        notReady: () => notReady,
        review: async (body, deadline) => {
          reviewed.push({ body, timeoutMs: Math.round((deadline - Date.now()) / 1000) * 1000 });
          return { status: 200, body: { answered: true } };
        },
      });
    });
    afterEach(() => server.close());

    it('takes AdmissionReviews on POST /validate, within the timeout the API server sends', async () => {
      const reply = await call(server.port, generated.ca, '/validate?timeout=5s', 'POST', JSON.stringify({ kind: 'AdmissionReview' }));
      expect(reply).to.deep.include({ status: 200, body: '{"answered":true}' });
      expect(reviewed).to.deep.equal([{ body: { kind: 'AdmissionReview' }, timeoutMs: 5000 }]);
      await call(server.port, generated.ca, '/validate', 'POST', '{}');
      expect(reviewed[1]!.timeoutMs).to.equal(10_000);
    });

    it('answers /healthz with why it cannot judge yet', async () => {
      expect(await call(server.port, generated.ca, '/healthz')).to.deep.include({ status: 200, body: 'ok' });
      notReady = 'resources not listed yet';
      expect(await call(server.port, generated.ca, '/healthz')).to.deep.include({ status: 503, body: 'not ready: resources not listed yet' });
    });

    it('refuses other paths, methods and bodies that are not JSON', async () => {
      expect((await call(server.port, generated.ca, '/mutate', 'POST', '{}')).status).to.equal(404);
      expect((await call(server.port, generated.ca, '/validate')).status).to.equal(405);
      expect((await call(server.port, generated.ca, '/validate', 'POST', '{')).status).to.equal(400);
      expect(reviewed).to.deep.equal([]);
    });

    it('serves new connections with a new certificate without a restart', async () => {
      const before = await call(server.port, generated.ca, '/healthz');
      const renewed = generateCertificate({ dnsNames: ['hti.ingress.svc'], ca: { cert: generated.ca, key: generated.caKey } });
      server.setCertificate(renewed);
      const after = await call(server.port, generated.ca, '/healthz');
      expect(before.fingerprint).to.equal(new X509Certificate(generated.cert).fingerprint256);
      expect(after.fingerprint).to.equal(new X509Certificate(renewed.cert).fingerprint256);
    });
  });
});
