import { expect } from 'chai';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';
import { FAMILY_ROWS, prefixed } from './family-rows.ts';

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
    expected: { route: { rewrite: { kind: 'regex', rules: [{ pattern: '/foo/(.*)', replacement: '/\\1' }] } } },
  },
];

describe('annotation families: the same setting spelled either way reads the same', () => {
  for (const row of FAMILY_ROWS) {
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
