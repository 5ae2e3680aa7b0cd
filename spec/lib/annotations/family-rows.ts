import type { ReadContext } from '../../../lib/annotations/read-settings.ts';

/**
 * Each setting spelled in either family reads to the same settings, so a
 * migrated Ingress renders the same under either spelling. Each row: the
 * setting, its haproxy.org/ spelling, its nginx.ingress.kubernetes.io/
 * spelling, the context, and the settings both must give.
 */
export interface FamilyRow {
  readonly setting: string;
  readonly haproxy: Record<string, string>;
  readonly nginx: Record<string, string>;
  readonly context?: ReadContext;
  readonly expected: { readonly backend?: object; readonly route?: object };
}

export const FAMILY_ROWS: readonly FamilyRow[] = [
  {
    setting: 'redirect to HTTPS',
    haproxy: { 'ssl-redirect': 'true', 'ssl-redirect-code': '308' },
    nginx: { 'force-ssl-redirect': 'true' },
    expected: { route: { sslRedirect: { code: 308 } } },
  },
  {
    setting: 'redirect to HTTPS on a TLS Ingress',
    haproxy: { 'ssl-redirect-code': '308', hsts: 'true' },
    nginx: { 'ssl-redirect': 'true' },
    context: { tls: true },
    // ingress-nginx's HSTS default comes with its family on a TLS Ingress; haproxy.org spells it out.
    expected: { route: { sslRedirect: { code: 308 }, hsts: { maxAge: 31_536_000, includeSubdomains: true, preload: false } } },
  },
  { setting: 'no redirect on a TLS Ingress', haproxy: { 'ssl-redirect': 'false' }, nginx: { 'ssl-redirect': 'false', hsts: 'false' }, context: { tls: true }, expected: {} },
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
    haproxy: { 'rate-limit-requests': '11', 'rate-limit-period': '1100ms', 'rate-limit-status-code': '503' },
    nginx: { 'limit-rps': '10', 'limit-burst-multiplier': '1' },
    // ingress-nginx's burst of 10 plus the request that finds the bucket empty, over the time 10 per second take to make 11.
    expected: { route: { rateLimit: { requests: 11, period: 1100, status: 503 } } },
  },
  {
    setting: 'rate limit per minute',
    haproxy: { 'rate-limit-requests': '501', 'rate-limit-period': '300600ms', 'rate-limit-status-code': '503' },
    // limit-burst-multiplier's default, 5: a burst of 500.
    nginx: { 'limit-rpm': '100' },
    expected: { route: { rateLimit: { requests: 501, period: 300_600, status: 503 } } },
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
      'cors-respond-to-options': 'true',
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
      route: {
        cors: {
          allowOrigins: ['https://app.example.com'],
          allowMethods: ['GET', 'POST'],
          allowHeaders: ['Content-Type', 'Authorization'],
          allowCredentials: true,
          maxAge: 600,
          respondToPreflight: true,
        },
      },
    },
  },
];

/** The annotations under a family's prefix. */
export const prefixed = (prefix: string, annotations: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(annotations).map(([name, value]) => [prefix + name, value]));
