import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Runs a program with `input` on its stdin; rejects when it cannot start (a missing openssl fails loudly). */
function run(program: string, args: readonly string[], input: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(program, args, { timeout: 10_000 }, (error, stdout) => (error && (error as NodeJS.ErrnoException).code === 'ENOENT' ? reject(error) : resolve({ stdout })));
    child.stdin!.end(input);
  });
}

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
  let work: string;

  const clientAuth = (verify: string, more: Record<string, string> = {}) => ({ [`${NGINX}auth-tls-secret`]: 'default/client-ca', [`${NGINX}auth-tls-verify-client`]: verify, ...more });

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'client-certificates-'));
    trusted = certificateAuthority('Trusted Client CA');
    other = certificateAuthority('Other CA');
    alice = trusted.issue('alice', 'Acme');
    mallory = other.issue('mallory', 'Evil');
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0, watchedConfig: true }, []);
    const port = [{ port: 80, targetPort: echo.port }];
    await harness.write('echo.yaml', docs(service('echo', port), slice('echo-1', 'echo', undefined, echo.port)));
    await harness.write('ca.yaml', docs(caSecret('client-ca', trusted.cert), caSecret('partner-ca', other.cert)));
    await harness.write(
      'ingresses.yaml',
      docs(
        tlsSecret('site-tls', LEAF_CERT, LEAF_KEY),
        routed('required', 'required.example.com', clientAuth('on', { [`${NGINX}auth-tls-pass-certificate-to-upstream`]: 'true' }), ['/'], 'site-tls'),
        routed('optional', 'optional.example.com', clientAuth('optional'), ['/'], 'site-tls'),
        routed('error-page', 'error-page.example.com', clientAuth('on', { [`${NGINX}auth-tls-error-page`]: 'https://help.example.com/certificates' }), ['/'], 'site-tls'),
        routed('missing-ca', 'missing-ca.example.com', { [`${NGINX}auth-tls-secret`]: 'default/no-such-ca' }, ['/'], 'site-tls'),
        routed('no-ca', 'no-ca.example.com', clientAuth('optional_no_ca'), ['/'], 'site-tls'),
        routed('open', 'open.example.com', {}, ['/'], 'site-tls'),
        // Another tenant's host, whose CA signs mallory's certificate.
        routed('partner', 'partner.example.com', { [`${NGINX}auth-tls-secret`]: 'default/partner-ca' }, ['/'], 'site-tls'),
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

  /**
   * One GET / over TLS 1.3 with `openssl s_client` (Debian's OpenSSL 3.0 offers a session under
   * another SNI name; Node's client does not, an attacker's may), saving the session to `sessionOut`
   * or offering the one in `sessionIn`.
   */
  async function exchange(options: { servername: string; host: string; sessionIn?: string; sessionOut?: string; client?: Issued }): Promise<{ status: number; reused: boolean }> {
    const args = ['s_client', '-tls1_3', '-ign_eof', '-connect', `127.0.0.1:${harness.ports.https}`, '-servername', options.servername];
    if (options.sessionIn) args.push('-sess_in', options.sessionIn);
    if (options.sessionOut) args.push('-sess_out', options.sessionOut);
    if (options.client) {
      await writeFile(join(work, 'client.crt'), options.client.cert);
      await writeFile(join(work, 'client.key'), options.client.key);
      args.push('-cert', join(work, 'client.crt'), '-key', join(work, 'client.key'));
    }
    const { stdout } = await run('openssl', args, `GET / HTTP/1.1\r\nHost: ${options.host}\r\nConnection: close\r\n\r\n`);
    return { status: Number(/HTTP\/1\.1 (\d{3}) /.exec(stdout)?.[1] ?? 0), reused: /^Reused, TLSv1\.3/m.test(stdout) };
  }

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

  it('refuses nothing with "optional_no_ca": the backend is told the certificate failed, with OpenSSL\'s error number', async () => {
    const foreign = (await seen(harness, 'no-ca.example.com', '/', { tls: true, ...mallory })).headers;
    // 21: X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE (nginx writes "FAILED:unable to verify the first certificate").
    expect([foreign['ssl-client-verify'], foreign['ssl-client-subject-dn']]).to.deep.equal(['FAILED:21', 'O=Evil,CN=mallory']);
    expect((await seen(harness, 'no-ca.example.com', '/', { tls: true })).headers['ssl-client-verify']).to.equal('NONE');
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

  it("never resumes a TLS session made for another CA's host: mallory, accepted by the partner host, is refused by the other", async () => {
    const session = join(work, 'partner.session');
    const first = await exchange({ servername: 'partner.example.com', host: 'partner.example.com', sessionOut: session, client: mallory });
    expect([first.reused, first.status]).to.deep.equal([false, 200]);
    // Resumed under another SNI name, a TLS 1.3 session would keep the certificate the partner's CA verified (ssl_c_verify 0).
    const resumed = await exchange({ servername: 'required.example.com', host: 'required.example.com', sessionIn: session });
    expect([resumed.reused, resumed.status]).to.deep.equal([false, 400]);
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
    await harness.write('ca.yaml', docs(caSecret('client-ca', other.cert), caSecret('partner-ca', other.cert)));
    await eventually(
      () => ask(harness, 'required.example.com', '/', { tls: true, ...mallory }),
      (answer) => answer.status === 200,
      'the new CA to be trusted',
      15_000,
    );
    expect((await ask(harness, 'required.example.com', '/', { tls: true, ...alice })).status).to.equal(400);
    expect(await harness.reloads()).to.be.greaterThan(before);
    await harness.write('ca.yaml', docs(caSecret('client-ca', trusted.cert), caSecret('partner-ca', other.cert)));
    await eventually(
      () => ask(harness, 'required.example.com', '/', { tls: true, ...alice }),
      (answer) => answer.status === 200,
      'the first CA to be trusted again',
      15_000,
    );
  });
});
