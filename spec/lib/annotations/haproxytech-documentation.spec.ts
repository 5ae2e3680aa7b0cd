import { expect } from 'chai';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';
import type { BackendSettings, RouteSettings } from '../../../lib/routing/settings.ts';

/**
 * Every haproxy.org/ annotation this controller reads, with the example
 * value haproxytech's documentation gives it (documentation/annotations.md
 * of haproxytech/kubernetes-ingress), read as that controller hands it to
 * HAProxy: honoured with the settings it means, or, where it cannot be
 * served, ignored or left out with why.
 */

const H = 'haproxy.org/';

type Expected = { readonly backend?: BackendSettings; readonly route?: RouteSettings } | { readonly status: 'ignored' | 'left out' | 'invalid'; readonly reason: string };

const DOCUMENTED: readonly [string, Record<string, string>, Expected][] = [
  ['ssl-redirect', { 'ssl-redirect': 'false' }, {}],
  ['ssl-redirect-code', { 'ssl-redirect': 'true', 'ssl-redirect-code': '301' }, { route: { sslRedirect: { code: 301 } } }],
  ['server-ssl', { 'server-ssl': 'true' }, { backend: { protocol: { version: 'h1', tls: true } } }],
  ['server-proto', { 'server-proto': 'h2' }, { backend: { protocol: { version: 'h2c', tls: false } } }],
  ['server-ca', { 'server-ca': 'ns1/ca' }, { backend: { protocol: { version: 'h1', tls: true, verifyCa: { namespace: 'ns1', name: 'ca' } } } }],
  ['timeout-server', { 'timeout-server': '5s' }, { backend: { timeouts: { server: 5000 } } }],
  ['timeout-connect', { 'timeout-connect': '5s' }, { backend: { timeouts: { connect: 5000 } } }],
  ['timeout-tunnel', { 'timeout-tunnel': '30m' }, { backend: { timeouts: { tunnel: 1_800_000 } } }],
  ['load-balance', { 'load-balance': 'leastconn' }, { backend: { balance: { algorithm: 'leastconn' } } }],
  ['pod-maxconn', { 'pod-maxconn': '30' }, { backend: { serverMaxconn: 30 } }],
  ['allow-list', { 'allow-list': '192.168.1.0/24, 192.168.2.100' }, { route: { allow: ['192.168.1.0/24', '192.168.2.100'] } }],
  ['whitelist', { whitelist: '192.168.1.0/24, 192.168.2.100' }, { route: { allow: ['192.168.1.0/24', '192.168.2.100'] } }],
  ['deny-list', { 'deny-list': '192.168.1.0/24, 192.168.2.100' }, { route: { deny: ['192.168.1.0/24', '192.168.2.100'] } }],
  ['blacklist', { blacklist: '192.168.1.0/24, 192.168.2.100' }, { route: { deny: ['192.168.1.0/24', '192.168.2.100'] } }],
  ['cookie-persistence', { 'cookie-persistence': 'mycookie' }, { backend: { affinity: { cookie: 'mycookie' } } }],
  [
    'auth-type, auth-secret',
    { 'auth-type': 'basic-auth', 'auth-secret': 'default/haproxy-credentials' },
    { route: { basicAuth: { secret: { namespace: 'default', name: 'haproxy-credentials' }, realm: 'Protected Content' } } },
  ],
  [
    'auth-realm',
    { 'auth-type': 'basic-auth', 'auth-secret': 'default/haproxy-credentials', 'auth-realm': 'Admin Area' },
    { route: { basicAuth: { secret: { namespace: 'default', name: 'haproxy-credentials' }, realm: 'Admin Area' } } },
  ],
  ['rate-limit-requests', { 'rate-limit-requests': '15' }, { route: { rateLimit: { requests: 15, period: 1000, status: 403 } } }],
  ['rate-limit-period', { 'rate-limit-requests': '15', 'rate-limit-period': '1m' }, { route: { rateLimit: { requests: 15, period: 60_000, status: 403 } } }],
  ['rate-limit-status-code', { 'rate-limit-requests': '15', 'rate-limit-status-code': '429' }, { route: { rateLimit: { requests: 15, period: 1000, status: 429 } } }],
  ['path-rewrite (a path)', { 'path-rewrite': '/' }, { route: { rewrite: { kind: 'full', path: '/' } } }],
  ['path-rewrite (a prefix added)', { 'path-rewrite': '(.*) /foo\\1' }, { route: { rewrite: { kind: 'regex', rules: [{ pattern: '(.*)', replacement: '/foo\\1' }] } } }],
  [
    'path-rewrite (a suffix added)',
    { 'path-rewrite': '([^?]*)(\\?(.*))? \\1/foo\\2' },
    { route: { rewrite: { kind: 'regex', rules: [{ pattern: '([^?]*)(\\?(.*))?', replacement: '\\1/foo\\2' }] } } },
  ],
  ['path-rewrite (a prefix stripped)', { 'path-rewrite': '/foo/(.*) /\\1' }, { route: { rewrite: { kind: 'regex', rules: [{ pattern: '/foo/(.*)', replacement: '/\\1' }] } } }],
  [
    'path-rewrite (several lines, in turn)',
    { 'path-rewrite': '/foo/(.*) /\\1\n/bar/(.*) /baz/\\1\n' },
    {
      route: {
        rewrite: {
          kind: 'regex',
          rules: [
            { pattern: '/foo/(.*)', replacement: '/\\1' },
            { pattern: '/bar/(.*)', replacement: '/baz/\\1' },
          ],
        },
      },
    },
  ],
  ['request-redirect', { 'request-redirect': 'example.com' }, { route: { redirect: { code: 302, host: 'example.com' } } }],
  ['request-redirect (with a port)', { 'request-redirect': 'example.com:8888' }, { route: { redirect: { code: 302, host: 'example.com', port: 8888 } } }],
  ['request-redirect-code', { 'request-redirect': 'example.com', 'request-redirect-code': '303' }, { route: { redirect: { code: 303, host: 'example.com' } } }],
  ['set-host', { 'set-host': 'example.local' }, { route: { upstreamHost: 'example.local' } }],
  ['request-set-header', { 'request-set-header': 'Ingress-ID abcd123' }, { route: { requestHeaders: { set: [{ name: 'Ingress-ID', value: 'abcd123' }] } } }],
  [
    'request-set-header (several lines)',
    { 'request-set-header': 'Ingress-ID abcd123\nAnother-Header 12345\n' },
    {
      route: {
        requestHeaders: {
          set: [
            { name: 'Ingress-ID', value: 'abcd123' },
            { name: 'Another-Header', value: '12345' },
          ],
        },
      },
    },
  ],
  [
    'response-set-header (a quoted value)',
    { 'response-set-header': 'Cache-Control "no-store,no-cache,private"' },
    { route: { responseHeaders: { set: [{ name: 'Cache-Control', value: 'no-store,no-cache,private' }] } } },
  ],
  [
    'response-set-header (several quoted lines)',
    { 'response-set-header': 'Cache-Control "no-store,no-cache,private"\nStrict-Transport-Security "max-age=31536000"\n' },
    {
      route: {
        responseHeaders: {
          set: [
            { name: 'Cache-Control', value: 'no-store,no-cache,private' },
            { name: 'Strict-Transport-Security', value: 'max-age=31536000' },
          ],
        },
      },
    },
  ],
  [
    'cors-enable',
    { 'cors-enable': 'true' },
    { route: { cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false, maxAge: 5, respondToPreflight: false } } },
  ],
  [
    'cors-allow-origin',
    { 'cors-enable': 'true', 'cors-allow-origin': 'https://example.com' },
    { route: { cors: { allowOrigins: ['https://example.com'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false, maxAge: 5, respondToPreflight: false } } },
  ],
  [
    'cors-allow-origin (a regular expression)',
    { 'cors-enable': 'true', 'cors-allow-origin': '^https://(.+\\.)?(example-1\\.com|example-2\\.com)(:\\d{1,5})?$' },
    {
      route: {
        cors: {
          allowOrigins: [],
          allowOriginPatterns: ['^https://(.+\\.)?(example-1\\.com|example-2\\.com)(:\\d{1,5})?$'],
          allowMethods: ['*'],
          allowHeaders: ['*'],
          allowCredentials: false,
          maxAge: 5,
          respondToPreflight: false,
        },
      },
    },
  ],
  [
    'cors-allow-methods',
    { 'cors-enable': 'true', 'cors-allow-methods': 'GET, POST' },
    { route: { cors: { allowOrigins: ['*'], allowMethods: ['GET', 'POST'], allowHeaders: ['*'], allowCredentials: false, maxAge: 5, respondToPreflight: false } } },
  ],
  [
    'cors-allow-headers',
    { 'cors-enable': 'true', 'cors-allow-headers': 'X-Custom-Header, Upgrade-Insecure-Requests' },
    {
      route: {
        cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['X-Custom-Header', 'Upgrade-Insecure-Requests'], allowCredentials: false, maxAge: 5, respondToPreflight: false },
      },
    },
  ],
  [
    'cors-allow-credentials',
    { 'cors-enable': 'true', 'cors-allow-credentials': 'true' },
    { route: { cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true, maxAge: 5, respondToPreflight: false } } },
  ],
  [
    'cors-max-age',
    { 'cors-enable': 'true', 'cors-max-age': '1m' },
    { route: { cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false, maxAge: 60, respondToPreflight: false } } },
  ],
  ['check-http', { 'check-http': '/health' }, { backend: { healthCheck: { path: '/health' } } }],
  ['check-interval', { 'check-interval': '1m' }, { backend: { healthCheck: { interval: 60_000 } } }],
  [
    'ssl-passthrough',
    { 'ssl-passthrough': 'true' },
    {
      status: 'left out',
      reason:
        'TLS passthrough is not supported: HAProxy terminates TLS, and without server-ssl: "true" the backend, which expects the client\'s TLS, would be sent plain HTTP, so this Ingress is left out',
    },
  ],
  [
    'src-ip-header (alone: nothing reads the source)',
    { 'src-ip-header': 'True-Client-IP' },
    { status: 'ignored', reason: "no allow-list or deny-list on this Ingress reads the source: rate limits and logs keep the connection's address" },
  ],
  [
    'src-ip-header (with allow-list, as its access-control e2e test sets them)',
    { 'src-ip-header': 'True-Client-IP', 'allow-list': '192.168.1.0/24, 192.168.2.100' },
    { route: { allow: ['192.168.1.0/24', '192.168.2.100'], sourceHeader: 'True-Client-IP' } },
  ],
  [
    'backend-config-snippet',
    { 'backend-config-snippet': 'http-send-name-header x-dst-server\nstick-table type string len 32 size 100k expire 30m\nstick on req.cook(sessionid)\n' },
    { status: 'ignored', reason: 'configuration snippets are not supported: raw HAProxy configuration from an object could add any directive' },
  ],
];

describe("haproxy.org/ annotations with their documentation's own examples", () => {
  for (const [what, annotations, expected] of DOCUMENTED) {
    it(what, () => {
      const read = readAnnotationSettings(Object.fromEntries(Object.entries(annotations).map(([name, value]) => [H + name, value])), { namespace: 'default' });
      if ('status' in expected) {
        const outcome = read.outcomes.find((candidate) => candidate.status !== 'honoured');
        expect(outcome, JSON.stringify(read.outcomes)).to.deep.include({ status: expected.status, reason: expected.reason });
        return;
      }
      expect(read.outcomes.filter((outcome) => outcome.status !== 'honoured')).to.deep.equal([]);
      expect({ backend: read.backend, route: read.route }).to.deep.equal({ backend: expected.backend ?? {}, route: expected.route ?? {} });
    });
  }
});
