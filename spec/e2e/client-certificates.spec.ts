import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { ask, EchoBackend, routed, seen } from '../support/echo-backend.ts';
import { certificateAuthority, type Authority, type Issued } from '../support/client-certificates.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { base64, LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * Client certificate authentication (ingress-nginx's auth-tls-*, issue 30)
 * end to end: real client certificates from CAs made for the run, over
 * real TLS through one controller and one real HAProxy, to a backend that
 * echoes the headers it receives. Hosts with and without it share one
 * HTTPS bind and one TLS Secret.
 */

const NGINX = 'nginx.ingress.kubernetes.io/';

function caSecret(name: string, ca: string): string {
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: Opaque\ndata: { ca.crt: ${base64(ca)} }\n`;
}

describe('client certificate authentication end to end (auth-tls-*)', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;
  let trusted: Authority;
  let other: Authority;
  let alice: Issued;
  let mallory: Issued;

  const clientAuth = (verify: string, more: Record<string, string> = {}) => ({ [`${NGINX}auth-tls-secret`]: 'default/client-ca', [`${NGINX}auth-tls-verify-client`]: verify, ...more });

  before(async () => {
    trusted = certificateAuthority('Trusted Client CA');
    other = certificateAuthority('Other CA');
    alice = trusted.issue('alice', 'Acme');
    mallory = other.issue('mallory', 'Evil');
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0, watchedConfig: true }, []);
    const port = [{ port: 80, targetPort: echo.port }];
    await harness.write('echo.yaml', docs(service('echo', port), slice('echo-1', 'echo', undefined, echo.port)));
    await harness.write('ca.yaml', caSecret('client-ca', trusted.cert));
    await harness.write(
      'ingresses.yaml',
      docs(
        tlsSecret('site-tls', LEAF_CERT, LEAF_KEY),
        routed('required', 'required.example.com', clientAuth('on', { [`${NGINX}auth-tls-pass-certificate-to-upstream`]: 'true' }), ['/'], 'site-tls'),
        routed('optional', 'optional.example.com', clientAuth('optional'), ['/'], 'site-tls'),
        routed('error-page', 'error-page.example.com', clientAuth('on', { [`${NGINX}auth-tls-error-page`]: 'https://help.example.com/certificates' }), ['/'], 'site-tls'),
        routed('missing-ca', 'missing-ca.example.com', { [`${NGINX}auth-tls-secret`]: 'default/no-such-ca' }, ['/'], 'site-tls'),
        routed('open', 'open.example.com', {}, ['/'], 'site-tls'),
      ),
    );
    await eventually(
      () => ask(harness, 'open.example.com', '/', { tls: true }),
      (answer) => answer.status === 200,
      'the Ingresses to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  it('serves a client whose certificate the CA signed, and tells the backend who it is as ingress-nginx does', async () => {
    const headers = (await seen(harness, 'required.example.com', '/', { tls: true, ...alice })).headers;
    expect(headers['ssl-client-verify']).to.equal('SUCCESS');
    // RFC 2253 order, as nginx's $ssl_client_s_dn.
    expect(headers['ssl-client-subject-dn']).to.equal('O=Acme,CN=alice');
    expect(headers['ssl-client-issuer-dn']).to.equal('CN=Trusted Client CA');
    // auth-tls-pass-certificate-to-upstream: the URL-encoded PEM, which decodes to the very certificate.
    const passed = new X509Certificate(decodeURIComponent(String(headers['ssl-client-cert'])));
    expect(passed.fingerprint256).to.equal(new X509Certificate(alice.cert).fingerprint256);
  });

  it('answers 400 without a certificate, and 400 to one from another CA, as nginx does (verify "on")', async () => {
    const none = await ask(harness, 'required.example.com', '/', { tls: true });
    expect([none.status, none.body]).to.deep.equal([400, 'No required SSL certificate was sent']);
    const foreign = await ask(harness, 'required.example.com', '/', { tls: true, ...mallory });
    expect([foreign.status, foreign.body]).to.deep.equal([400, 'The SSL certificate error']);
  });

  it("redirects plain HTTP first (ingress-nginx's ssl-redirect), so a request is never served without the check", async () => {
    expect((await ask(harness, 'required.example.com', '/')).status).to.equal(308);
  });

  it('serves a client without a certificate with "optional", telling the backend NONE, and still refuses one from another CA', async () => {
    const none = await seen(harness, 'optional.example.com', '/', { tls: true, headers: { 'ssl-client-verify': 'SUCCESS', 'ssl-client-subject-dn': 'CN=forged' } });
    expect([none.headers['ssl-client-verify'], none.headers['ssl-client-subject-dn']]).to.deep.equal(['NONE', undefined]);
    expect((await seen(harness, 'optional.example.com', '/', { tls: true, ...alice })).headers['ssl-client-verify']).to.equal('SUCCESS');
    expect((await ask(harness, 'optional.example.com', '/', { tls: true, ...mallory })).status).to.equal(400);
  });

  it('leaves a host without client certificates on the same bind and Secret as it was: no certificate asked, none checked', async () => {
    const plain = await seen(harness, 'open.example.com', '/', { tls: true });
    expect(plain.headers['ssl-client-verify']).to.equal(undefined);
    // A certificate from any CA is not even looked at: the crt-list line of this name asks for none.
    expect((await ask(harness, 'open.example.com', '/', { tls: true, ...mallory })).status).to.equal(200);
  });

  it('answers 421 to a request for a protected host over a connection made for another name (its certificate was never asked for)', async () => {
    const crossed = await ask(harness, 'required.example.com', '/', { tls: true, servername: 'open.example.com', ...alice });
    expect(crossed.status).to.equal(421);
  });

  it("redirects a refused request to auth-tls-error-page (302), as nginx's error_page 495 496 does", async () => {
    const refused = await ask(harness, 'error-page.example.com', '/', { tls: true });
    expect([refused.status, refused.headers.location]).to.deep.equal([302, 'https://help.example.com/certificates']);
    expect((await ask(harness, 'error-page.example.com', '/', { tls: true, ...alice })).status).to.equal(200);
  });

  it('fails closed when the CA Secret is missing: every request refused, the Ingress named in a warning', async () => {
    expect((await ask(harness, 'missing-ca.example.com', '/', { tls: true, ...alice })).status).to.equal(400);
    expect((await ask(harness, 'missing-ca.example.com', '/', { tls: true })).status).to.equal(400);
    expect(await harness.line(0, /Ingress default\/missing-ca.*Secret default\/no-such-ca not found: its client certificate authentication refuses every certificate/)).to.be.a('string');
  });

  it('follows a change of the CA Secret (a reload: HAProxy reads CA files at start)', async () => {
    const before = await harness.reloads();
    await harness.write('ca.yaml', caSecret('client-ca', other.cert));
    await eventually(
      () => ask(harness, 'required.example.com', '/', { tls: true, ...mallory }),
      (answer) => answer.status === 200,
      'the new CA to be trusted',
      15_000,
    );
    expect((await ask(harness, 'required.example.com', '/', { tls: true, ...alice })).status).to.equal(400);
    expect(await harness.reloads()).to.be.greaterThan(before);
    await harness.write('ca.yaml', caSecret('client-ca', trusted.cert));
    await eventually(
      () => ask(harness, 'required.example.com', '/', { tls: true, ...alice }),
      (answer) => answer.status === 200,
      'the first CA to be trusted again',
      15_000,
    );
  });
});
