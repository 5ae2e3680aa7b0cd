import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthService, SESSION_COOKIE, VALID_SESSION } from '../support/auth-service.ts';
import { ask, EchoBackend, routed, seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * External authentication (nginx auth-url) end to end: a real HAProxy asks
 * an oauth2-proxy-like service written here (spec/support/auth-service.ts)
 * through the controller's Lua action before the request reaches a real
 * backend. What the client gets (401, the sign-in redirect, 200), what the
 * backend and the auth service see, and what a dead or slow auth service
 * does (500, within the timeout).
 */

const NGINX = 'nginx.ingress.kubernetes.io/';
/** Each try's timeout for these specs (the shipped 2 s would make the slow case take 8 s). */
const TRY_MS = 250;
const COOKIE = { cookie: `${SESSION_COOKIE}=${VALID_SESSION}; theme=dark` };

describe('external authentication (auth-url) end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;
  let auth: AuthService;
  let deadPort: number;

  before(async () => {
    echo = await EchoBackend.start();
    auth = await AuthService.start();
    deadPort = await reservePort();
    const url = (path: string, port = auth.port) => `http://127.0.0.1:${port}${path}`;
    harness = await LocalHarness.start({ manifests: {}, backends: 0, config: (shipped) => shipped.replace(/^( {2}externalAuthTimeout:) \d+$/m, `$1 ${TRY_MS}`) }, []);
    await harness.write(
      'auth.yaml',
      docs(
        service('echo', [{ port: 80, targetPort: echo.port }]),
        slice('echo-1', 'echo', undefined, echo.port),
        // The oauth2-proxy pattern of ingress-nginx's documentation (docs/examples/auth/oauth-external-auth).
        routed('app', 'app.example.com', {
          [`${NGINX}auth-url`]: url('/oauth2/auth'),
          [`${NGINX}auth-signin`]: 'https://auth.example.com/oauth2/start',
          [`${NGINX}auth-response-headers`]: 'X-Auth-Request-User, X-Auth-Request-Email',
        }),
        // Its variables in auth-signin, with the redirect parameter already there.
        routed('vars', 'vars.example.com', { [`${NGINX}auth-url`]: url('/oauth2/auth'), [`${NGINX}auth-signin`]: 'https://$host/oauth2/start?rd=$escaped_request_uri' }),
        // A percent-encoded rd with variables after it, as some write it.
        routed('encoded', 'encoded.example.com', {
          [`${NGINX}auth-url`]: url('/oauth2/auth'),
          [`${NGINX}auth-signin`]: 'https://auth.example.com/oauth2/start?rd=https%3A%2F%2F$host$request_uri',
        }),
        routed('api', 'api.example.com', { [`${NGINX}auth-url`]: url('/oauth2/auth'), [`${NGINX}auth-method`]: 'POST' }),
        routed('forbidden', 'forbidden.example.com', { [`${NGINX}auth-url`]: url('/forbidden') }),
        routed('broken', 'broken.example.com', { [`${NGINX}auth-url`]: url('/broken') }),
        routed('dead', 'dead.example.com', { [`${NGINX}auth-url`]: url('/oauth2/auth', deadPort) }),
        routed('slow', 'slow.example.com', { [`${NGINX}auth-url`]: url('/slow') }),
        routed('plain', 'plain.example.com', {}),
        // Over HTTPS: the scheme of rd and X-Original-URL is the request's.
        routed('shop', 'shop.example.com', { [`${NGINX}auth-url`]: url('/oauth2/auth'), [`${NGINX}auth-signin`]: 'https://auth.example.com/oauth2/start' }, ['/'], 'shop-tls'),
        tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY),
      ),
    );
    await eventually(
      () => ask(harness, 'app.example.com', '/'),
      (answer) => answer.status === 302,
      'the auth routes to be served',
      15_000,
    );
  });

  after(async () => {
    await harness?.stop();
    await auth?.stop();
    await echo?.stop();
  });

  it('redirects a request without a session to auth-signin, with rd the request URL as ingress-nginx builds it', async () => {
    const answer = await ask(harness, 'app.example.com', '/some/path?q=1');
    // HAProxy's own answer: the backend, which answers JSON, was not asked.
    expect(answer.body).to.equal('302 Found\n');
    expect([answer.status, answer.headers.location]).to.deep.equal([302, 'https://auth.example.com/oauth2/start?rd=http://app.example.com%2Fsome%2Fpath%3Fq%3D1']);
    const vars = await ask(harness, 'vars.example.com', '/a b'.replace(' ', '%20'));
    expect(vars.headers.location).to.equal('https://vars.example.com/oauth2/start?rd=%2Fa%2520b');
    const encoded = await ask(harness, 'encoded.example.com', '/x?y=1');
    expect(encoded.headers.location).to.equal('https://auth.example.com/oauth2/start?rd=https%3A%2F%2Fencoded.example.com/x?y=1');
  });

  it('builds rd and X-Original-URL with https for a request over TLS', async () => {
    const redirected = await ask(harness, 'shop.example.com', '/p', { tls: true });
    expect([redirected.status, redirected.headers.location]).to.deep.equal([302, 'https://auth.example.com/oauth2/start?rd=https://shop.example.com%2Fp']);
    const from = auth.requests.length;
    expect((await ask(harness, 'shop.example.com', '/p', { tls: true, headers: COOKIE })).status).to.equal(200);
    expect(auth.since(from)[0]!.headers['x-original-url']).to.equal('https://shop.example.com/p');
  });

  it('answers 401 with the auth service challenge when there is no auth-signin', async () => {
    const answer = await ask(harness, 'api.example.com', '/');
    expect([answer.status, answer.headers['www-authenticate']]).to.deep.equal([401, 'Bearer realm="stand-in"']);
  });

  it('serves a request with a session, the auth answer headers replacing what the client sent, and the auth Set-Cookie on the answer', async () => {
    const answer = await ask(harness, 'app.example.com', '/inside', { headers: { ...COOKIE, 'x-auth-request-user': 'mallory' } });
    expect(answer.status, answer.body).to.equal(200);
    const backend = JSON.parse(answer.body) as { url: string; headers: Record<string, string> };
    expect(backend.url).to.equal('/inside');
    expect([backend.headers['x-auth-request-user'], backend.headers['x-auth-request-email']]).to.deep.equal(['alice', 'alice@example.com']);
    expect(answer.headers['set-cookie']).to.deep.equal([`${SESSION_COOKIE}=${VALID_SESSION}; Path=/; HttpOnly`]);
  });

  it('sends the auth service the request headers ingress-nginx sends, without the body, with the method of auth-method', async () => {
    const from = auth.requests.length;
    await seen(harness, 'api.example.com', '/orders?id=7', { method: 'PUT', body: 'secret body', headers: { ...COOKIE, 'x-forwarded-proto': 'forged' } });
    const [request] = auth.since(from);
    expect(request).to.include({ method: 'POST', url: '/oauth2/auth', bodyLength: 0 });
    expect(request!.headers).to.include({
      host: `127.0.0.1:${auth.port}`,
      cookie: COOKIE.cookie,
      'x-original-url': 'http://api.example.com/orders?id=7',
      'x-original-method': 'PUT',
      'x-original-uri': '/orders?id=7',
      'x-scheme': 'http',
      'x-auth-request-redirect': '/orders?id=7',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-for': '127.0.0.1',
    });
    expect(request!.headers).to.not.have.property('x-forwarded-proto');
  });

  it('answers 403 when the auth service does, and 500 for any other answer', async () => {
    expect((await ask(harness, 'forbidden.example.com', '/', { headers: COOKIE })).status).to.equal(403);
    expect((await ask(harness, 'broken.example.com', '/', { headers: COOKIE })).status).to.equal(500);
  });

  it('fails closed with 500 when the auth service is down, logging it, and the route without auth is unaffected', async () => {
    const started = Date.now();
    const answer = await ask(harness, 'dead.example.com', '/', { headers: COOKIE });
    // A refused connection is tried four times, one second apart (HAProxy's turn-around between tries).
    expect([answer.status, Date.now() - started < 3000 + 2000]).to.deep.equal([500, true]);
    expect((await ask(harness, 'plain.example.com', '/')).status).to.equal(200);
    const log = join(harness.workDir, 'haproxy.log');
    await eventually(
      () => readFile(log, 'utf8'),
      (text) => text.includes(`external auth http://127.0.0.1:${deadPort}/oauth2/auth failed`),
      'the failure in the HAProxy log',
    );
  });

  it('fails closed with 500 when the auth service does not answer, within four tries of the timeout', async () => {
    const from = auth.requests.length;
    const started = Date.now();
    const answer = await ask(harness, 'slow.example.com', '/', { headers: COOKIE });
    const took = Date.now() - started;
    expect(answer.status).to.equal(500);
    expect(auth.since(from).length, 'the slow service was asked').to.be.greaterThan(0);
    expect(took, `${took} ms`)
      .to.be.at.least(TRY_MS)
      .and.below(4 * TRY_MS + 2000);
  });
});
