import { expect } from 'chai';
import { readAnnotationSettings, type ReadContext } from '../../../lib/annotations/read-settings.ts';

/**
 * Each setting spelled in either family reads to the same settings, so a
 * migrated Ingress renders the same under either spelling. Each row: the
 * setting, its haproxy.org/ spelling, its nginx.ingress.kubernetes.io/
 * spelling, the context, and the settings both must give.
 */
interface Row {
  readonly setting: string;
  readonly haproxy: Record<string, string>;
  readonly nginx: Record<string, string>;
  readonly context?: ReadContext;
  readonly expected: { readonly backend?: object; readonly route?: object };
}

const ROWS: readonly Row[] = [
  {
    setting: 'redirect to HTTPS',
    haproxy: { 'ssl-redirect': 'true', 'ssl-redirect-code': '308' },
    nginx: { 'force-ssl-redirect': 'true' },
    expected: { route: { sslRedirect: { code: 308 } } },
  },
  {
    setting: 'redirect to HTTPS on a TLS Ingress',
    haproxy: { 'ssl-redirect-code': '308' },
    nginx: { 'ssl-redirect': 'true' },
    context: { tls: true },
    expected: { route: { sslRedirect: { code: 308 } } },
  },
  { setting: 'no redirect on a TLS Ingress', haproxy: { 'ssl-redirect': 'false' }, nginx: { 'ssl-redirect': 'false' }, context: { tls: true }, expected: {} },
  { setting: 'server timeout', haproxy: { 'timeout-server': '2m' }, nginx: { 'proxy-read-timeout': '120' }, expected: { backend: { timeouts: { server: 120_000 } } } },
  { setting: 'connect timeout', haproxy: { 'timeout-connect': '3s' }, nginx: { 'proxy-connect-timeout': '3' }, expected: { backend: { timeouts: { connect: 3000 } } } },
  { setting: 'h1 in clear text', haproxy: { 'server-ssl': 'false' }, nginx: { 'backend-protocol': 'HTTP' }, expected: { backend: { protocol: { version: 'h1', tls: false } } } },
  { setting: 'h1 over TLS', haproxy: { 'server-ssl': 'true' }, nginx: { 'backend-protocol': 'HTTPS' }, expected: { backend: { protocol: { version: 'h1', tls: true } } } },
  { setting: 'h2c (gRPC in clear text)', haproxy: { 'server-proto': 'h2' }, nginx: { 'backend-protocol': 'GRPC' }, expected: { backend: { protocol: { version: 'h2c', tls: false } } } },
  {
    setting: 'h2 over TLS (gRPC over TLS)',
    haproxy: { 'server-ssl': 'true', 'server-proto': 'h2' },
    nginx: { 'backend-protocol': 'GRPCS' },
    expected: { backend: { protocol: { version: 'h2', tls: true } } },
  },
  {
    setting: 'TLS verified against a CA',
    haproxy: { 'server-ca': 'shop/backend-ca' },
    nginx: { 'backend-protocol': 'HTTPS', 'proxy-ssl-verify': 'on', 'proxy-ssl-secret': 'shop/backend-ca' },
    expected: { backend: { protocol: { version: 'h1', tls: true, verifyCa: { namespace: 'shop', name: 'backend-ca' } } } },
  },
  { setting: 'round robin', haproxy: { 'load-balance': 'roundrobin' }, nginx: { 'load-balance': 'round_robin' }, expected: { backend: { balance: { algorithm: 'roundrobin' } } } },
  { setting: 'least connections', haproxy: { 'load-balance': 'leastconn' }, nginx: { 'load-balance': 'ewma' }, expected: { backend: { balance: { algorithm: 'leastconn' } } } },
  { setting: 'source hashing', haproxy: { 'load-balance': 'source' }, nginx: { 'upstream-hash-by': '$remote_addr' }, expected: { backend: { balance: { algorithm: 'source' } } } },
  { setting: 'URI hashing', haproxy: { 'load-balance': 'uri' }, nginx: { 'upstream-hash-by': '$request_uri' }, expected: { backend: { balance: { algorithm: 'uri' } } } },
  {
    setting: 'header hashing',
    haproxy: { 'load-balance': 'hdr(X-User-Id)' },
    nginx: { 'upstream-hash-by': '$http_x_user_id' },
    expected: { backend: { balance: { algorithm: 'hdr', header: 'x-user-id' } } },
  },
  {
    setting: 'query parameter hashing',
    haproxy: { 'load-balance': 'url_param session' },
    nginx: { 'upstream-hash-by': '$arg_session' },
    expected: { backend: { balance: { algorithm: 'url_param', parameter: 'session' } } },
  },
  {
    setting: 'allow-list',
    haproxy: { 'allow-list': '10.0.0.0/8, 2001:db8::/32' },
    nginx: { 'whitelist-source-range': '10.0.0.0/8, 2001:db8::/32' },
    expected: { route: { allow: ['10.0.0.0/8', '2001:db8::/32'] } },
  },
  { setting: 'deny-list', haproxy: { 'deny-list': '192.0.2.7' }, nginx: { 'denylist-source-range': '192.0.2.7' }, expected: { route: { deny: ['192.0.2.7'] } } },
  {
    setting: 'HSTS with defaults',
    haproxy: { hsts: 'true' },
    nginx: { hsts: 'true' },
    expected: { route: { hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false } } },
  },
  {
    setting: 'HSTS spelled out',
    haproxy: { hsts: 'true', 'hsts-max-age': '600', 'hsts-include-subdomains': 'false', 'hsts-preload': 'true' },
    nginx: { hsts: 'true', 'hsts-max-age': '600', 'hsts-include-subdomains': 'false', 'hsts-preload': 'true' },
    expected: { route: { hsts: { maxAge: 600, includeSubdomains: false, preload: true } } },
  },
  { setting: 'cookie affinity', haproxy: { 'cookie-persistence': 'INGRESSCOOKIE' }, nginx: { affinity: 'cookie' }, expected: { backend: { affinity: { cookie: 'INGRESSCOOKIE' } } } },
  {
    setting: 'cookie affinity with a name',
    haproxy: { 'cookie-persistence': 'srv' },
    nginx: { affinity: 'cookie', 'session-cookie-name': 'srv' },
    expected: { backend: { affinity: { cookie: 'srv' } } },
  },
  {
    setting: 'basic auth',
    haproxy: { 'auth-type': 'basic-auth', 'auth-secret': 'users', 'auth-realm': 'Staff only' },
    nginx: { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'Staff only' },
    expected: { route: { basicAuth: { secret: { namespace: 'shop', name: 'users' }, realm: 'Staff only' } } },
  },
  {
    setting: 'rate limit per second',
    haproxy: { 'rate-limit-requests': '10', 'rate-limit-status-code': '503' },
    nginx: { 'limit-rps': '10' },
    expected: { route: { rateLimit: { requests: 10, period: 1000, status: 503 } } },
  },
  {
    setting: 'rate limit per minute',
    haproxy: { 'rate-limit-requests': '100', 'rate-limit-period': '1m', 'rate-limit-status-code': '503' },
    nginx: { 'limit-rpm': '100' },
    expected: { route: { rateLimit: { requests: 100, period: 60_000, status: 503 } } },
  },
  { setting: 'whole path rewritten', haproxy: { 'path-rewrite': '/' }, nginx: { 'rewrite-target': '/' }, expected: { route: { rewrite: { kind: 'full', path: '/' } } } },
  { setting: 'upstream Host', haproxy: { 'set-host': 'api.internal' }, nginx: { 'upstream-vhost': 'api.internal' }, expected: { route: { upstreamHost: 'api.internal' } } },
  {
    setting: 'request and response headers',
    haproxy: { 'request-set-header': 'X-Team shop\nX-Tier gold', 'response-set-header': "Content-Security-Policy default-src 'self'" },
    nginx: { 'request-set-header': 'X-Team shop\nX-Tier gold', 'response-set-header': "Content-Security-Policy default-src 'self'" },
    expected: {
      route: {
        requestHeaders: {
          set: [
            { name: 'X-Team', value: 'shop' },
            { name: 'X-Tier', value: 'gold' },
          ],
        },
        responseHeaders: { set: [{ name: 'Content-Security-Policy', value: "default-src 'self'" }] },
      },
    },
  },
  {
    setting: 'CORS',
    haproxy: {
      'cors-enable': 'true',
      'cors-allow-origin': 'https://app.example.com',
      'cors-allow-methods': 'GET, POST',
      'cors-allow-headers': 'Content-Type, Authorization',
      'cors-allow-credentials': 'true',
      'cors-max-age': '10m',
    },
    nginx: {
      'enable-cors': 'true',
      'cors-allow-origin': 'https://app.example.com',
      'cors-allow-methods': 'GET, POST',
      'cors-allow-headers': 'Content-Type, Authorization',
      'cors-allow-credentials': 'true',
      'cors-max-age': '600',
    },
    expected: {
      route: { cors: { allowOrigins: ['https://app.example.com'], allowMethods: ['GET', 'POST'], allowHeaders: ['Content-Type', 'Authorization'], allowCredentials: true, maxAge: 600 } },
    },
  },
];

/**
 * Settings only one family spells (the other has no annotation for them):
 * each is still read, honoured, into the setting the renderers implement.
 */
const ONE_FAMILY: readonly { readonly annotations: Record<string, string>; readonly expected: { readonly backend?: object; readonly route?: object } }[] = [
  { annotations: { 'haproxy.org/pod-maxconn': '50' }, expected: { backend: { serverMaxconn: 50 } } },
  { annotations: { 'haproxy.org/timeout-tunnel': '1h' }, expected: { backend: { timeouts: { tunnel: 3_600_000 } } } },
  { annotations: { 'haproxy.org/check-http': '/healthz', 'haproxy.org/check-interval': '2s' }, expected: { backend: { healthCheck: { path: '/healthz', interval: 2000 } } } },
  { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1m' }, expected: { route: { bodySizeLimit: 1_048_576 } } },
  { annotations: { 'nginx.ingress.kubernetes.io/limit-connections': '20' }, expected: { route: { connectionLimit: 20 } } },
  { annotations: { 'nginx.ingress.kubernetes.io/app-root': '/app/' }, expected: { route: { appRoot: '/app/' } } },
  { annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' }, expected: { route: { regexPath: true } } },
  // The two families' redirects mean different things: haproxy.org replaces the host (and port) of the request's URL, nginx sends every request to one URL.
  {
    annotations: { 'haproxy.org/request-redirect': 'example.com:8443', 'haproxy.org/request-redirect-code': '301' },
    expected: { route: { redirect: { code: 301, host: 'example.com', port: 8443 } } },
  },
  { annotations: { 'nginx.ingress.kubernetes.io/permanent-redirect': 'https://example.com/new' }, expected: { route: { redirect: { code: 301, location: 'https://example.com/new' } } } },
  // nginx's common "keep the request's path and query" spelling, read as a scheme and host replaced.
  {
    annotations: { 'nginx.ingress.kubernetes.io/permanent-redirect': 'https://new.example.com:8443$request_uri', 'nginx.ingress.kubernetes.io/permanent-redirect-code': '308' },
    expected: { route: { redirect: { code: 308, scheme: 'https', host: 'new.example.com', port: 8443 } } },
  },
  {
    annotations: { 'nginx.ingress.kubernetes.io/temporal-redirect': 'https://example.com/', 'nginx.ingress.kubernetes.io/temporal-redirect-code': '307' },
    expected: { route: { redirect: { code: 307, location: 'https://example.com/' } } },
  },
  {
    annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' },
    expected: { route: { rewrite: { kind: 'route-path', replacement: '/\\2' }, regexPath: true } },
  },
  {
    annotations: { 'haproxy.org/path-rewrite': '/foo/(.*) /\\1' },
    expected: { route: { rewrite: { kind: 'regex', pattern: '/foo/(.*)', replacement: '/\\1' } } },
  },
];

const prefixed = (prefix: string, annotations: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(annotations).map(([name, value]) => [prefix + name, value]));

describe('annotation families: the same setting spelled either way reads the same', () => {
  for (const row of ROWS) {
    it(row.setting, () => {
      const expected = { backend: row.expected.backend ?? {}, route: row.expected.route ?? {} };
      for (const [prefix, annotations] of [
        ['haproxy.org/', row.haproxy],
        ['nginx.ingress.kubernetes.io/', row.nginx],
      ] as const) {
        const read = readAnnotationSettings(prefixed(prefix, annotations), { namespace: 'shop', ...row.context });
        expect({ backend: read.backend, route: read.route }, prefix).to.deep.equal(expected);
        expect(
          read.outcomes.filter((outcome) => outcome.status !== 'honoured'),
          prefix,
        ).to.deep.equal([]);
      }
    });
  }
});

describe('annotation settings only one family spells', () => {
  for (const row of ONE_FAMILY) {
    it(Object.keys(row.annotations).join(', '), () => {
      const read = readAnnotationSettings(row.annotations);
      expect({ backend: read.backend, route: read.route }).to.deep.equal({ backend: row.expected.backend ?? {}, route: row.expected.route ?? {} });
      expect(read.outcomes.every((outcome) => outcome.status === 'honoured')).to.equal(true);
    });
  }
});
