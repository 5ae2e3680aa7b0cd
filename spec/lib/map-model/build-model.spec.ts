import { expect } from 'chai';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { Problem } from '../../../lib/pipeline/model.ts';
import type { MapModel } from '../../../lib/map-model/types.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY, UNRELATED_KEY } from '../../support/tls-fixture.ts';
import { backend, endpointSlice, ingress, path, rule, service, sources, tlsSecret } from '../ingress/fixtures.ts';
import type { World } from '../ingress/fixtures.ts';

const build = (world: World) => buildMapModel(sources(world));

/** A Service "web" with one port 80 -> 8080 and one ready endpoint, the common backend of these specs. */
const web = service('web', [{ name: 'http', port: 80, targetPort: 8080 }]);
const webSlice = endpointSlice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }]);

/** Everything that lands in the configuration or a map file, without the reports. */
function rendered(model: MapModel): Omit<MapModel, 'excluded' | 'warnings'> {
  const { excluded: _excluded, warnings: _warnings, ...rest } = model;
  return rest;
}

const fields = (problems: readonly Problem[]) => problems.map((problem) => `${problem.object} ${problem.field}`);

describe('buildMapModel', () => {
  describe('Ingress class', () => {
    it('serves Ingresses whose ingressClassName, or without one the class annotation, names the class', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('by-field', { rules: [rule('field.example.com', path('/', 'web', 80))] }),
          ingress('by-annotation', { className: null, annotationClass: 'haproxy', rules: [rule('annotation.example.com', path('/', 'web', 80))] }),
          ingress('other-class', { className: 'nginx', rules: [rule('nginx.example.com', path('/', 'web', 80))] }),
          // The field decides when present, whatever the annotation says.
          ingress('field-wins', { className: 'nginx', annotationClass: 'haproxy', rules: [rule('mixed.example.com', path('/', 'web', 80))] }),
          ingress('no-class', { className: null, rules: [rule('none.example.com', path('/', 'web', 80))] }),
        ],
      });
      expect(model.hosts.map((host) => host.host)).to.deep.equal(['annotation.example.com', 'field.example.com']);
      // Other classes are not ours to report on.
      expect(model.excluded).to.deep.equal([]);
      expect(model.warnings).to.deep.equal([]);
    });

    it('serves the configured class name', () => {
      const model = build({
        className: 'internal',
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('internal', { className: 'internal', rules: [rule('internal.example.com', path('/', 'web', 80))] }),
          ingress('default-class', { rules: [rule('public.example.com', path('/', 'web', 80))] }),
        ],
      });
      expect(model.hosts).to.deep.equal([{ host: 'internal.example.com', wildcard: false }]);
    });
  });

  describe('hosts and paths', () => {
    it('keys exact, wildcard and host-less rules, lowercasing hosts', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('web', {
            rules: [
              rule('Example.COM', path('/', 'web', 80)),
              rule('*.example.com', path('/', 'web', 80)),
              rule(undefined, path('/', 'web', 80)),
              rule('', path('/health', 'web', 80, 'Exact')),
            ],
          }),
        ],
      });
      expect(model.hosts).to.deep.equal([
        { host: '*', wildcard: false },
        { host: '*.example.com', wildcard: true },
        { host: 'example.com', wildcard: false },
      ]);
      expect(model.exactRoutes).to.deep.equal([{ key: '*/health', backend: 'default_web_80', policy: undefined, settings: undefined }]);
      expect(model.prefixRoutes).to.deep.equal([
        { key: '*.example.com/', backend: 'default_web_80', policy: undefined, settings: undefined },
        { key: 'example.com/', backend: 'default_web_80', policy: undefined, settings: undefined },
        { key: '*/', backend: 'default_web_80', policy: undefined, settings: undefined },
      ]);
    });

    it('turns Exact paths into exact keys and Prefix paths into element-wise exact and prefix keys', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('web', {
            rules: [
              rule(
                'example.com',
                path('/login', 'web', 80, 'Exact'),
                path('/exact/', 'web', 80, 'Exact'),
                path('/api', 'web', 80, 'Prefix'),
                path('/static/', 'web', 80, 'Prefix'),
                path('/docs//', 'web', 80, 'ImplementationSpecific'),
                path('/', 'web', 80, 'Prefix'),
                path('/v1/users', 'web', 80, 'Prefix'),
              ),
              // ImplementationSpecific may leave the path out: everything.
              rule('other.example.com', { pathType: 'ImplementationSpecific', service: 'web', port: 80 }),
            ],
          }),
        ],
      });
      const to = 'default_web_80';
      expect(model.exactRoutes).to.deep.equal([
        { key: 'example.com/api', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/docs', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/exact/', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/login', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/static', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/v1/users', backend: to, policy: undefined, settings: undefined },
      ]);
      // Longest first: HAProxy's map_beg answers with the first line that matches.
      expect(model.prefixRoutes).to.deep.equal([
        { key: 'example.com/v1/users/', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/static/', backend: to, policy: undefined, settings: undefined },
        { key: 'other.example.com/', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/docs/', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/api/', backend: to, policy: undefined, settings: undefined },
        { key: 'example.com/', backend: to, policy: undefined, settings: undefined },
      ]);
      expect(model.excluded).to.deep.equal([]);
    });

    it('keeps a host whose rule has no paths, so its requests do not fall to the catch-all', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        ingresses: [ingress('web', { rules: [{ host: 'bare.example.com' }], defaultBackend: backend('web', 80) })],
      });
      expect(model.hosts).to.deep.equal([{ host: 'bare.example.com', wildcard: false }]);
      expect(model.exactRoutes).to.deep.equal([]);
      expect(model.defaultBackend).to.equal('default_web_80');
    });
  });

  describe('backends and servers', () => {
    it('shares one backend between every path and Ingress naming the same service port', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('a', { rules: [rule('a.example.com', path('/', 'web', 'http'), path('/x', 'web', 'http'))] }),
          ingress('b', { rules: [rule('b.example.com', path('/', 'web', 'http'))] }),
          // The same Service port by number is the same backend: one per Service port, named by its number.
          ingress('c', { rules: [rule('c.example.com', path('/', 'web', 80))] }),
        ],
      });
      const server = { name: 'srv-10.0.0.1-8080', address: '10.0.0.1', port: 8080 };
      expect(model.backends).to.deep.equal([{ name: 'default_web_80', namespace: 'default', service: 'web', port: '80', servers: [server], settings: {}, transport: undefined }]);
      expect([...model.exactRoutes, ...model.prefixRoutes].map((route) => route.backend)).to.deep.equal(Array(5).fill('default_web_80'));
      expect(model.warnings).to.deep.equal([]);
    });

    it('names a backend by the port name an Ingress gives while its Service lacks that port, and by the number once it has it', () => {
      const cache = new MapModelCache();
      const ingresses = [ingress('a', { rules: [rule('a.example.com', path('/', 'web', 'http'))] }), ingress('b', { rules: [rule('b.example.com', path('/', 'web', 80))] })];
      const renamed = service('web', [{ name: 'web', port: 80, targetPort: 8080 }]);
      const names = (services: KubeObject[]) => {
        const model = buildMapModel(sources({ services, slices: [webSlice], ingresses }), cache);
        expect(model, 'the same as a fresh build').to.deep.equal(buildMapModel(sources({ services, slices: [webSlice], ingresses })));
        return { backends: model.backends.map((b) => b.name), routes: model.prefixRoutes.map((r) => `${r.key} ${r.backend}`) };
      };
      expect(names([])).to.deep.equal({ backends: ['default_web_80', 'default_web_http'], routes: ['a.example.com/ default_web_http', 'b.example.com/ default_web_80'] });
      expect(names([web])).to.deep.equal({ backends: ['default_web_80'], routes: ['a.example.com/ default_web_80', 'b.example.com/ default_web_80'] });
      expect(names([renamed])).to.deep.equal({ backends: ['default_web_80', 'default_web_http'], routes: ['a.example.com/ default_web_http', 'b.example.com/ default_web_80'] });
      expect(names([web])).to.deep.equal({ backends: ['default_web_80'], routes: ['a.example.com/ default_web_80', 'b.example.com/ default_web_80'] });
    });

    it('takes the target port from the EndpointSlice port named like the Service port, for named and numeric targetPorts', () => {
      const model = build({
        services: [service('named', [{ name: 'http', port: 80, targetPort: 'web' }]), service('numeric', [{ name: 'http', port: 80, targetPort: 9000 }])],
        slices: [
          endpointSlice('named-1', 'named', [{ name: 'http', port: 3000 }], [{ addresses: ['10.0.1.1'] }]),
          endpointSlice('numeric-1', 'numeric', [{ name: 'http', port: 9000 }], [{ addresses: ['10.0.2.1'] }]),
        ],
        ingresses: [
          ingress('web', {
            rules: [rule('example.com', path('/named', 'named', 'http'), path('/numeric', 'numeric', 80))],
          }),
        ],
      });
      expect(model.backends.map((b) => [b.name, b.servers])).to.deep.equal([
        ['default_named_80', [{ name: 'srv-10.0.1.1-3000', address: '10.0.1.1', port: 3000 }]],
        ['default_numeric_80', [{ name: 'srv-10.0.2.1-9000', address: '10.0.2.1', port: 9000 }]],
      ]);
    });

    it('picks the right port of a multi-port Service, by name or by number', () => {
      const model = build({
        services: [
          service('app', [
            { name: 'http', port: 80, targetPort: 'http' },
            { name: 'metrics', port: 9090, targetPort: 'metrics' },
          ]),
        ],
        slices: [
          endpointSlice(
            'app-1',
            'app',
            [
              { name: 'metrics', port: 9102 },
              { name: 'http', port: 8080 },
            ],
            [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }],
          ),
        ],
        ingresses: [ingress('app', { rules: [rule('app.example.com', path('/', 'app', 'http'), path('/metrics', 'app', 9090))] })],
      });
      expect(model.backends.map((b) => [b.name, b.servers.map((s) => s.name)])).to.deep.equal([
        ['default_app_80', ['srv-10.0.0.1-8080', 'srv-10.0.0.2-8080']],
        ['default_app_9090', ['srv-10.0.0.1-9102', 'srv-10.0.0.2-9102']],
      ]);
    });

    it('matches a single unnamed Service port to the unnamed EndpointSlice port', () => {
      const model = build({
        services: [service('plain', [{ port: 80, targetPort: 8080 }])],
        slices: [endpointSlice('plain-1', 'plain', [{ port: 8080 }], [{ addresses: ['10.0.0.9'] }])],
        ingresses: [ingress('plain', { rules: [rule('plain.example.com', path('/', 'plain', 80))] })],
      });
      expect(model.backends[0]?.servers).to.deep.equal([{ name: 'srv-10.0.0.9-8080', address: '10.0.0.9', port: 8080 }]);
      expect(model.warnings).to.deep.equal([]);
    });

    it('skips endpoints that are not ready, merges slices, dedupes and sorts servers, and names IPv6 servers', () => {
      const model = build({
        services: [web],
        slices: [
          endpointSlice('web-b', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.3'], ready: true }, { addresses: ['10.0.0.4'], ready: false }, { addresses: ['10.0.0.1'] }]),
          endpointSlice('web-a', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }]),
          endpointSlice('web-v6', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['FD00::1'] }], { addressType: 'IPv6' }),
        ],
        ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))] })],
      });
      expect(model.backends[0]?.servers).to.deep.equal([
        { name: 'srv-10.0.0.1-8080', address: '10.0.0.1', port: 8080 },
        { name: 'srv-10.0.0.2-8080', address: '10.0.0.2', port: 8080 },
        { name: 'srv-10.0.0.3-8080', address: '10.0.0.3', port: 8080 },
        { name: 'srv-fd00__1-8080', address: 'fd00::1', port: 8080 },
      ]);
    });

    it('serves a backend without servers, with a warning, when its Service, port or EndpointSlices are missing', () => {
      const model = build({
        services: [web, service('idle', [{ name: 'http', port: 80 }]), service('external', [{ name: 'http', port: 80 }], 'default', 'ExternalName')],
        slices: [webSlice],
        ingresses: [
          ingress('web', {
            rules: [
              rule(
                'example.com',
                path('/gone', 'gone', 80),
                path('/wrong-port', 'web', 81),
                path('/wrong-name', 'web', 'grpc'),
                path('/idle', 'idle', 80),
                path('/external', 'external', 80),
                path('/', 'web', 80),
              ),
            ],
          }),
        ],
      });
      expect(model.backends.map((b) => [b.name, b.servers.length])).to.deep.equal([
        ['default_external_80', 0],
        ['default_gone_80', 0],
        ['default_idle_80', 0],
        ['default_web_80', 1],
        ['default_web_81', 0],
        ['default_web_grpc', 0],
      ]);
      expect(model.warnings).to.deep.equal([
        {
          object: 'Ingress default/web',
          field: 'spec.rules[0].http.paths[0]',
          message: 'backend default_gone_80 has no servers: Service default/gone not found',
        },
        {
          object: 'Ingress default/web',
          field: 'spec.rules[0].http.paths[1]',
          message: 'backend default_web_81 has no servers: Service default/web has no port 81',
        },
        {
          object: 'Ingress default/web',
          field: 'spec.rules[0].http.paths[2]',
          message: 'backend default_web_grpc has no servers: Service default/web has no port named "grpc"',
        },
        {
          object: 'Ingress default/web',
          field: 'spec.rules[0].http.paths[3]',
          message: 'backend default_idle_80 has no servers: Service default/idle has no EndpointSlices',
        },
        {
          object: 'Ingress default/web',
          field: 'spec.rules[0].http.paths[4]',
          message: 'backend default_external_80 has no servers: Service default/external is an ExternalName Service, which is not supported',
        },
      ]);
      expect(model.excluded).to.deep.equal([]);
    });

    it('does not warn about a Service scaled to zero', () => {
      const model = build({
        services: [web],
        slices: [endpointSlice('web-empty', 'web', [], [])],
        ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))] })],
      });
      expect(model.backends[0]?.servers).to.deep.equal([]);
      expect(model.warnings).to.deep.equal([]);
    });

    it('warns once per Ingress about a shared backend without servers, at the first path asking for it', () => {
      const model = build({
        ingresses: [ingress('a', { rules: [rule('a.example.com', path('/', 'web', 80), path('/x', 'web', 80))] }), ingress('b', { rules: [rule('b.example.com', path('/', 'web', 80))] })],
      });
      expect(fields(model.warnings)).to.deep.equal(['Ingress default/a spec.rules[0].http.paths[0]', 'Ingress default/b spec.rules[0].http.paths[0]']);
    });
  });

  describe('conflicts', () => {
    it('gives a route claimed by two Ingresses to the older one and warns about the younger', () => {
      const model = build({
        services: [web, service('new', [{ name: 'http', port: 80 }])],
        slices: [webSlice],
        ingresses: [
          ingress('young', { created: '2024-06-01T00:00:00Z', rules: [rule('example.com', path('/api', 'new', 80))] }),
          ingress('old', { created: '2024-01-01T00:00:00Z', rules: [rule('example.com', path('/api', 'web', 80))] }),
        ],
      });
      expect(model.exactRoutes).to.deep.equal([{ key: 'example.com/api', backend: 'default_web_80', policy: undefined, settings: undefined }]);
      expect(model.prefixRoutes).to.deep.equal([{ key: 'example.com/api/', backend: 'default_web_80', policy: undefined, settings: undefined }]);
      // The losing backend is routed to by nothing, so it is not built.
      expect(model.backends.map((b) => b.name)).to.deep.equal(['default_web_80']);
      expect(model.warnings).to.deep.equal([
        {
          object: 'Ingress default/young',
          field: 'spec.rules[0].http.paths[0]',
          message: 'route "example.com/api" not served here: older Ingress default/old sends it to backend default_web_80',
        },
        {
          object: 'Ingress default/young',
          field: 'spec.rules[0].http.paths[0]',
          message: 'route "example.com/api/" not served here: older Ingress default/old sends it to backend default_web_80',
        },
      ]);
    });

    it('breaks an age tie by namespace then name, and ranks a missing timestamp newest', () => {
      const model = build({
        // Namespaces that share hosts: across them, routes are settled one by one.
        sharedHostNamespaces: ['*'],
        services: [web],
        slices: [webSlice],
        ingresses: [
          ingress('b', { rules: [rule('example.com', path('/b', 'web', 80, 'Exact'))] }),
          ingress('z', { namespace: 'alpha', rules: [rule('example.com', path('/z', 'web', 80, 'Exact'))] }),
          ingress('a', { rules: [rule('example.com', path('/a', 'web', 80, 'Exact'))] }),
          { ...ingress('undated', { rules: [rule('example.com', path('/u', 'web', 80, 'Exact'))] }), metadata: { name: 'undated', namespace: 'aaa' } },
        ].map((object, index) => {
          // Every Ingress claims the same route too; only the order decides who gets it.
          const spec = object['spec'] as { rules: { http: { paths: unknown[] } }[] };
          spec.rules[0]!.http.paths.push({ path: '/shared', pathType: 'Exact', backend: backend('web', 80 + index) });
          return object;
        }),
      });
      // alpha/z sorts before default/a and default/b; aaa/undated has no timestamp.
      expect(model.exactRoutes.find((route) => route.key === 'example.com/shared')).to.deep.equal({
        key: 'example.com/shared',
        backend: 'alpha_web_81',
        policy: undefined,
        settings: undefined,
      });
      expect(model.warnings.filter((w) => w.message.startsWith('route')).map((w) => w.object)).to.deep.equal(['Ingress aaa/undated', 'Ingress default/a', 'Ingress default/b']);
    });

    it('ranks an Exact path above the exact line of an older Prefix path, as Kubernetes does, without a warning', () => {
      const model = build({
        services: [web, service('login', [{ name: 'http', port: 80 }])],
        slices: [webSlice],
        ingresses: [
          ingress('old', { created: '2024-01-01T00:00:00Z', rules: [rule('example.com', path('/login', 'web', 80, 'Prefix'))] }),
          ingress('young', { created: '2024-06-01T00:00:00Z', rules: [rule('example.com', path('/login', 'login', 80, 'Exact'))] }),
        ],
      });
      expect(model.exactRoutes).to.deep.equal([{ key: 'example.com/login', backend: 'default_login_80', policy: undefined, settings: undefined }]);
      expect(model.prefixRoutes).to.deep.equal([{ key: 'example.com/login/', backend: 'default_web_80', policy: undefined, settings: undefined }]);
      expect(model.warnings.filter((w) => w.message.startsWith('route'))).to.deep.equal([]);
    });

    it('does not warn when two Ingresses send a route to the same backend, and keeps the earlier path within one Ingress', () => {
      const model = build({
        services: [web, service('other', [{ name: 'http', port: 80 }])],
        slices: [webSlice],
        ingresses: [
          ingress('a', { rules: [rule('example.com', path('/', 'web', 80))] }),
          ingress('b', { rules: [rule('example.com', path('/', 'web', 80))] }),
          ingress('c', { rules: [rule('c.example.com', path('/x', 'web', 80, 'Exact'), path('/x', 'other', 80, 'Exact'))] }),
        ],
      });
      expect(model.exactRoutes).to.deep.equal([{ key: 'c.example.com/x', backend: 'default_web_80', policy: undefined, settings: undefined }]);
      expect(model.warnings).to.deep.equal([
        {
          object: 'Ingress default/c',
          field: 'spec.rules[0].http.paths[1]',
          message: 'route "c.example.com/x" not served here: the earlier spec.rules[0].http.paths[0] sends it to backend default_web_80',
        },
      ]);
    });
  });

  describe('default backend', () => {
    it('takes spec.defaultBackend of the oldest Ingress that has one and warns about the others', () => {
      const model = build({
        services: [web, service('fallback', [{ name: 'http', port: 80 }])],
        slices: [webSlice],
        ingresses: [
          ingress('young', { created: '2024-06-01T00:00:00Z', defaultBackend: backend('web', 80) }),
          ingress('old', { created: '2024-01-01T00:00:00Z', defaultBackend: backend('fallback', 'http') }),
          ingress('oldest-without', { created: '2023-01-01T00:00:00Z', rules: [rule('example.com', path('/', 'web', 80))] }),
        ],
      });
      expect(model.defaultBackend).to.equal('default_fallback_80');
      expect(model.backends.map((b) => b.name)).to.deep.equal(['default_fallback_80', 'default_web_80']);
      expect(model.warnings).to.deep.include({
        object: 'Ingress default/young',
        field: 'spec.defaultBackend',
        message: 'not served: older Ingress default/old sets the default backend default_fallback_80',
      });
    });

    it('has no default backend when no Ingress sets one', () => {
      expect(build({ ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))] })] }).defaultBackend).to.equal(undefined);
    });
  });

  describe('tenant isolation of hosts', () => {
    const other = service('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'aaa');
    const otherSlice = endpointSlice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.9'] }], { namespace: 'aaa' });
    const shop = ingress('shop', {
      created: '2024-01-01T00:00:00Z',
      rules: [rule('shop.example.com', path('/', 'web', 80))],
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
    });
    const base = {
      services: [web, other],
      slices: [webSlice, otherSlice],
      secrets: [tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY), tlsSecret('evil-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY, 'aaa')],
    };

    it('keeps a host, its routes and its certificates with the namespace of the oldest Ingress claiming it', () => {
      const model = build({
        ...base,
        ingresses: [
          shop,
          // Newer, in another namespace: a TLS entry alone for the host (the certificate takeover)...
          ingress('evil', { namespace: 'aaa', created: '2024-02-01T00:00:00Z', tls: [{ hosts: ['shop.example.com'], secretName: 'evil-tls' }] }),
          // ...and a rule for a path the owner does not route.
          ingress('squat', { namespace: 'aaa', created: '2024-02-01T00:00:00Z', rules: [rule('shop.example.com', path('/admin', 'web', 80))] }),
        ],
      });
      expect(model.certificates.map((c) => [c.file, c.hosts])).to.deep.equal([['default_shop-tls.pem', ['shop.example.com']]]);
      expect(model.prefixRoutes.map((route) => [route.key, route.backend])).to.deep.equal([['shop.example.com/', 'default_web_80']]);
      expect(model.exactRoutes).to.deep.equal([]);
      expect(model.excluded).to.deep.equal([
        {
          object: 'Ingress aaa/evil',
          field: 'spec.tls[0].hosts[0]',
          message: 'host "shop.example.com" belongs to namespace default: older Ingress default/shop claims it; TLS entry not served for it',
        },
        { object: 'Ingress aaa/squat', field: 'spec.rules[0].host', message: 'host "shop.example.com" belongs to namespace default: older Ingress default/shop claims it; rule not served' },
      ]);
    });

    it('says which Ingresses it serves nothing of: left out by a problem, or refused the host of every route without a default backend', () => {
      const late = (name: string, given: Parameters<typeof ingress>[1]) => ingress(name, { namespace: 'aaa', created: '2024-02-01T00:00:00Z', ...given });
      const ingresses = [
        shop,
        // Refused its one host: nothing of it is served.
        late('squat', { rules: [rule('shop.example.com', path('/admin', 'web', 80))] }),
        // Refused one of two hosts: the other is served.
        late('half', { rules: [rule('shop.example.com', path('/', 'web', 80)), rule('half.example.com', path('/', 'web', 80))] }),
        // Refused its host, but its default backend stands.
        late('fallback', { rules: [rule('shop.example.com', path('/', 'web', 80))], defaultBackend: backend('web', 80) }),
        // A path no map line can hold: left out whole.
        late('evil', { rules: [rule('evil.example.com', path('/x"y', 'web', 80))] }),
        // Another controller's: not the model's to serve or leave out.
        late('theirs', { className: 'nginx', rules: [rule('shop.example.com', path('/', 'web', 80))] }),
      ];
      const cache = new MapModelCache();
      buildMapModel(sources({ ...base, ingresses }), cache);
      const names = () => [...cache.unserved].map((object) => `${object.metadata.namespace}/${object.metadata.name}`).sort();
      expect(names()).to.deep.equal(['aaa/evil', 'aaa/squat']);
      // The owner gone, squat is served; the set the last build made is not changed after.
      const before = cache.unserved;
      buildMapModel(sources({ ...base, ingresses: ingresses.slice(1) }), cache);
      expect(names()).to.deep.equal(['aaa/evil']);
      expect(before.size).to.equal(2);
      expect(new MapModelCache().unserved.size).to.equal(0);
    });

    it('gives the host to the next claimer when its owner goes, and lets allowed namespaces share it', () => {
      const evil = ingress('evil', { namespace: 'aaa', created: '2024-02-01T00:00:00Z', tls: [{ hosts: ['shop.example.com'], secretName: 'evil-tls' }] });
      const alone = build({ ...base, ingresses: [evil] });
      expect(alone.certificates.map((c) => c.file)).to.deep.equal(['aaa_evil-tls.pem']);
      expect(alone.excluded).to.deep.equal([]);
      const shared = build({ ...base, ingresses: [shop, evil], sharedHostNamespaces: ['aaa', 'default'] });
      expect(shared.certificates.map((c) => [c.file, c.hosts])).to.deep.equal([
        ['aaa_evil-tls.pem', ['shop.example.com']],
        ['default_shop-tls.pem', ['shop.example.com']],
      ]);
      // Sharing needs both namespaces on the list.
      const one = build({ ...base, ingresses: [shop, evil], sharedHostNamespaces: ['aaa'] });
      expect(one.certificates.map((c) => c.file)).to.deep.equal(['default_shop-tls.pem']);
    });

    it('serves a TLS entry without hosts for the hosts of its rules only, never for whatever names its certificate holds', () => {
      const model = build({
        ...base,
        ingresses: [
          ingress('shop', { rules: [rule('shop.example.com', path('/', 'web', 80)), rule(undefined, path('/x', 'web', 80))], tls: [{ secretName: 'shop-tls' }] }),
          ingress('bare', { namespace: 'aaa', created: '2024-02-01T00:00:00Z', tls: [{ secretName: 'evil-tls' }] }),
        ],
      });
      expect(model.certificates.map((c) => [c.file, c.hosts])).to.deep.equal([['default_shop-tls.pem', ['shop.example.com']]]);
      expect(fields(model.excluded)).to.deep.equal(['Ingress aaa/bare spec.tls[0].hosts']);
    });

    it('excludes the hosts another namespace holds from a wildcard certificate', () => {
      const wild = ingress('wild', { namespace: 'aaa', created: '2023-01-01T00:00:00Z', tls: [{ hosts: ['*.example.com'], secretName: 'evil-tls' }] });
      const model = build({ ...base, ingresses: [wild, shop, ingress('own', { namespace: 'aaa', rules: [rule('own.example.com', path('/', 'web', 80))] })] });
      expect(model.certificates.map((c) => [c.file, c.hosts, c.excludedHosts])).to.deep.equal([
        ['aaa_evil-tls.pem', ['*.example.com'], ['shop.example.com']],
        ['default_shop-tls.pem', ['shop.example.com'], []],
      ]);
    });

    it('splits the SNI names of a Secret over crt-list lines HAProxy can read', () => {
      const hosts = Array.from({ length: 400 }, (_, i) => `${'h'.repeat(60)}.${'a'.repeat(60)}.${'b'.repeat(60)}.h${String(i).padStart(3, '0')}.example.com`);
      const model = build({ ...base, ingresses: [ingress('many', { tls: [{ hosts, secretName: 'shop-tls' }] })] });
      expect(model.certificates.length).to.be.above(1);
      expect(new Set(model.certificates.map((c) => c.file))).to.deep.equal(new Set(['default_shop-tls.pem']));
      expect(model.certificates.flatMap((c) => c.hosts)).to.deep.equal([...hosts].sort());
      for (const line of model.certificates) {
        expect(line.hosts.join(' ').length).to.be.at.most(32_768);
        expect(line.hosts.length).to.be.at.most(1000);
      }
    });
  });

  describe('TLS', () => {
    it('turns a TLS Secret into a PEM file with the certificate, then the key, and the sorted SNI hosts', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        secrets: [tlsSecret('example-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
        ingresses: [
          ingress('web', {
            rules: [rule('example.com', path('/', 'web', 80))],
            tls: [{ hosts: ['www.example.com', 'Example.com', '*.example.com', 'example.com'], secretName: 'example-tls' }],
          }),
        ],
      });
      expect(model.certificates).to.have.length(1);
      const certificate = model.certificates[0]!;
      expect(certificate.file).to.equal('default_example-tls.pem');
      expect(certificate.secret).to.equal('default/example-tls');
      expect(certificate.hosts).to.deep.equal(['*.example.com', 'example.com', 'www.example.com']);
      expect(certificate.pem).to.match(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
      expect(certificate.pem).to.contain(SELF_SIGNED_CERT.trim());
      expect(model.excluded).to.deep.equal([]);
      expect(model.warnings).to.deep.equal([]);
    });

    it('keeps the chain in order', () => {
      const model = build({
        secrets: [tlsSecret('shop-tls', `${LEAF_CERT}\n${CA_CERT}`, LEAF_KEY, 'shop')],
        ingresses: [ingress('shop', { namespace: 'shop', tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] })],
      });
      const pem = model.certificates[0]!.pem;
      expect(pem.indexOf(LEAF_CERT.trim())).to.equal(0);
      expect(pem.indexOf(CA_CERT.trim())).to.be.greaterThan(0);
      expect(pem.match(/BEGIN CERTIFICATE/g)).to.have.length(2);
    });

    it('makes one certificate, with the union of hosts, of a Secret several Ingresses use', () => {
      const model = build({
        secrets: [tlsSecret('shared', SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
        ingresses: [
          ingress('a', { tls: [{ hosts: ['a.example.com', 'common.example.com'], secretName: 'shared' }] }),
          ingress('b', { tls: [{ hosts: ['b.example.com', 'common.example.com'], secretName: 'shared' }] }),
        ],
      });
      expect(model.certificates.map((c) => [c.file, c.hosts])).to.deep.equal([['default_shared.pem', ['a.example.com', 'b.example.com', 'common.example.com']]]);
    });

    it('warns about a missing Secret and leaves out the Secret whose certificate or key is bad, serving the routes', () => {
      const model = build({
        services: [web],
        slices: [webSlice],
        secrets: [
          tlsSecret('garbled', 'not a certificate', SELF_SIGNED_KEY),
          tlsSecret('mismatched', SELF_SIGNED_CERT, UNRELATED_KEY),
          tlsSecret('keyless', SELF_SIGNED_CERT, 'not a key'),
          { ...tlsSecret('not-base64', SELF_SIGNED_CERT, SELF_SIGNED_KEY), data: { 'tls.crt': '!!!', 'tls.key': 'x' } },
          tlsSecret('good', SELF_SIGNED_CERT, SELF_SIGNED_KEY),
        ],
        ingresses: [
          ingress('web', {
            rules: [rule('example.com', path('/', 'web', 80))],
            tls: ['absent', 'garbled', 'mismatched', 'keyless', 'not-base64', 'good'].map((secretName) => ({
              hosts: ['example.com'],
              secretName,
            })),
          }),
        ],
      });
      expect(model.certificates.map((c) => c.file)).to.deep.equal(['default_good.pem']);
      expect(model.exactRoutes).to.have.length(0);
      expect(model.prefixRoutes).to.have.length(1);
      expect(model.warnings).to.deep.equal([{ object: 'Ingress default/web', field: 'spec.tls[0].secretName', message: 'Secret default/absent not found; TLS entry not served' }]);
      expect(fields(model.excluded)).to.deep.equal([
        'Secret default/garbled data[tls.crt]',
        'Secret default/keyless data[tls.key]',
        'Secret default/mismatched data[tls.key]',
        'Secret default/not-base64 data[tls.crt]',
      ]);
      expect(model.excluded.find((p) => p.object === 'Secret default/mismatched')?.message).to.contain('does not match the certificate');
    });
  });

  describe('hostile values', () => {
    /** Something to find in the output if any part of a hostile value got through. */
    const MARK = 'pwned';

    interface Case {
      readonly what: string;
      readonly object: KubeObject;
      readonly field: string;
    }

    const hostCases = [
      `${MARK}.example.com\nbackend evil`,
      `${MARK}.example.com#comment`,
      `${MARK}.example.com other`,
      `"${MARK}.example.com"`,
      `'${MARK}.example.com'`,
      `${MARK}.example.com%[src]`,
      `{${MARK}}.example.com`,
      `${MARK}.ex\u212Aample.com`, // the Kelvin sign lowercases to 'k'
      `${MARK}.\u0435xample.com`, // Cyrillic 'e'
      `${MARK}.*.example.com`,
      `*.*.${MARK}.com`,
      `-${MARK}.example.com`,
      `${MARK}.example.com.`,
      `${MARK}..example.com`,
      `${MARK}${'a'.repeat(60)}.example.com`,
      `${MARK}.example.com:8080`,
      `${MARK}.example.com/path`,
      `${MARK}\u0000.example.com`,
    ].map((host): Case => ({ what: `host ${JSON.stringify(host)}`, object: ingress('hostile', { rules: [rule(host, path('/', 'web', 80))] }), field: 'spec.rules[0].host' }));

    const pathCases = [
      `/${MARK}\nbackend evil`,
      `/${MARK}\r`,
      `/${MARK}#x`,
      `/${MARK} x`,
      `/${MARK}\tx`,
      `/"${MARK}"`,
      `/'${MARK}'`,
      `/${MARK}%[src]`,
      `/${MARK}%zz`,
      `/${MARK}%`,
      `/{${MARK}}`,
      `/${MARK}\\x`,
      `/${MARK}$HOME`,
      `/${MARK}?q=1`,
      `/${MARK}\u00fc`,
      `/${MARK}\u2028x`,
      `${MARK}/relative`,
      `/${MARK}${'a'.repeat(1100)}`,
    ].map((p): Case => ({
      what: `path ${JSON.stringify(p.slice(0, 30))}`,
      object: ingress('hostile', { rules: [rule('example.com', path(p, 'web', 80, 'Exact'))] }),
      field: 'spec.rules[0].http.paths[0].path',
    }));

    const backendField = 'spec.rules[0].http.paths[0].backend.service';
    const serviceCases = [`${MARK}\nx`, `${MARK} x`, `${MARK}#`, `${MARK}_x`, `Web${MARK}`, `${MARK}%[src]`, `{${MARK}}`, `${MARK}.x`, 42].map((name): Case => ({
      what: `service name ${JSON.stringify(name)}`,
      object: ingress('hostile', { rules: [rule('example.com', path('/', name, 80))] }),
      field: `${backendField}.name`,
    }));
    const portNameCases = [`${MARK}\n`, 'ht tp', '%[src]', 'HTTP', '8080', 'a-very-long-port', 'http--x', '-http', 'h\u00e9'].map((name): Case => ({
      what: `port name ${JSON.stringify(name)}`,
      object: ingress('hostile', { rules: [rule('example.com', path('/', 'web', name))] }),
      field: `${backendField}.port.name`,
    }));
    const portNumberCases = [0, -1, 65536, 80.5, '80', Number.NaN].map((number): Case => ({
      what: `port number ${JSON.stringify(number)}`,
      object: ingress('hostile', { rules: [rule('example.com', { path: '/', pathType: 'Prefix', service: 'web', portSpec: { number } })] }),
      field: `${backendField}.port.number`,
    }));
    const otherCases: Case[] = [
      {
        what: 'both port name and number',
        object: ingress('hostile', { rules: [rule('example.com', { path: '/', service: 'web', portSpec: { name: 'http', number: 80 } })] }),
        field: `${backendField}.port`,
      },
      { what: 'a pathType of its own', object: ingress('hostile', { rules: [rule('example.com', path('/', 'web', 80, `Regex\n${MARK}`))] }), field: 'spec.rules[0].http.paths[0].pathType' },
      {
        what: 'a resource backend',
        object: ingress('hostile', { rules: [{ host: 'example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { resource: { kind: 'Bucket', name: MARK } } }] } }] }),
        field: 'spec.rules[0].http.paths[0].backend.resource',
      },
      { what: 'a namespace with a newline', object: ingress('hostile', { namespace: `${MARK}\nx`, rules: [rule('example.com', path('/', 'web', 80))] }), field: 'metadata.namespace' },
      { what: 'a default backend with a bad Service name', object: ingress('hostile', { defaultBackend: backend(`${MARK} x`, 80) }), field: 'spec.defaultBackend.service.name' },
      { what: 'rules that are not a list', object: ingress('hostile', { rules: `${MARK}` as unknown as unknown[] }), field: 'spec.rules' },
    ];

    for (const hostile of [...hostCases, ...pathCases, ...serviceCases, ...portNameCases, ...portNumberCases, ...otherCases]) {
      it(`leaves out the Ingress with ${hostile.what}, naming the field`, () => {
        const model = build({
          services: [web],
          slices: [webSlice],
          ingresses: [hostile.object, ingress('fine', { rules: [rule('fine.example.com', path('/', 'web', 80))] })],
        });
        expect(model.excluded).to.have.length(1);
        expect(model.excluded[0]!.field).to.equal(hostile.field);
        expect(model.excluded[0]!.object).to.match(/^Ingress /);
        // Reports stay one line of printable ASCII whatever they quote.
        expect(model.excluded[0]!.message).to.match(/^[\x20-\x7e]+$/);
        expect(model.excluded[0]!.object).to.match(/^[\x20-\x7e]+$/);
        expect(JSON.stringify(rendered(model))).to.not.contain(MARK);
        // The other Ingress is still served.
        expect(model.hosts).to.deep.equal([{ host: 'fine.example.com', wildcard: false }]);
        expect(model.backends.map((b) => b.name)).to.deep.equal(['default_web_80']);
      });
    }

    for (const secretName of [`${MARK}\nx`, `${MARK} x`, `${MARK}#`, `${MARK}_x`, `${MARK}/../x`, `Tls${MARK}`, `${MARK}%[src]`]) {
      it(`leaves out only the TLS entry with the Secret name ${JSON.stringify(secretName)}`, () => {
        const model = build({
          services: [web],
          slices: [webSlice],
          secrets: [tlsSecret(secretName, SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
          ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))], tls: [{ hosts: ['example.com'], secretName }] })],
        });
        expect(fields(model.excluded)).to.deep.equal(['Ingress default/web spec.tls[0].secretName']);
        expect(model.certificates).to.deep.equal([]);
        expect(model.prefixRoutes).to.have.length(1);
        expect(JSON.stringify(rendered(model))).to.not.contain(MARK);
      });
    }

    it('leaves out only the TLS entry with a bad SNI host', () => {
      const model = build({
        secrets: [tlsSecret('example-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY), tlsSecret('other-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
        ingresses: [
          ingress('web', {
            tls: [
              { hosts: ['example.com', `${MARK}.com\ncrt /etc/passwd`], secretName: 'example-tls' },
              { hosts: ['other.example.com'], secretName: 'other-tls' },
            ],
          }),
        ],
      });
      expect(fields(model.excluded)).to.deep.equal(['Ingress default/web spec.tls[0].hosts[1]']);
      expect(model.certificates.map((c) => c.file)).to.deep.equal(['default_other-tls.pem']);
      expect(JSON.stringify(rendered(model))).to.not.contain(MARK);
    });

    for (const address of [
      `10.0.0.1\nserver ${MARK}`,
      `10.0.0.1 ${MARK}`,
      `fe80::1%${MARK}`,
      `10.0.0.1#${MARK}`,
      `${MARK}.example.com`,
      `::1%[${MARK}]`,
      `10.0.0.${MARK}`,
      `\uff11.0.0.1${MARK}`,
    ]) {
      it(`leaves out the endpoint with the address ${JSON.stringify(address)}, naming the EndpointSlice`, () => {
        const model = build({
          services: [web],
          slices: [endpointSlice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2', address] }, { addresses: ['10.0.0.3'] }])],
          ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))] })],
        });
        expect(model.excluded).to.have.length(1);
        expect(model.excluded[0]).to.include({ object: 'EndpointSlice default/web-abc', field: 'endpoints[1].addresses[1]' });
        expect(model.excluded[0]!.message).to.match(/^[\x20-\x7e]+$/);
        // The whole endpoint goes, its valid address too; the other endpoints stay.
        expect(model.backends[0]?.servers.map((s) => s.address)).to.deep.equal(['10.0.0.1', '10.0.0.3']);
        expect(JSON.stringify(rendered(model))).to.not.contain(MARK);
      });
    }

    it('leaves out an EndpointSlice whose port or address type cannot be served', () => {
      const model = build({
        services: [web],
        slices: [
          endpointSlice('web-port', 'web', [{ name: 'http', port: `8080\n${MARK}` }], [{ addresses: ['10.0.0.1'] }]),
          endpointSlice('web-fqdn', 'web', [{ name: 'http', port: 8080 }], [{ addresses: [`${MARK}.example.com`] }], { addressType: 'FQDN' }),
          webSlice,
        ],
        ingresses: [ingress('web', { rules: [rule('example.com', path('/', 'web', 80))] })],
      });
      expect(fields(model.excluded)).to.deep.equal(['EndpointSlice default/web-fqdn addressType', 'EndpointSlice default/web-port ports[0].port']);
      expect(model.backends[0]?.servers.map((s) => s.name)).to.deep.equal(['srv-10.0.0.1-8080']);
      expect(JSON.stringify(rendered(model))).to.not.contain(MARK);
    });

    it('quotes an object name that is not a DNS name in reports', () => {
      const model = build({
        ingresses: [{ ...ingress('x', { rules: [rule(`bad host`, path('/', 'web', 80))] }), metadata: { name: `evil\nname`, namespace: 'default' } }],
      });
      expect(model.excluded[0]!.object).to.equal('Ingress default/"evil\\u000aname"');
    });

    it('reports every invalid field of an Ingress at once', () => {
      const model = build({
        ingresses: [ingress('web', { rules: [rule('example.com', path('/a b', 'web', 80), path('/ok', 'we b', 'ht tp'))] })],
      });
      expect(fields(model.excluded)).to.deep.equal([
        'Ingress default/web spec.rules[0].http.paths[0].path',
        'Ingress default/web spec.rules[0].http.paths[1].backend.service.name',
        'Ingress default/web spec.rules[0].http.paths[1].backend.service.port.name',
      ]);
    });
  });

  describe('determinism', () => {
    /** A small deterministic PRNG (mulberry32), so a failing order can be replayed. */
    function shuffled<T>(items: readonly T[], seed: number): T[] {
      let state = seed;
      const random = () => {
        state = (state + 0x6d2b79f5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy;
    }

    it('builds a deep-equal model from the same objects in any order', () => {
      const world = {
        services: [
          web,
          service(
            'api',
            [
              { name: 'grpc', port: 9000, targetPort: 'grpc' },
              { name: 'http', port: 80 },
            ],
            'shop',
          ),
        ],
        slices: [
          webSlice,
          endpointSlice('web-def', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.7'] }, { addresses: ['bad address'] }]),
          endpointSlice(
            'api-1',
            'api',
            [
              { name: 'grpc', port: 50051 },
              { name: 'http', port: 8080 },
            ],
            [{ addresses: ['10.1.0.1'] }, { addresses: ['10.1.0.2'], ready: false }],
            { namespace: 'shop' },
          ),
          endpointSlice(
            'api-2',
            'api',
            [
              { name: 'http', port: 8080 },
              { name: 'grpc', port: 50051 },
            ],
            [{ addresses: ['10.1.0.3'] }],
            { namespace: 'shop' },
          ),
        ],
        secrets: [tlsSecret('shop-tls', `${LEAF_CERT}${CA_CERT}`, LEAF_KEY, 'shop'), tlsSecret('web-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY)],
      };
      const ingresses = [
        ingress('web', { rules: [rule('example.com', path('/', 'web', 80), path('/api', 'web', 'http', 'Exact'))], tls: [{ hosts: ['example.com'], secretName: 'web-tls' }] }),
        ingress('web-copy', { rules: [rule('example.com', path('/', 'web', 'http'))], tls: [{ hosts: ['www.example.com'], secretName: 'web-tls' }] }),
        ingress('shop', {
          namespace: 'shop',
          created: '2023-05-05T00:00:00Z',
          defaultBackend: backend('api', 'http'),
          rules: [rule('shop.example.com', path('/grpc', 'api', 'grpc'), path('/', 'api', 80))],
          tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        }),
        ingress('late', {
          created: '2025-01-01T00:00:00Z',
          defaultBackend: backend('web', 80),
          rules: [rule('*.example.com', path('/', 'missing', 80)), rule(undefined, path('/', 'web', 80))],
        }),
        ingress('broken', { rules: [rule('bad host', path('/', 'web', 80))] }),
        ingress('undated', { rules: [rule('example.com', path('/api', 'missing', 80, 'Exact'))] }),
      ];
      const reference = build({ ...world, ingresses });
      expect(reference.excluded).to.have.length(2);
      expect(reference.warnings.length).to.be.greaterThan(2);
      for (let seed = 1; seed <= 20; seed++) {
        const model = build({
          services: shuffled(world.services, seed),
          slices: shuffled(world.slices, seed + 100),
          secrets: shuffled(world.secrets, seed + 200),
          ingresses: shuffled(ingresses, seed + 300),
        });
        expect(model, `seed ${seed}`).to.deep.equal(reference);
      }
    });
  });
});

describe('certificate file names', () => {
  it('keeps short names readable and shortens long ones uniquely below every file system limit', async () => {
    const { certificateFile } = await import('../../../lib/map-model/certificate-file.ts');
    expect(certificateFile('default', 'shop-tls')).to.equal('default_shop-tls.pem');
    const label = (c: string, n: number) => c.repeat(n);
    const long = [label('a', 63), label('b', 63), label('c', 63), label('d', 61)].join('.');
    const file = certificateFile(label('n', 63), long);
    expect(file.length).to.be.at.most(128);
    expect(file).to.match(/^n{63}_a+-[0-9a-f]{16}\.pem$/);
    expect(certificateFile(label('n', 63), `${long.slice(0, -1)}e`)).to.not.equal(file);
  });
});
