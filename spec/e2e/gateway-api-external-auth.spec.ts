import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { AuthService, SESSION_COOKIE, VALID_SESSION } from '../support/auth-service.ts';
import { ask, EchoBackend, seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';

/**
 * Gateway API's HTTPRoute ExternalAuth filter (protocol HTTP) end to end: a
 * real HAProxy asks an auth Service, reached through its own backend (an
 * EndpointSlice on loopback), before a request reaches a real backend. What
 * the client gets (the auth service's own denial, the backend's answer),
 * what the auth service and the backend see, what a dead or silent auth
 * service does (5xx, within the timeout), and a GRPC filter refused by name.
 */

/** Each try's timeout for these specs (the shipped 2 s would make the silent case take 8 s). */
const TRY_MS = 250;
const COOKIE = { cookie: `${SESSION_COOKIE}=${VALID_SESSION}; theme=dark` };

/** An HTTPRoute for `host` to the echo Service, its one rule asking `auth` first. */
function authRoute(name: string, host: string, auth: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ ${host} ]
  rules:
    - filters: [ { type: ExternalAuth, externalAuth: ${auth} } ]
      backendRefs: [ { name: echo, port: 80 } ]
`;
}

describe('Gateway API ExternalAuth filter end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;
  let auth: AuthService;
  let rendered: Extract<Outcome, { type: 'rendered' }>;

  before(async () => {
    echo = await EchoBackend.start();
    auth = await AuthService.start({ success: 200 });
    const deadPort = await reservePort();
    harness = await LocalHarness.start({ manifests: {}, backends: 0, config: (shipped) => shipped.replace(/^( {2}externalAuthTimeout:) \d+$/m, `$1 ${TRY_MS}`) }, []);
    const mark = harness.mark();
    await harness.write(
      'auth.yaml',
      docs(
        gateway('{ name: http, port: 80, protocol: HTTP }'),
        service('echo', [{ port: 80, targetPort: echo.port }]),
        slice('echo-1', 'echo', undefined, echo.port),
        service('auth', [{ port: 80, targetPort: auth.port }]),
        slice('auth-1', 'auth', undefined, auth.port),
        service('auth-dead', [{ port: 80, targetPort: deadPort }]),
        slice('auth-dead-1', 'auth-dead', undefined, deadPort),
        // The oauth2-proxy pattern: the session cookie sent, the user's headers copied to the backend.
        authRoute(
          'app',
          'app.example.com',
          '{ protocol: HTTP, backendRef: { name: auth, port: 80 }, http: { path: /oauth2/auth, allowedHeaders: [ Cookie ], allowedResponseHeaders: [ X-Auth-Request-User, X-Auth-Request-Email ] } }',
        ),
        authRoute('all', 'all.example.com', '{ protocol: HTTP, backendRef: { name: auth, port: 80 }, http: { allowedHeaders: [ cookie ] } }'),
        authRoute('dead', 'dead.example.com', '{ protocol: HTTP, backendRef: { name: auth-dead, port: 80 }, http: { allowedHeaders: [ cookie ] } }'),
        authRoute('silent', 'silent.example.com', '{ protocol: HTTP, backendRef: { name: auth, port: 80 }, http: { path: /slow, allowedHeaders: [ cookie ] } }'),
        authRoute('other', 'other.example.com', '{ protocol: HTTP, backendRef: { name: auth, namespace: elsewhere, port: 80 } }'),
        authRoute('grpc', 'grpc.example.com', '{ protocol: GRPC, backendRef: { name: auth, port: 80 } }'),
      ),
    );
    await eventually(
      () => ask(harness, 'app.example.com', '/'),
      (answer) => answer.status === 401,
      'the auth routes to be served',
      15_000,
    );
    await harness.settled();
    rendered = harness.log
      .since(mark)
      .filter((o): o is Extract<Outcome, { type: 'rendered' }> => o.type === 'rendered')
      .at(-1)!;
  });

  after(async () => {
    await harness?.stop();
    await auth?.stop();
    await echo?.stop();
  });

  it('returns the auth service answer to a request it denies, the backend not asked', async () => {
    const answer = await ask(harness, 'app.example.com', '/some/path?q=1');
    expect([answer.status, answer.headers['www-authenticate']]).to.deep.equal([401, 'Bearer realm="stand-in"']);
    expect(answer.body).to.equal('');
  });

  it('serves a request the auth service answers 200, its allowed headers replacing what the client sent', async () => {
    const backend = await seen(harness, 'app.example.com', '/inside?x=1', { headers: { ...COOKIE, 'x-auth-request-user': 'mallory', 'x-auth-request-email': 'm@example.com' } });
    expect(backend.url).to.equal('/inside?x=1');
    expect([backend.headers['x-auth-request-user'], backend.headers['x-auth-request-email']]).to.deep.equal(['alice', 'alice@example.com']);
    // Not an allowed response header: the auth service's Set-Cookie stays between it and HAProxy.
    expect(backend.headers).to.not.have.property('set-cookie');
  });

  it('copies every header of the auth answer but Host and its own framing when no allowedResponseHeaders are given', async () => {
    const backend = await seen(harness, 'all.example.com', '/', { headers: COOKIE });
    expect(backend.headers).to.include({ 'x-auth-request-user': 'alice', host: 'all.example.com' });
    expect(backend.headers['set-cookie']).to.deep.equal([`${SESSION_COOKIE}=${VALID_SESSION}; Path=/; HttpOnly`]);
  });

  it('sends the auth service the method, the path after http.path, Host, Authorization and the allowed headers, without a body', async () => {
    const from = auth.requests.length;
    await seen(harness, 'app.example.com', '/orders?id=7', { method: 'PUT', body: 'secret body', headers: { ...COOKIE, authorization: 'Bearer t', 'x-private': 'no' } });
    const [request] = auth.since(from);
    expect(request).to.include({ method: 'PUT', url: '/oauth2/auth/orders?id=7', bodyLength: 0 });
    expect(request!.headers).to.include({ host: 'app.example.com', cookie: COOKIE.cookie, authorization: 'Bearer t', 'x-forwarded-method': 'PUT' });
    // HAProxy 2.6's httpclient sends the Content-Length 0 it is given; 3.2's drops it for an empty body, which
    // without Transfer-Encoding is a body of length 0 all the same (RFC 9112 section 6.3).
    expect(request!.headers['content-length'] ?? '0').to.equal('0');
    expect(request!.headers).to.not.have.property('transfer-encoding');
    expect(request!.headers).to.not.have.property('x-private');
    expect(request!.headers).to.not.have.property('x-haproxy-template-ic-auth-backend');
  });

  it('fails closed with a 5xx when the auth Service has no live endpoint, within the bound', async () => {
    const started = Date.now();
    const answer = await ask(harness, 'dead.example.com', '/', { headers: COOKIE });
    const took = Date.now() - started;
    expect(answer.status).to.be.within(500, 599);
    expect(took, `${took} ms`).to.be.below(4 * TRY_MS + 3000 + 2000);
  });

  it('fails closed with a 5xx when the auth service does not answer, within four tries of the timeout, logging it', async () => {
    const from = auth.requests.length;
    const started = Date.now();
    const answer = await ask(harness, 'silent.example.com', '/', { headers: COOKIE });
    const took = Date.now() - started;
    // HAProxy's own 504 from the auth Service's backend, or 500 from the action when the httpclient gave up first.
    expect(answer.status).to.be.oneOf([500, 504]);
    expect(auth.since(from).length, 'the silent service was asked').to.be.greaterThan(0);
    expect(took, `${took} ms`)
      .to.be.at.least(TRY_MS)
      .and.below(4 * TRY_MS + 2000);
    await eventually(
      () => readFile(join(harness.workDir, 'haproxy.log'), 'utf8'),
      (text) => /external auth default_auth_80 failed: status (0|504) after \d+ ms/.test(text),
      'the failure in the HAProxy log',
    );
  });

  it('answers 500 for a route whose auth Service is in another namespace without a ReferenceGrant', async () => {
    const answer = await ask(harness, 'other.example.com', '/', { headers: COOKIE });
    expect(answer.status).to.equal(500);
  });

  it('refuses a GRPC filter by name, leaving its route out', async () => {
    expect(rendered.excluded.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`)).to.deep.equal([
      'HTTPRoute default/grpc spec.rules[0].filters[0].externalAuth.protocol: GRPC (the ext_authz protocol) is not supported: only HTTP auth services are',
    ]);
    expect((await ask(harness, 'grpc.example.com', '/')).status).to.equal(404);
  });
});
