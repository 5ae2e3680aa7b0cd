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
