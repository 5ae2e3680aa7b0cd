import { expect } from 'chai';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { ask, EchoBackend, routed, seen, type Answer, type Seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * Route settings end to end, one row of issue 18's table per host, all on
 * one controller and one real HAProxy: what a client gets back (status,
 * Location, headers) and what the backend sees (path, Host, headers), over
 * real HTTP and HTTPS.
 */

/** sha256crypt of "secret" (`openssl passwd -5 -salt salt secret`): a scheme the image's crypt(3) checks. */
const BOB_HASH = '$5$salt$kpa26zwgX83BPSR8d7w93OIXbFt/d3UOTZaAu5vsTM6';

function opaqueSecret(name: string, data: Record<string, string>): string {
  const encoded = Object.entries(data).map(([key, value]) => `${JSON.stringify(key)}: ${Buffer.from(value).toString('base64')}`);
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: Opaque\ndata: { ${encoded.join(', ')} }\n`;
}

const HAPROXY = 'haproxy.org/';
const NGINX = 'nginx.ingress.kubernetes.io/';

const rows: Record<string, string> = {
  'redirect.yaml': docs(
    routed('redirect', 'redirect.example.com', { [`${HAPROXY}ssl-redirect`]: 'true', [`${HAPROXY}ssl-redirect-code`]: '301' }),
    routed('nginx-redirect', 'nginx-redirect.example.com', { [`${NGINX}force-ssl-redirect`]: 'true' }),
  ),
  'hsts.yaml': docs(routed('hsts', 'shop.example.com', { [`${HAPROXY}hsts`]: 'true', [`${HAPROXY}hsts-max-age`]: '600' }, ['/'], 'shop-tls'), tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY)),
  'sources.yaml': docs(
    routed('outside', 'outside.example.com', { [`${HAPROXY}allow-list`]: '10.0.0.0/8, 192.168.0.0/16' }),
    routed('inside', 'inside.example.com', { [`${NGINX}whitelist-source-range`]: '10.0.0.0/8,127.0.0.1/32' }),
    routed('denied', 'denied.example.com', { [`${HAPROXY}deny-list`]: '127.0.0.0/8' }),
    // Behind a load balancer: the allow-list judges the address it appends to X-Client-IP (haproxytech's access-control test).
    routed('behind-lb', 'behind-lb.example.com', { [`${HAPROXY}src-ip-header`]: 'X-Client-IP', [`${HAPROXY}allow-list`]: '192.168.2.0/24' }),
  ),
  'limits.yaml': docs(
    routed('rate', 'rate.example.com', { [`${HAPROXY}rate-limit-requests`]: '3', [`${HAPROXY}rate-limit-period`]: '1m', [`${HAPROXY}rate-limit-status-code`]: '429' }),
    // A burst of 2 x 1 on top of the request that finds the bucket empty.
    routed('rps', 'rps.example.com', { [`${NGINX}limit-rpm`]: '2', [`${NGINX}limit-burst-multiplier`]: '1' }),
    routed('conns', 'conns.example.com', { [`${NGINX}limit-connections`]: '1' }),
    routed('body', 'body.example.com', { [`${NGINX}proxy-body-size`]: '1k' }),
  ),
  'paths.yaml': docs(
    routed('rewrite', 'rewrite.example.com', { [`${NGINX}rewrite-target`]: '/inner' }, ['/app']),
    routed('path-rewrite', 'path-rewrite.example.com', { [`${HAPROXY}path-rewrite`]: '^/api/(.*) /v2/\\1' }),
    // haproxytech's documented example of several lines, applied in turn.
    routed('path-rewrites', 'path-rewrites.example.com', { [`${HAPROXY}path-rewrite`]: '/foo/(.*) /\\1\n/bar/(.*) /baz/\\1\n' }),
    // ingress-nginx's classic: captures make the path a regular expression.
    routed('captures', 'captures.example.com', { [`${NGINX}rewrite-target`]: '/$2' }, ['/something(/|$)(.*)']),
    routed('regex', 'regex.example.com', { [`${NGINX}use-regex`]: 'true' }, ['/api/v[0-9]+/users']),
    routed('app-root', 'app-root.example.com', { [`${NGINX}app-root`]: '/app' }),
    routed('moved', 'moved.example.com', { [`${NGINX}permanent-redirect`]: 'https://new.example.com/landing' }),
    routed('away', 'away.example.com', { [`${NGINX}temporal-redirect`]: 'https://new.example.com/later', [`${NGINX}temporal-redirect-code`]: '307' }),
    routed('elsewhere', 'elsewhere.example.com', { [`${HAPROXY}request-redirect`]: 'new.example.com' }),
    routed('www', 'www-redirect.example.com', { [`${NGINX}permanent-redirect`]: 'https://www.example.com$request_uri' }),
  ),
  'auth.yaml': docs(
    // ingress-nginx's format: htpasswd lines under "auth"; carol's $apr1$ hash is one crypt(3) cannot check.
    opaqueSecret('htpasswd', { auth: `bob:${BOB_HASH}\ncarol:$apr1$abcdefgh$0123456789abcdefghijkl\n` }),
    routed('auth', 'auth.example.com', { [`${NGINX}auth-type`]: 'basic', [`${NGINX}auth-secret`]: 'htpasswd', [`${NGINX}auth-realm`]: 'Staff only' }),
    // haproxy.org's format: one key per user.
    opaqueSecret('per-user', { bob: BOB_HASH }),
    routed('auth-keys', 'auth-keys.example.com', { [`${HAPROXY}auth-type`]: 'basic-auth', [`${HAPROXY}auth-secret`]: 'per-user' }),
    // As many manifests write it: no type (the API server makes it Opaque), and no auth-realm.
    opaqueSecret('untyped', { auth: `bob:${BOB_HASH}\n` }).replace('type: Opaque\n', ''),
    routed('auth-untyped', 'auth-untyped.example.com', { [`${NGINX}auth-type`]: 'basic', [`${NGINX}auth-secret`]: 'untyped' }),
  ),
  'headers.yaml': docs(
    routed('vhost', 'vhost.example.com', { [`${NGINX}upstream-vhost`]: 'internal.example.com' }),
    routed('set-host', 'set-host.example.com', { [`${HAPROXY}set-host`]: 'other.internal' }),
    // haproxytech's documented example: a double-quoted value is the text between the quotes.
    routed('quoted', 'quoted.example.com', { [`${HAPROXY}response-set-header`]: 'Cache-Control "no-store,no-cache,private"\nStrict-Transport-Security "max-age=31536000"\n' }),
    routed('headers', 'headers.example.com', {
      [`${HAPROXY}request-set-header`]: "X-Tenant acme corp\nX-Quote it's #1",
      [`${HAPROXY}response-set-header`]: 'X-Frame-Options DENY',
    }),
    routed('cors-wild', 'cors-wild.example.com', {
      [`${HAPROXY}cors-enable`]: 'true',
      [`${HAPROXY}cors-allow-origin`]: 'https://*.example.org',
      [`${HAPROXY}cors-respond-to-options`]: 'true',
    }),
    // haproxytech's documented example: cors-allow-origin as a regular expression.
    routed('cors-regex', 'cors-regex.example.com', {
      [`${HAPROXY}cors-enable`]: 'true',
      [`${HAPROXY}cors-allow-origin`]: '^https://(.+\\.)?(example-1\\.com|example-2\\.com)(:\\d{1,5})?$',
      [`${HAPROXY}cors-respond-to-options`]: 'true',
    }),
    routed('cors', 'cors.example.com', { [`${NGINX}enable-cors`]: 'true', [`${NGINX}cors-allow-origin`]: 'https://app.example.com', [`${NGINX}cors-max-age`]: '600' }),
  ),
};

describe('route settings end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;
  let plain: Answer;
  /** The warnings of the render that served every row. */
  let warnings: readonly string[];

  before(async () => {
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    const mark = harness.mark();
    await harness.write('echo.yaml', docs(service('echo', [{ port: 80, targetPort: echo.port }]), slice('echo-1', 'echo', undefined, echo.port), routed('plain', 'plain.example.com', {})));
    for (const [file, text] of Object.entries(rows)) await harness.write(file, text);
    // Every row is served: the last of the files is.
    await eventually(
      () => ask(harness, 'cors.example.com', '/'),
      (answer) => answer.status === 200,
      'the rows to be served',
      15_000,
    );
    expect(harness.log.since(mark).filter((o) => o.type === 'resourceError')).to.deep.equal([]);
    const rendered = harness.log.since(mark).filter((o): o is Extract<Outcome, { type: 'rendered' }> => o.type === 'rendered');
    expect(rendered.at(-1)!.excluded).to.deep.equal([]);
    warnings = rendered.at(-1)!.warnings.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`);
    plain = await ask(harness, 'plain.example.com', '/');
    // Cases below mark outcomes: the rows' deployment must be reported first (it once came after such a mark).
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  it('serves a route without settings as before', () => {
    expect(plain.status).to.equal(200);
    expect((JSON.parse(plain.body) as Seen).url).to.equal('/');
  });

  it('redirects plain HTTP to HTTPS with the asked code (haproxy.org 301, nginx force-ssl-redirect 308), keeping host, path and query', async () => {
    const answer = await ask(harness, 'redirect.example.com', '/a/b?c=1');
    expect([answer.status, answer.headers.location]).to.deep.equal([301, 'https://redirect.example.com/a/b?c=1']);
    const nginx = await ask(harness, 'nginx-redirect.example.com', '/x');
    expect([nginx.status, nginx.headers.location]).to.deep.equal([308, 'https://nginx-redirect.example.com/x']);
  });

  it('sends Strict-Transport-Security on HTTPS answers only, and redirects a TLS Ingress written for haproxy.org to HTTPS by default (302)', async () => {
    const secure = await ask(harness, 'shop.example.com', '/', { tls: true });
    expect(secure.status).to.equal(200);
    expect(secure.headers['strict-transport-security']).to.equal('max-age=600; includeSubDomains');
    const clear = await ask(harness, 'shop.example.com', '/p');
    expect([clear.status, clear.headers.location, clear.headers['strict-transport-security']]).to.deep.equal([302, 'https://shop.example.com/p', undefined]);
  });

  it('answers 403 outside an allow-list or inside a deny-list, and serves a source on the allow-list', async () => {
    expect((await ask(harness, 'outside.example.com', '/')).status).to.equal(403);
    expect((await ask(harness, 'denied.example.com', '/')).status).to.equal(403);
    expect((await seen(harness, 'inside.example.com', '/in')).url).to.equal('/in');
  });

  it("judges an allow-list by the src-ip-header's address (its last occurrence), and a request without that header as outside it", async () => {
    expect((await seen(harness, 'behind-lb.example.com', '/', { headers: { 'x-client-ip': '192.168.2.7' } })).url).to.equal('/');
    expect((await ask(harness, 'behind-lb.example.com', '/', { headers: { 'x-client-ip': '10.0.0.7' } })).status).to.equal(403);
    expect((await ask(harness, 'behind-lb.example.com', '/')).status).to.equal(403);
    // A client's own forged value comes first; the load balancer appends the real one.
    expect((await ask(harness, 'behind-lb.example.com', '/', { headers: { 'x-client-ip': '192.168.2.7, 10.0.0.7' } })).status).to.equal(403);
  });

  it('answers the configured status above the rate and burst per source: haproxy.org 429, nginx limit-rpm 503', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await ask(harness, 'rate.example.com', '/')).status);
    expect(statuses).to.deep.equal([200, 200, 200, 429, 429]);
    const rpm: number[] = [];
    for (let i = 0; i < 4; i++) rpm.push((await ask(harness, 'rps.example.com', '/')).status);
    expect(rpm).to.deep.equal([200, 200, 200, 503]);
  });

  it('answers 503 to a source above its concurrent connections', async () => {
    const first = ask(harness, 'conns.example.com', '/hold/1');
    await echo.holding();
    expect((await ask(harness, 'conns.example.com', '/')).status).to.equal(503);
    echo.release();
    expect((await first).status).to.equal(200);
    // HAProxy lets go of the connection's count when it frees the session, which may come just after the client has read the answer.
    await eventually(
      async () => (await ask(harness, 'conns.example.com', '/')).status,
      (status) => status === 200,
      'the source to be under its connection limit again',
    );
  });

  it('answers 413 to a request body above the limit, and passes one within it', async () => {
    const big = await ask(harness, 'body.example.com', '/up', { method: 'POST', body: 'x'.repeat(1025) });
    expect(big.status).to.equal(413);
    expect((await seen(harness, 'body.example.com', '/up', { method: 'POST', body: 'x'.repeat(1024) })).method).to.equal('POST');
  });

  it('rewrites the path the backend sees: nginx rewrite-target replaces the whole path, with captures of a regex path, haproxy.org path-rewrite with its own', async () => {
    expect((await seen(harness, 'rewrite.example.com', '/app/deep?q=1')).url).to.equal('/inner?q=1');
    expect((await seen(harness, 'path-rewrite.example.com', '/api/users/7')).url).to.equal('/v2/users/7');
    expect((await seen(harness, 'path-rewrite.example.com', '/other')).url).to.equal('/other');
    expect((await seen(harness, 'path-rewrites.example.com', '/foo/bar/x')).url).to.equal('/baz/x');
    expect((await seen(harness, 'path-rewrites.example.com', '/bar/y')).url).to.equal('/baz/y');
    expect((await seen(harness, 'captures.example.com', '/something/foo/bar?x=1')).url).to.equal('/foo/bar?x=1');
    expect((await seen(harness, 'captures.example.com', '/SOMETHING')).url).to.equal('/');
  });

  it('reads the paths of a use-regex Ingress as case-insensitive regular expressions from the path start', async () => {
    expect((await seen(harness, 'regex.example.com', '/api/v12/users/7')).url).to.equal('/api/v12/users/7');
    expect((await seen(harness, 'regex.example.com', '/API/V1/USERS')).url).to.equal('/API/V1/USERS');
    expect((await ask(harness, 'regex.example.com', '/api/vx/users')).status).to.equal(404);
    expect((await ask(harness, 'regex.example.com', '/x/api/v1/users')).status).to.equal(404);
  });

  it('redirects "/" to the app root, and answers permanent, temporal and host redirects with their Location', async () => {
    const root = await ask(harness, 'app-root.example.com', '/');
    expect([root.status, root.headers.location]).to.deep.equal([302, '/app']);
    expect((await seen(harness, 'app-root.example.com', '/app/x')).url).to.equal('/app/x');
    const moved = await ask(harness, 'moved.example.com', '/old');
    expect([moved.status, moved.headers.location]).to.deep.equal([301, 'https://new.example.com/landing']);
    const away = await ask(harness, 'away.example.com', '/old');
    expect([away.status, away.headers.location]).to.deep.equal([307, 'https://new.example.com/later']);
    const elsewhere = await ask(harness, 'elsewhere.example.com', '/keep/path?x=1');
    expect([elsewhere.status, elsewhere.headers.location]).to.deep.equal([302, 'http://new.example.com/keep/path?x=1']);
    // nginx's $request_uri: the path and query kept, on another scheme and host.
    const www = await ask(harness, 'www-redirect.example.com', '/keep/path?x=1');
    expect([www.status, www.headers.location]).to.deep.equal([301, 'https://www.example.com/keep/path?x=1']);
  });

  it('answers 401 with the realm without valid credentials and serves with them, from Secrets of both formats, and names a user whose hash cannot work', async () => {
    const credentials = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
    const anonymous = await ask(harness, 'auth.example.com', '/');
    expect([anonymous.status, anonymous.headers['www-authenticate']]).to.deep.equal([401, 'Basic realm="Staff only"']);
    expect((await ask(harness, 'auth.example.com', '/', { headers: credentials('bob', 'wrong') })).status).to.equal(401);
    expect((await ask(harness, 'auth.example.com', '/', { headers: credentials('carol', 'anything') })).status).to.equal(401);
    expect((await seen(harness, 'auth.example.com', '/in', { headers: credentials('bob', 'secret') })).url).to.equal('/in');
    expect((await ask(harness, 'auth-keys.example.com', '/')).status).to.equal(401);
    expect((await seen(harness, 'auth-keys.example.com', '/', { headers: credentials('bob', 'secret') })).url).to.equal('/');
    // A Secret without type, an Ingress without auth-realm: ingress-nginx's default realm stands in for its empty one.
    const untyped = await ask(harness, 'auth-untyped.example.com', '/');
    expect([untyped.status, untyped.headers['www-authenticate']]).to.deep.equal([401, 'Basic realm="Authentication Required"']);
    expect((await seen(harness, 'auth-untyped.example.com', '/', { headers: credentials('bob', 'secret') })).url).to.equal('/');
    // The userlist is in the rendered configuration, its hashes are not in the debug view of it.
    const debug = await harness.health('/debug/rendered');
    expect(debug.body).to.include('user bob password').and.not.include('kpa26zwgX83BPSR8d7w93OIXbFt');
    expect(warnings.filter((warning) => warning.startsWith('Secret'))).to.deep.equal([
      'Secret default/htpasswd data[auth]: user "carol" cannot log in: Apache\'s MD5 ($apr1$, htpasswd\'s default) is not a crypt(3) scheme, so HAProxy never matches it: re-hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m yescrypt`',
    ]);
  });

  it('sends the backend the upstream Host and the request headers asked for, and the client the response headers', async () => {
    expect((await seen(harness, 'vhost.example.com', '/')).headers.host).to.equal('internal.example.com');
    expect((await seen(harness, 'set-host.example.com', '/')).headers.host).to.equal('other.internal');
    const answer = await ask(harness, 'headers.example.com', '/', { headers: { 'x-tenant': 'forged' } });
    const backend = JSON.parse(answer.body) as Seen;
    expect([backend.headers['x-tenant'], backend.headers['x-quote']]).to.deep.equal(['acme corp', "it's #1"]);
    expect(answer.headers['x-frame-options']).to.equal('DENY');
    const quoted = await ask(harness, 'quoted.example.com', '/');
    expect([quoted.status, quoted.headers['cache-control'], quoted.headers['strict-transport-security']]).to.deep.equal([200, 'no-store,no-cache,private', 'max-age=31536000']);
  });

  it('answers a CORS preflight from an allowed origin itself, and adds the allow headers to the answers of actual requests', async () => {
    const preflight = await ask(harness, 'cors.example.com', '/api', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers['access-control-allow-origin']).to.equal('https://app.example.com');
    expect(preflight.headers['access-control-allow-methods']).to.equal('GET, PUT, POST, DELETE, PATCH, OPTIONS');
    expect(preflight.headers['access-control-max-age']).to.equal('600');
    expect(preflight.headers['access-control-allow-credentials']).to.equal('true');
    const actual = await ask(harness, 'cors.example.com', '/api', { headers: { origin: 'https://app.example.com' } });
    expect([actual.status, actual.headers['access-control-allow-origin']]).to.deep.equal([200, 'https://app.example.com']);
    const stranger = await ask(harness, 'cors.example.com', '/api', { headers: { origin: 'https://evil.example.com' } });
    expect([stranger.status, stranger.headers['access-control-allow-origin']]).to.deep.equal([200, undefined]);
    // A "*." origin: any one label below the domain, with that scheme.
    const asking = (origin: string) => ask(harness, 'cors-wild.example.com', '/', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
    const sub = await asking('https://app.example.org');
    expect([sub.status, sub.headers['access-control-allow-origin']]).to.deep.equal([204, 'https://app.example.org']);
    for (const origin of ['https://example.org', 'http://app.example.org', 'https://app.example.org.evil.com']) {
      const refused = await asking(origin);
      expect([refused.status, refused.headers['access-control-allow-origin']], origin).to.deep.equal([200, undefined]);
    }
    // A regular expression (haproxy.org): the origins it matches, echoed.
    const matching = (origin: string) => ask(harness, 'cors-regex.example.com', '/', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
    for (const origin of ['https://example-1.com', 'https://app.example-2.com:8443']) {
      const allowed = await matching(origin);
      expect([allowed.status, allowed.headers['access-control-allow-origin']], origin).to.deep.equal([204, origin]);
    }
    const other = await matching('https://example-3.com');
    expect([other.status, other.headers['access-control-allow-origin']]).to.deep.equal([200, undefined]);
  });

  it('adds a route whose settings a served route already has, and one without settings, without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write(
      'more.yaml',
      docs(
        routed('more-redirect', 'more-redirect.example.com', { [`${HAPROXY}ssl-redirect`]: 'true', [`${HAPROXY}ssl-redirect-code`]: '301' }),
        routed('more-plain', 'more-plain.example.com', {}),
      ),
    );
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode, deployed.result.reloadReason).to.equal('runtime');
    const answer = await ask(harness, 'more-redirect.example.com', '/x');
    expect([answer.status, answer.headers.location]).to.deep.equal([301, 'https://more-redirect.example.com/x']);
    expect((await seen(harness, 'more-plain.example.com', '/')).url).to.equal('/');
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('serves a regular-expression path added later as written, backslashes included', async () => {
    const mark = harness.mark();
    await harness.write('later-regex.yaml', routed('later-regex', 'later-regex.example.com', { [`${NGINX}use-regex`]: 'true' }, ['/file\\.txt$']));
    await harness.next(mark, 'deployed');
    expect((await seen(harness, 'later-regex.example.com', '/file.txt')).url).to.equal('/file.txt');
    expect((await ask(harness, 'later-regex.example.com', '/fileXtxt')).status).to.equal(404);
  });

  it('leaves out only the Ingress with an invalid annotation, naming it and its value, while the others serve', async () => {
    const mark = harness.mark();
    await harness.write(
      'bad.yaml',
      docs(routed('bad', 'bad.example.com', { [`${HAPROXY}rate-limit-requests`]: 'lots' }), routed('good', 'good.example.com', { [`${NGINX}limit-rpm`]: '2' })),
    );
    const rendered = await harness.next(mark, 'rendered');
    expect(rendered.excluded.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`)).to.deep.equal([
      `Ingress default/bad metadata.annotations['haproxy.org/rate-limit-requests']: "lots": not a whole number: use digits only, from 1 to 1000000000`,
    ]);
    await harness.next(mark, 'deployed');
    expect((await ask(harness, 'bad.example.com', '/')).status).to.equal(404);
    expect((await seen(harness, 'good.example.com', '/')).url).to.equal('/');
    expect((await seen(harness, 'inside.example.com', '/')).url).to.equal('/');
  });

  it('leaves out, fail closed, each Ingress whose authentication cannot be served, naming it, where it would otherwise answer anyone', async () => {
    const mark = harness.mark();
    await harness.write(
      'unservable-auth.yaml',
      docs(
        routed('oauth', 'oauth.example.com', {
          [`${NGINX}auth-url`]: 'https://auth.example.com/oauth2/auth',
          [`${NGINX}auth-signin`]: 'https://auth.example.com/oauth2/start?rd=$escaped_request_uri',
          // External authentication is served (spec/e2e/external-auth.spec.ts), but not with nginx configuration for its request.
          [`${NGINX}auth-snippet`]: 'proxy_set_header X-Tenant acme;',
        }),
        // Client certificates are served (client-certificates.spec.ts), but for a match of the subject.
        routed('mtls', 'mtls.example.com', { [`${NGINX}auth-tls-secret`]: 'default/ca', [`${NGINX}auth-tls-verify-client`]: 'on', [`${NGINX}auth-tls-match-cn`]: 'CN=client' }),
        routed('snippet', 'snippet.example.com', { [`${NGINX}configuration-snippet`]: 'allow 10.0.0.0/8;\ndeny all;' }),
        routed('open', 'open.example.com', { [`${NGINX}configuration-snippet`]: 'more_set_headers "X-Frame-Options: DENY";' }),
      ),
    );
    const rendered = await harness.next(mark, 'rendered');
    const named = rendered.excluded.map((problem) => `${problem.object} ${problem.field}`).filter((line) => !line.startsWith('Ingress default/bad '));
    expect(named).to.deep.equal([
      `Ingress default/mtls metadata.annotations['nginx.ingress.kubernetes.io/auth-tls-match-cn']`,
      `Ingress default/oauth metadata.annotations['nginx.ingress.kubernetes.io/auth-snippet']`,
      `Ingress default/snippet metadata.annotations['nginx.ingress.kubernetes.io/configuration-snippet']`,
    ]);
    expect(rendered.excluded.find((problem) => problem.field.includes('auth-snippet'))!.message).to.include('auth-snippet is nginx configuration, which HAProxy cannot read');
    await harness.next(mark, 'deployed');
    for (const host of ['oauth', 'mtls', 'snippet']) expect((await ask(harness, `${host}.example.com`, '/')).status, host).to.equal(404);
    // A snippet without access rules is ignored, as before: that Ingress is served.
    expect((await seen(harness, 'open.example.com', '/')).url).to.equal('/');
  });
});
