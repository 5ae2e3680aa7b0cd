import { expect } from 'chai';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';

const H = 'haproxy.org/';
const N = 'nginx.ingress.kubernetes.io/';

describe('readAnnotationSettings', () => {
  it('reads nothing from an object without annotations of a known family, whatever else it carries', () => {
    expect(readAnnotationSettings(undefined)).to.deep.equal({ backend: {}, route: {}, outcomes: [] });
    expect(readAnnotationSettings({ 'example.com/anything': 'x', 'haproxy.org': 'no slash' }, { tls: true })).to.deep.equal({ backend: {}, route: {}, outcomes: [] });
  });

  it('gives one outcome per annotation of a known family, in name order', () => {
    const read = readAnnotationSettings({
      [`${N}proxy-read-timeout`]: '30',
      [`${H}timeout-server`]: 'soon',
      [`${N}configuration-snippet`]: 'more_set_headers "X: y";',
      [`${H}load-balance`]: 'static-rr',
      'example.com/other': 'x',
    });
    expect(read.outcomes).to.deep.equal([
      { annotation: `${H}load-balance`, value: 'static-rr', status: 'ignored', reason: '"static-rr" is not supported: the backend balances roundrobin' },
      {
        annotation: `${H}timeout-server`,
        value: 'soon',
        status: 'invalid',
        reason: 'not a duration: use a whole number with a unit ms, s, m, h or d (no unit means milliseconds), e.g. "30s"',
      },
      {
        annotation: `${N}configuration-snippet`,
        value: 'more_set_headers "X: y";',
        status: 'ignored',
        reason: 'snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read)',
      },
      {
        annotation: `${N}proxy-read-timeout`,
        value: '30',
        status: 'ignored',
        reason: 'haproxy.org/timeout-server sets the same setting (backend.timeouts.server) on this object and takes precedence',
      },
    ]);
    expect(read.backend).to.deep.equal({});
  });

  it('lets haproxy.org/ win a setting both families set, and reads each family for the settings only it sets', () => {
    const read = readAnnotationSettings({ [`${H}timeout-server`]: '10s', [`${N}proxy-read-timeout`]: '30', [`${N}proxy-connect-timeout`]: '3' });
    expect(read.backend).to.deep.equal({ timeouts: { server: 10_000, connect: 3000 } });
    expect(read.outcomes.map((outcome) => outcome.status)).to.deep.equal(['honoured', 'honoured', 'ignored']);
  });

  it("reads haproxy.com/ as haproxytech's other spelling of haproxy.org/, which wins when both are set", () => {
    const read = readAnnotationSettings({ 'haproxy.com/timeout-server': '7s', 'haproxy.com/timeout-connect': '2s', [`${H}timeout-connect`]: '1s' });
    expect(read.backend).to.deep.equal({ timeouts: { server: 7000, connect: 1000 } });
    expect(read.outcomes).to.deep.equal([
      {
        annotation: 'haproxy.com/timeout-connect',
        value: '2s',
        status: 'ignored',
        reason: 'haproxy.org/timeout-connect sets the same setting (backend.timeouts.connect) on this object and takes precedence',
      },
      { annotation: 'haproxy.com/timeout-server', value: '7s', status: 'honoured', setting: 'backend.timeouts.server' },
      { annotation: `${H}timeout-connect`, value: '1s', status: 'honoured', setting: 'backend.timeouts.connect' },
    ]);
  });

  it('names the setting an annotation honoured', () => {
    const read = readAnnotationSettings({ [`${N}whitelist-source-range`]: '10.0.0.0/8, 192.168.1.1' });
    expect(read.route).to.deep.equal({ allow: ['10.0.0.0/8', '192.168.1.1'] });
    expect(read.outcomes).to.deep.equal([{ annotation: `${N}whitelist-source-range`, value: '10.0.0.0/8, 192.168.1.1', status: 'honoured', setting: 'route.allow' }]);
  });

  describe('HTTPS redirects', () => {
    it("redirects a TLS Ingress written for either controller by that controller's default: haproxy.org 302, ingress-nginx 308", () => {
      expect(readAnnotationSettings({ [`${H}timeout-server`]: '5s' }, { tls: true }).route).to.deep.equal({ sslRedirect: { code: 302 } });
      // ingress-nginx's HSTS default comes with its redirect.
      expect(readAnnotationSettings({ [`${N}proxy-read-timeout`]: '5' }, { tls: true }).route).to.deep.equal({
        sslRedirect: { code: 308 },
        hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false },
      });
      // Both families: haproxy.org's default wins, as its explicit settings do; HSTS, which haproxytech has no default for, is ingress-nginx's.
      expect(readAnnotationSettings({ [`${H}timeout-server`]: '5s', [`${N}proxy-read-timeout`]: '5' }, { tls: true }).route).to.deep.equal({
        sslRedirect: { code: 302 },
        hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false },
      });
    });

    it('leaves an Ingress written for neither controller, and one without TLS, unredirected', () => {
      expect(readAnnotationSettings({ 'example.com/x': 'y' }, { tls: true }).route).to.deep.equal({});
      expect(readAnnotationSettings({ [`${H}timeout-server`]: '5s' }, { tls: false }).route).to.deep.equal({});
      expect(readAnnotationSettings({ [`${N}proxy-read-timeout`]: '5' }).route).to.deep.equal({});
    });

    it('reads an explicit "false" of either family over the other family\'s default', () => {
      expect(readAnnotationSettings({ [`${H}timeout-server`]: '5s', [`${N}ssl-redirect`]: 'false', [`${N}hsts`]: 'false' }, { tls: true }).route).to.deep.equal({});
      expect(readAnnotationSettings({ [`${H}ssl-redirect`]: 'false', [`${H}hsts`]: 'false', [`${N}proxy-read-timeout`]: '5' }, { tls: true }).route).to.deep.equal({});
    });

    it('haproxy.org: ssl-redirect with its code, which alone means nothing without a redirect', () => {
      expect(readAnnotationSettings({ [`${H}ssl-redirect`]: 'true', [`${H}ssl-redirect-code`]: '301' }).route).to.deep.equal({ sslRedirect: { code: 301 } });
      expect(readAnnotationSettings({ [`${H}ssl-redirect-code`]: '307' }, { tls: true }).route).to.deep.equal({ sslRedirect: { code: 307 } });
      const read = readAnnotationSettings({ [`${H}ssl-redirect-code`]: '301' });
      expect(read.route).to.deep.equal({});
      expect(read.outcomes).to.deep.equal([
        { annotation: `${H}ssl-redirect-code`, value: '301', status: 'ignored', reason: 'no redirect: ssl-redirect is not "true" (and the Ingress has no TLS section)' },
      ]);
    });

    it('nginx: ssl-redirect acts only on TLS Ingresses, force-ssl-redirect on any', () => {
      expect(readAnnotationSettings({ [`${N}force-ssl-redirect`]: 'true' }).route).to.deep.equal({ sslRedirect: { code: 308 } });
      expect(readAnnotationSettings({ [`${N}ssl-redirect`]: 'true' }, { tls: true }).route).to.deep.equal({
        sslRedirect: { code: 308 },
        hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false },
      });
      expect(readAnnotationSettings({ [`${N}force-ssl-redirect`]: 'false' }, { tls: true }).route).to.deep.equal({
        sslRedirect: { code: 308 },
        hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false },
      });
      const read = readAnnotationSettings({ [`${N}ssl-redirect`]: 'true' });
      expect(read.route).to.deep.equal({});
      expect(read.outcomes).to.deep.equal([
        {
          annotation: `${N}ssl-redirect`,
          value: 'true',
          status: 'ignored',
          reason: 'the Ingress has no TLS section, and ingress-nginx redirects only those: use force-ssl-redirect to redirect without',
        },
      ]);
    });
  });

  describe('backend protocol', () => {
    it('haproxy.org: server-ca implies TLS and verification; server-proto h2 is h2c in clear text and h2 over TLS', () => {
      expect(readAnnotationSettings({ [`${H}server-proto`]: 'h2' }).backend).to.deep.equal({ protocol: { version: 'h2c', tls: false } });
      expect(readAnnotationSettings({ [`${H}server-ssl`]: 'true', [`${H}server-proto`]: 'h2' }).backend).to.deep.equal({ protocol: { version: 'h2', tls: true } });
      expect(readAnnotationSettings({ [`${H}server-ca`]: 'ca' }, { namespace: 'shop' }).backend).to.deep.equal({
        protocol: { version: 'h1', tls: true, verifyCa: { namespace: 'shop', name: 'ca' } },
      });
    });

    it('nginx: proxy-ssl-* only mean something for HTTPS and GRPCS backends, and verification needs the CA Secret', () => {
      const clear = readAnnotationSettings({ [`${N}backend-protocol`]: 'GRPC', [`${N}proxy-ssl-verify`]: 'on' });
      expect(clear.backend).to.deep.equal({ protocol: { version: 'h2c', tls: false } });
      expect(clear.outcomes[1]).to.deep.equal({ annotation: `${N}proxy-ssl-verify`, value: 'on', status: 'ignored', reason: 'the backend protocol is not HTTPS or GRPCS' });
      const verify = readAnnotationSettings({ [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-verify`]: 'on' });
      expect(verify.outcomes[1]).to.deep.equal({
        annotation: `${N}proxy-ssl-verify`,
        value: 'on',
        status: 'invalid',
        reason: '"on" needs proxy-ssl-secret naming a Secret with the CA (ca.crt)',
      });
      const sni = readAnnotationSettings({
        [`${N}backend-protocol`]: 'https',
        [`${N}proxy-ssl-secret`]: 'other/ca',
        [`${N}proxy-ssl-verify`]: 'on',
        [`${N}proxy-ssl-name`]: 'api.internal',
        [`${N}proxy-ssl-server-name`]: 'on',
      });
      expect(sni.backend).to.deep.equal({ protocol: { version: 'h1', tls: true, verifyCa: { namespace: 'other', name: 'ca' }, sni: 'api.internal' } });
      expect(sni.outcomes.every((outcome) => outcome.status === 'honoured')).to.equal(true);
    });

    it('nginx: FCGI and AUTO_HTTP backends are refused, not served as HTTP', () => {
      expect(readAnnotationSettings({ [`${N}backend-protocol`]: 'FCGI' }).outcomes[0]).to.deep.include({
        status: 'invalid',
        reason: 'FCGI backends are not supported: use HTTP, HTTPS, GRPC or GRPCS',
      });
    });
  });

  describe('balance', () => {
    it('nginx: upstream-hash-by takes precedence over load-balance', () => {
      const read = readAnnotationSettings({ [`${N}upstream-hash-by`]: '$remote_addr', [`${N}load-balance`]: 'ewma' });
      expect(read.backend).to.deep.equal({ balance: { algorithm: 'source' } });
      expect(read.outcomes[0]).to.deep.equal({ annotation: `${N}load-balance`, value: 'ewma', status: 'ignored', reason: 'upstream-hash-by takes precedence' });
    });
  });

  describe('allow and deny lists', () => {
    it('reads the newer spelling of one family over the older, ignoring the older', () => {
      const read = readAnnotationSettings({ [`${H}allow-list`]: '10.0.0.0/8', [`${H}whitelist`]: '0.0.0.0/0' });
      expect(read.route).to.deep.equal({ allow: ['10.0.0.0/8'] });
      expect(read.outcomes[1]).to.deep.equal({ annotation: `${H}whitelist`, value: '0.0.0.0/0', status: 'ignored', reason: 'allow-list sets the same setting and is read instead' });
    });

    it('refuses a list with a bad entry rather than dropping it', () => {
      const read = readAnnotationSettings({ [`${N}denylist-source-range`]: '10.0.0.0/8,10.1.0.0/33' });
      expect(read.route).to.deep.equal({});
      expect(read.outcomes[0]).to.deep.include({ status: 'invalid', reason: 'not a CIDR: "10.1.0.0/33" (the prefix length must be 0 to 32)' });
    });
  });

  describe('annotations that mean something only with another', () => {
    const cases: [string, Record<string, string>, string][] = [
      ['an HSTS detail without hsts', { [`${H}hsts-max-age`]: '60' }, 'hsts is not "true"'],
      ['a CORS detail without cors-enable', { [`${H}cors-allow-origin`]: '*' }, 'cors-enable is not "true"'],
      ['a burst multiplier without a rate', { [`${N}limit-burst-multiplier`]: '3' }, 'limit-rps or limit-rpm is not set'],
      ['a cookie lifetime without affinity', { [`${N}session-cookie-max-age`]: '3600' }, 'affinity is not "cookie"'],
      ['cors-respond-to-options without cors-enable', { [`${H}cors-respond-to-options`]: 'true' }, 'cors-enable is not "true"'],
      ['a CORS detail without enable-cors', { [`${N}cors-max-age`]: '60' }, 'enable-cors is not "true"'],
      ['a rate period without a rate', { [`${H}rate-limit-period`]: '1m' }, 'rate-limit-requests is not set'],
      ['an auth Secret without auth-type', { [`${N}auth-secret`]: 'web/users' }, 'auth-type is not set'],
      ['a cookie name without affinity', { [`${N}session-cookie-name`]: 'srv' }, 'affinity is not "cookie"'],
      ['a redirect code without a redirect', { [`${N}permanent-redirect-code`]: '308' }, 'no temporal-redirect or permanent-redirect is set'],
      ['a redirect code without request-redirect', { [`${H}request-redirect-code`]: '301' }, 'request-redirect is not set'],
    ];
    for (const [what, annotations, reason] of cases) {
      it(`ignores ${what}, saying why`, () => {
        const read = readAnnotationSettings(annotations);
        expect(read.outcomes).to.have.length(1);
        expect(read.outcomes[0]).to.deep.include({ status: 'ignored', reason });
        expect({ backend: read.backend, route: read.route }).to.deep.equal({ backend: {}, route: {} });
      });
    }
  });

  describe('refusals that keep a route from being served open or wrong', () => {
    const cases: [string, Record<string, string>, string, string][] = [
      ['basic auth without a Secret', { [`${H}auth-type`]: 'basic-auth' }, `${H}auth-type`, 'needs auth-secret naming the Secret with the users'],
      ['digest auth', { [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, `${N}auth-type`, 'digest authentication is not supported: use "basic"'],
      ['a health check with a method', { [`${H}check-http`]: 'HEAD /health' }, `${H}check-http`, 'a method (and version) is not supported: give the path alone, checked with GET'],
      ['a redirect with an nginx variable other than a trailing $request_uri', { [`${N}temporal-redirect`]: 'https://example.com/$uri' }, `${N}temporal-redirect`, 'not a URL: contains "$"'],
      ['a rewrite target that is not a path', { [`${N}rewrite-target`]: '/$1 x' }, `${N}rewrite-target`, 'not a rewrite target: contains " "'],
      [
        'a header value with a log-format expression',
        { [`${H}request-set-header`]: 'X-Client %[src]' },
        `${H}request-set-header`,
        'the value of header X-Client contains "%", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)',
      ],
    ];
    for (const [what, annotations, annotation, reason] of cases) {
      it(`refuses ${what}`, () => {
        const read = readAnnotationSettings(annotations);
        expect(read.outcomes.find((outcome) => outcome.annotation === annotation)).to.deep.include({ status: 'invalid', reason });
      });
    }
  });

  describe('left out, fail closed: what cannot be served here and whose Ingress served without it would be open or wrong', () => {
    const OPEN = 'served without it the route would be open to anyone, so this Ingress is left out';
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      [
        'a canary Ingress',
        { [`${N}canary`]: 'true', [`${N}canary-weight`]: '10' },
        { [`${N}canary`]: 'canary Ingresses are not supported: this Ingress is left out so that its main Ingress keeps its routes' },
      ],
      [
        'external authentication with what it cannot serve: an auth-snippet, headers from a ConfigMap, a method the httpclient cannot send',
        {
          [`${N}auth-url`]: 'https://auth.example.com/oauth2/auth',
          [`${N}auth-snippet`]: 'proxy_set_header X-Tenant acme;',
          [`${N}auth-proxy-set-headers`]: 'auth/headers',
          [`${N}auth-method`]: 'PATCH',
        },
        {
          [`${N}auth-snippet`]: 'auth-snippet is nginx configuration, which HAProxy cannot read: served without it the auth service would judge another request, so this Ingress is left out',
          [`${N}auth-proxy-set-headers`]: 'headers from a ConfigMap are not read: served without them the auth service would judge another request, so this Ingress is left out',
          [`${N}auth-method`]:
            'cannot be sent: HAProxy sends auth requests with GET, HEAD, POST, PUT or DELETE: served without it the route would be checked with another method, so this Ingress is left out',
        },
      ],
      [
        "client certificate authentication matching the certificate's subject (auth-tls-match-cn): the rest of auth-tls-* is served",
        { [`${N}auth-tls-secret`]: 'default/ca', [`${N}auth-tls-verify-client`]: 'on', [`${N}auth-tls-match-cn`]: 'CN=client' },
        { [`${N}auth-tls-match-cn`]: `matching the client certificate's subject is not supported: ${OPEN}` },
      ],
      [
        'an access rule in an nginx snippet',
        { [`${N}configuration-snippet`]: 'allow 10.0.0.0/8;\ndeny all;', [`${N}server-snippet`]: 'location /admin { auth_basic "Admin"; }' },
        {
          [`${N}configuration-snippet`]: `holds an access rule (allow), and snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read): ${OPEN}`,
          [`${N}server-snippet`]: `holds an access rule (auth_basic), and snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read): ${OPEN}`,
        },
      ],
      [
        'a server-snippet answering 403 to some paths',
        { [`${N}server-snippet`]: 'location ~ ^/api/solr/ {return 403;}' },
        {
          [`${N}server-snippet`]: `holds an access rule (return 403), and snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read): ${OPEN}`,
        },
      ],
      [
        'an access rule in a haproxy.org snippet',
        { [`${H}backend-config-snippet`]: 'http-request deny if !{ src 10.0.0.0/8 }' },
        {
          [`${H}backend-config-snippet`]: `holds an access rule (http-request deny), and configuration snippets are not supported: raw HAProxy configuration from an object could add any directive: ${OPEN}`,
        },
      ],
      [
        'TLS passthrough to a backend that would be sent plain HTTP',
        { [`${N}ssl-passthrough`]: 'true' },
        {
          [`${N}ssl-passthrough`]:
            "TLS passthrough is not supported: HAProxy terminates TLS, and without backend-protocol: HTTPS the backend, which expects the client's TLS, would be sent plain HTTP, so this Ingress is left out",
        },
      ],
    ];
    cases.push([
      "an access rule under one spelling beside a harmless snippet under the other (each family's refusal is judged)",
      { [`${H}backend-config-snippet`]: 'option forwardfor', 'haproxy.com/backend-config-snippet': 'http-request deny' },
      {
        'haproxy.com/backend-config-snippet': `holds an access rule (http-request deny), and configuration snippets are not supported: raw HAProxy configuration from an object could add any directive: ${OPEN}`,
      },
    ]);
    for (const [what, annotations, leftOut] of cases) {
      it(`leaves out ${what}, naming each annotation`, () => {
        const read = readAnnotationSettings(annotations);
        expect(Object.fromEntries(read.outcomes.filter((outcome) => outcome.status === 'left out').map((outcome) => [outcome.annotation, outcome.reason]))).to.deep.equal(leftOut);
      });
    }

    const served: [string, Record<string, string>, string, string][] = [
      ['a snippet without access rules', { [`${N}configuration-snippet`]: 'more_set_headers "X-Frame-Options: DENY";' }, `${N}configuration-snippet`, 'snippets are not supported'],
      ['auth-signin without auth-url', { [`${N}auth-signin`]: 'https://auth.example.com/start' }, `${N}auth-signin`, 'auth-url is not set, so ingress-nginx does not use it either'],
      [
        'auth-tls-verify-client "off"',
        { [`${N}auth-tls-secret`]: 'default/ca', [`${N}auth-tls-verify-client`]: 'off' },
        `${N}auth-tls-secret`,
        'auth-tls-verify-client is "off": no client certificate is asked for',
      ],
      [
        'src-ip-header without a source list',
        { [`${H}src-ip-header`]: 'X-Real-IP' },
        `${H}src-ip-header`,
        "no allow-list or deny-list on this Ingress reads the source: rate limits and logs keep the connection's address",
      ],
      [
        "ssl-passthrough with backend-protocol HTTPS (Argo CD's documented setup): terminated and re-encrypted, as ingress-nginx serves it by default",
        { [`${N}ssl-passthrough`]: 'true', [`${N}backend-protocol`]: 'HTTPS' },
        `${N}ssl-passthrough`,
        "TLS passthrough is not supported: HAProxy terminates TLS with the Ingress's certificate and re-encrypts to the backend (backend-protocol: HTTPS), as ingress-nginx does unless started with --enable-ssl-passthrough",
      ],
      [
        'haproxy.org ssl-passthrough with server-ssl',
        { [`${H}ssl-passthrough`]: 'true', [`${H}server-ssl`]: 'true' },
        `${H}ssl-passthrough`,
        'TLS passthrough is not supported: HAProxy terminates TLS with the Ingress\'s certificate and re-encrypts to the backend (server-ssl: "true"), as ingress-nginx does unless started with --enable-ssl-passthrough',
      ],
    ];
    for (const [what, annotations, annotation, reason] of served) {
      it(`serves ${what}, ignoring it with why`, () => {
        const read = readAnnotationSettings(annotations);
        expect(read.outcomes.filter((outcome) => outcome.status === 'left out' || outcome.status === 'invalid')).to.deep.equal([]);
        expect(read.outcomes.find((outcome) => outcome.annotation === annotation)).to.deep.include({ status: 'ignored' });
        expect((read.outcomes.find((outcome) => outcome.annotation === annotation) as { reason: string }).reason).to.include(reason);
      });
    }
  });

  it('haproxy.org: src-ip-header makes the allow- and deny-lists judge the address in that header', () => {
    const read = readAnnotationSettings({ [`${H}src-ip-header`]: ' X-Client-IP', [`${H}allow-list`]: '192.168.2.0/24' });
    expect(read.route).to.deep.equal({ allow: ['192.168.2.0/24'], sourceHeader: 'X-Client-IP' });
    expect(read.outcomes.map((outcome) => outcome.status)).to.deep.equal(['honoured', 'honoured']);
    expect(readAnnotationSettings({ [`${H}src-ip-header`]: 'X Y', [`${H}deny-list`]: '10.0.0.0/8' }).outcomes[1]).to.deep.include({ status: 'invalid' });
  });

  it('nginx: proxy-body-size "0" lifts the limit (HAProxy\'s default), honoured', () => {
    const read = readAnnotationSettings({ [`${N}proxy-body-size`]: '0' });
    expect(read.route).to.deep.equal({});
    expect(read.outcomes[0]).to.deep.include({ status: 'honoured', setting: 'route.bodySizeLimit' });
  });

  it('nginx: the longer of proxy-read-timeout and proxy-send-timeout is the server timeout', () => {
    expect(readAnnotationSettings({ [`${N}proxy-read-timeout`]: '30', [`${N}proxy-send-timeout`]: '90' }).backend).to.deep.equal({ timeouts: { server: 90_000 } });
  });

  it('nginx: HSTS is on by default (ingress-nginx\'s ConfigMap), on a TLS Ingress, and hsts "false" turns it off with its details', () => {
    const hsts = { maxAge: 31_536_000, includeSubdomains: true, preload: false };
    expect(readAnnotationSettings({ [`${N}ssl-redirect`]: 'false' }, { tls: true }).route).to.deep.equal({ hsts });
    expect(readAnnotationSettings({ [`${N}hsts-max-age`]: '600' }).route).to.deep.equal({ hsts: { ...hsts, maxAge: 600 } });
    expect(readAnnotationSettings({ [`${H}timeout-server`]: '5s' }, { tls: true }).route).to.deep.equal({ sslRedirect: { code: 302 } });
    const off = readAnnotationSettings({ [`${N}hsts`]: 'false', [`${N}hsts-max-age`]: '600', [`${N}ssl-redirect`]: 'false' }, { tls: true });
    expect(off.route).to.deep.equal({});
    expect(off.outcomes.find((outcome) => outcome.annotation === `${N}hsts-max-age`)).to.deep.include({ status: 'ignored', reason: 'hsts is not "true"' });
  });

  it('nginx: the affinity cookie lasts session-cookie-max-age seconds, else session-cookie-expires', () => {
    const cookie = (more: Record<string, string>) => readAnnotationSettings({ [`${N}affinity`]: 'cookie', ...more }).backend;
    expect(cookie({ [`${N}session-cookie-max-age`]: '172800', [`${N}session-cookie-expires`]: '60' })).to.deep.equal({ affinity: { cookie: 'INGRESSCOOKIE', maxAge: 172_800 } });
    expect(cookie({ [`${N}session-cookie-expires`]: '60' })).to.deep.equal({ affinity: { cookie: 'INGRESSCOOKIE', maxAge: 60 } });
    expect(readAnnotationSettings({ [`${N}affinity`]: 'cookie', [`${N}session-cookie-max-age`]: '1h' }).outcomes[1]).to.deep.include({ status: 'invalid' });
  });

  it('haproxy.org: forwarded-for "false" sends no client address; "true" is the default and sets nothing', () => {
    expect(readAnnotationSettings({ [`${H}forwarded-for`]: 'false' }).route).to.deep.equal({ withoutForwardedFor: true });
    const on = readAnnotationSettings({ [`${H}forwarded-for`]: 'true' });
    expect(on.route).to.deep.equal({});
    expect(on.outcomes[0]).to.deep.include({ status: 'honoured', setting: 'route.withoutForwardedFor' });
  });

  it('nginx: x-forwarded-prefix is the X-Forwarded-Prefix sent; captures are refused', () => {
    expect(readAnnotationSettings({ [`${N}x-forwarded-prefix`]: '/shop' }).route).to.deep.equal({ forwardedPrefix: '/shop' });
    expect(readAnnotationSettings({ [`${N}x-forwarded-prefix`]: '/$1' }).outcomes[0]).to.deep.include({ status: 'invalid' });
  });

  it('nginx: limit-rps is read over limit-rpm', () => {
    const read = readAnnotationSettings({ [`${N}limit-rps`]: '5', [`${N}limit-rpm`]: '100' });
    // ingress-nginx's burst, 5 x 5, and the request that finds the bucket empty, over the time 5 per second take to make 26.
    expect(read.route).to.deep.equal({ rateLimit: { requests: 26, period: 5200, status: 503 } });
    expect(read.outcomes[0]).to.deep.include({ annotation: `${N}limit-rpm`, status: 'ignored', reason: 'limit-rps is read instead: one rate per route' });
  });

  it('names a reason for every unsupported annotation, snippets included', () => {
    const read = readAnnotationSettings({ [`${H}backend-config-snippet`]: 'option forwardfor', [`${H}timeout-client`]: '5s', [`${N}made-up`]: 'x' });
    expect(read.outcomes).to.deep.equal([
      {
        annotation: `${H}backend-config-snippet`,
        value: 'option forwardfor',
        status: 'ignored',
        reason: 'configuration snippets are not supported: raw HAProxy configuration from an object could add any directive',
      },
      { annotation: `${H}timeout-client`, value: '5s', status: 'ignored', reason: 'applies to the frontend every route shares: set it in the template values, not per Ingress' },
      {
        annotation: `${N}made-up`,
        value: 'x',
        status: 'ignored',
        reason: 'not an ingress-nginx annotation: ingress-nginx does not read it either (check its name in the ingress-nginx annotations reference)',
      },
    ]);
  });

  it("tells an annotation ingress-nginx does not read (another controller's, a removed one) from one it reads that is not supported here", () => {
    const read = readAnnotationSettings({
      [`${N}rate-limit`]: '100',
      [`${N}rate-limit-window`]: '1m',
      [`${N}client-max-body-size`]: '10m',
      [`${N}secure-backends`]: 'true',
      [`${N}proxy-buffering`]: 'on',
      [`${N}mirror-target`]: 'http://copy',
      'nginx.org/client-max-body-size': '10m',
    });
    const NOT_NGINX = 'not an ingress-nginx annotation: ingress-nginx does not read it either (check its name in the ingress-nginx annotations reference)';
    expect(Object.fromEntries(read.outcomes.map((outcome) => [outcome.annotation, (outcome as { reason: string }).reason]))).to.deep.equal({
      [`${N}client-max-body-size`]: NOT_NGINX,
      [`${N}mirror-target`]: 'not supported by haproxy-template-ic (see docs/annotations.md)',
      [`${N}proxy-buffering`]: 'nginx buffer tuning has no HAProxy equivalent',
      [`${N}rate-limit`]: NOT_NGINX,
      [`${N}rate-limit-window`]: NOT_NGINX,
      [`${N}secure-backends`]: 'removed from ingress-nginx, which no longer reads it: use backend-protocol: "HTTPS"',
      'nginx.org/client-max-body-size': 'an NGINX Inc. controller annotation (F5 NGINX Ingress Controller), not an ingress-nginx one: neither ingress-nginx nor haproxy-template-ic reads it',
    });
  });
});
