import { expect } from 'chai';
import { readGateway } from '../../../lib/gateway/gateway.ts';
import { readHttpRoute } from '../../../lib/gateway/http-route.ts';
import { readReferenceGrants } from '../../../lib/gateway/reference-grants.ts';
import { gateway, httpListener, httpRoute, referenceGrant } from './fixtures.ts';

const parentRefs = [{ name: 'gw' }];
const fields = (read: { problems: readonly { field: string }[] }) => read.problems.map((problem) => problem.field);

describe('readHttpRoute', () => {
  it('reads the defaults the CRD gives: a PathPrefix "/" match, weight 1, Gateway parents in its namespace', () => {
    const read = readHttpRoute(httpRoute('r', { parentRefs, rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] }));
    expect(read.problems).to.deep.equal([]);
    const route = read.route!;
    expect(route.parents[0]).to.include({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw', sectionName: undefined, port: undefined });
    expect(route.rules[0]!.matches).to.deep.equal([{ path: { kind: 'prefix', value: '/' }, headers: [], query: [], method: undefined }]);
    expect(route.rules[0]!.backends[0]).to.deep.include({
      weight: 1,
      reference: { group: '', kind: 'Service', namespace: 'infra', name: 'web', port: 80, field: 'spec.rules[0].backendRefs[0]' },
    });
  });

  it('refuses every value that could leave its place in HAProxy, naming the field, and keeps the parents for status', () => {
    const read = readHttpRoute(
      httpRoute('evil', {
        parentRefs,
        hostnames: ['a.example.com\nbind :1'],
        rules: [
          {
            matches: [
              { path: { type: 'Exact', value: '/a b' } },
              { path: { type: 'PathPrefix', value: '/a//b' } },
              { path: { type: 'RegularExpression', value: "/a'" } },
              { headers: [{ name: 'X-A', value: 'v\r\nX-Injected: 1' }], queryParams: [{ name: 'q', value: 'a b' }], method: 'BREW' },
            ],
            filters: [
              { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: 'a"b' }], add: [{ name: 'X B', value: 'c' }], remove: ['#x'] } },
              { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-C', value: '${HOME}' }] } },
            ],
            backendRefs: [{ name: 'Web_Service', port: 70000, weight: -1 }],
            timeouts: { request: '1 day' },
          },
        ],
      }),
    );
    expect(read.route).to.equal(undefined);
    expect(read.parents).to.have.length(1);
    expect(fields(read)).to.have.members([
      'spec.hostnames[0]',
      'spec.rules[0].matches[0].path.value',
      'spec.rules[0].matches[1].path.value',
      'spec.rules[0].matches[2].path.value',
      'spec.rules[0].matches[3].headers[0].value',
      'spec.rules[0].matches[3].queryParams[0].value',
      'spec.rules[0].matches[3].method',
      'spec.rules[0].filters[0].requestHeaderModifier.set[0].value',
      'spec.rules[0].filters[0].requestHeaderModifier.add[0].name',
      'spec.rules[0].filters[0].requestHeaderModifier.remove[0]',
      'spec.rules[0].filters[1].responseHeaderModifier.set[0].value',
      'spec.rules[0].backendRefs[0].name',
      'spec.rules[0].backendRefs[0].port',
      'spec.rules[0].backendRefs[0].weight',
      'spec.rules[0].timeouts.request',
    ]);
    // Messages stay one readable line however hostile the value.
    for (const problem of read.problems) expect(problem.message).to.not.match(/[\r\n]/);
  });

  it('refuses ReplacePrefixMatch on a rule with a match that is not a prefix, and a filter given twice', () => {
    const read = readHttpRoute(
      httpRoute('r', {
        parentRefs,
        rules: [
          {
            matches: [{ path: { type: 'Exact', value: '/a' } }],
            filters: [
              { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/b' } } },
              { type: 'URLRewrite', urlRewrite: { hostname: 'x.example.com' } },
            ],
          },
        ],
      }),
    );
    expect(fields(read)).to.deep.equal(['spec.rules[0].filters[0].urlRewrite.path.type', 'spec.rules[0].filters[1].type']);
  });

  it('reads a mirror fraction as a percentage, and lowercases header names but not query parameter names', () => {
    const read = readHttpRoute(
      httpRoute('r', {
        parentRefs,
        rules: [
          {
            matches: [{ headers: [{ name: 'X-Env', type: 'RegularExpression', value: '^(prod|stage)$' }], queryParams: [{ name: 'Debug', value: 'on' }] }],
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 80 }, fraction: { numerator: 1, denominator: 4 } } }],
          },
        ],
      }),
    );
    const rule = read.route!.rules[0]!;
    expect(rule.matches[0]!.headers).to.deep.equal([{ name: 'x-env', kind: 'regex', value: '^(prod|stage)$' }]);
    expect(rule.matches[0]!.query).to.deep.equal([{ name: 'Debug', kind: 'exact', value: 'on' }]);
    expect(rule.settings.mirrors).to.deep.equal([{ namespace: 'infra', service: 'shadow', port: 80, percent: 25 }]);
  });
});

describe('readHttpRoute ExternalAuth', () => {
  const withAuth = (externalAuth: Record<string, unknown>, where: 'rule' | 'backend' = 'rule') => {
    const filters = [{ type: 'ExternalAuth', externalAuth }];
    return readHttpRoute(
      httpRoute('r', { parentRefs, rules: [where === 'rule' ? { filters, backendRefs: [{ name: 'web', port: 80 }] } : { backendRefs: [{ name: 'web', port: 80, filters }] }] }),
    );
  };

  it('reads an HTTP filter: its Service port, path prefix and header names (lowercased)', () => {
    const read = withAuth({
      protocol: 'HTTP',
      backendRef: { name: 'auth', port: 4180 },
      http: { path: '/oauth2/auth', allowedHeaders: ['Cookie'], allowedResponseHeaders: ['X-Auth-Request-User'] },
      forwardBody: { maxSize: 0 },
    });
    expect(read.problems).to.deep.equal([]);
    const rule = read.route!.rules[0]!;
    expect(rule.settings.gatewayExternalAuth).to.deep.equal({
      namespace: 'infra',
      service: 'auth',
      port: 4180,
      path: '/oauth2/auth',
      allowedHeaders: ['cookie'],
      allowedResponseHeaders: ['x-auth-request-user'],
    });
    expect(rule.authService).to.include({ namespace: 'infra', name: 'auth', port: 4180, field: 'spec.rules[0].filters[0].externalAuth.backendRef' });
    expect(withAuth({ protocol: 'HTTP', backendRef: { name: 'auth', port: 80 } }).route!.rules[0]!.settings.gatewayExternalAuth).to.include({ path: '' });
  });

  it('refuses GRPC, a forwarded body, a path or header name that could leave its place, and the filter on a backendRef, naming the field', () => {
    expect(fields(withAuth({ protocol: 'GRPC', backendRef: { name: 'auth', port: 80 } }))).to.deep.equal(['spec.rules[0].filters[0].externalAuth.protocol']);
    expect(fields(withAuth({ protocol: 'HTTP', backendRef: { name: 'auth', port: 80 }, forwardBody: { maxSize: 1024 } }))).to.deep.equal([
      'spec.rules[0].filters[0].externalAuth.forwardBody.maxSize',
    ]);
    expect(fields(withAuth({ protocol: 'HTTP', backendRef: { name: 'auth', port: 80 }, http: { path: '/a b', allowedHeaders: ['x y'] } }))).to.deep.equal([
      'spec.rules[0].filters[0].externalAuth.http.path',
      'spec.rules[0].filters[0].externalAuth.http.allowedHeaders[0]',
    ]);
    expect(fields(withAuth({ protocol: 'HTTP' }))).to.deep.equal(['spec.rules[0].filters[0].externalAuth.backendRef']);
    expect(fields(withAuth({ protocol: 'HTTP', backendRef: { name: 'auth', port: 80 } }, 'backend'))).to.deep.equal(['spec.rules[0].backendRefs[0].filters']);
  });
});

describe('readHttpRoute CORS', () => {
  const withCors = (cors: Record<string, unknown>, where: 'rule' | 'backend' = 'rule') => {
    const filters = [{ type: 'CORS', cors }];
    return readHttpRoute(
      httpRoute('r', { parentRefs, rules: [where === 'rule' ? { filters, backendRefs: [{ name: 'web', port: 80 }] } : { backendRefs: [{ name: 'web', port: 80, filters }] }] }),
    );
  };

  it('reads every field: exact origins with and without their default port, a wildcard origin as any number of labels, maxAge 5 by default', () => {
    const read = withCors({
      allowOrigins: ['https://www.foo.com', 'https://*.Bar.com', 'http://app.example.com:8080', 'https://*:8443'],
      allowMethods: ['GET', 'OPTIONS'],
      allowHeaders: ['X-Header-1'],
      exposeHeaders: ['x-header-3'],
      allowCredentials: true,
    });
    expect(read.problems).to.deep.equal([]);
    const cors = read.route!.rules[0]!.settings.cors!;
    expect(cors).to.deep.equal({
      allowOrigins: ['https://www.foo.com', 'https://www.foo.com:443', 'http://app.example.com:8080'],
      allowOriginPatterns: ['^https://([A-Za-z0-9-]+\\.)+bar\\.com(:443)?$', '^https://[A-Za-z0-9.-]+:8443$'],
      allowMethods: ['GET', 'OPTIONS'],
      allowHeaders: ['x-header-1'],
      exposeHeaders: ['x-header-3'],
      allowCredentials: true,
      echoWildcards: true,
      maxAge: 5,
      respondToPreflight: true,
    });
    const pattern = new RegExp(cors.allowOriginPatterns![0]!);
    expect(['https://www.bar.com', 'https://xpto.www.bar.com', 'https://www.bar.com:443'].every((origin) => pattern.test(origin))).to.equal(true);
    expect(['https://bar.com', 'https://www.bar.com:8443', 'http://www.bar.com', 'https://www.bar.com.evil.org'].some((origin) => pattern.test(origin))).to.equal(false);
  });

  it('echoes wildcards only with credentials, and reads the filter of a backendRef too', () => {
    expect(withCors({ allowOrigins: ['*'], allowMethods: ['*'], maxAge: 60 }).route!.rules[0]!.settings.cors).to.deep.equal({
      allowOrigins: ['*'],
      allowMethods: ['*'],
      allowHeaders: [],
      allowCredentials: false,
      maxAge: 60,
      respondToPreflight: true,
    });
    const backend = withCors({ allowOrigins: ['https://a.example'] }, 'backend');
    expect(backend.problems).to.deep.equal([]);
    expect(backend.route!.rules[0]!.backends[0]!.settings.cors).to.include({ allowCredentials: false, maxAge: 5 });
  });

  it('refuses an origin that is not one, a wildcard beside other values, an unknown method, a bad header name and maxAge 0, naming the field', () => {
    expect(
      fields(
        withCors({
          allowOrigins: ['ftp://a.example', 'https://a.*.example', 'https://a.example/path', 'https://a.example:70000'],
          allowMethods: ['*', 'GET'],
          allowHeaders: ['x y'],
          exposeHeaders: ['*', 'x-a'],
          allowCredentials: 'yes',
          maxAge: 0,
        }),
      ),
    ).to.deep.equal([
      'spec.rules[0].filters[0].cors.allowOrigins[0]',
      'spec.rules[0].filters[0].cors.allowOrigins[1]',
      'spec.rules[0].filters[0].cors.allowOrigins[2]',
      'spec.rules[0].filters[0].cors.allowOrigins[3]',
      'spec.rules[0].filters[0].cors.allowMethods[0]',
      'spec.rules[0].filters[0].cors.allowHeaders[0]',
      'spec.rules[0].filters[0].cors.exposeHeaders[0]',
      'spec.rules[0].filters[0].cors.allowCredentials',
      'spec.rules[0].filters[0].cors.maxAge',
    ]);
    expect(fields(withCors({ allowMethods: ['get'] }))).to.deep.equal(['spec.rules[0].filters[0].cors.allowMethods[0]']);
    expect(fields(readHttpRoute(httpRoute('r', { parentRefs, rules: [{ filters: [{ type: 'CORS' }] }] })))).to.deep.equal(['spec.rules[0].filters[0].cors']);
  });
});

describe('readGateway', () => {
  it('reads listeners with their defaults: routes from the same namespace, HTTPRoute kinds', () => {
    const read = readGateway(gateway('gw', [httpListener()]));
    expect(read.problems).to.deep.equal([]);
    expect(read.gateway!.listeners[0]).to.deep.include({ name: 'http', port: 80, protocol: 'HTTP', hostname: undefined, faults: [], namespaces: { from: 'Same', selector: undefined } });
  });

  it('leaves out a Gateway it cannot read at all, naming the fields', () => {
    const read = readGateway(gateway('gw', [httpListener('a', { port: 0 }), httpListener('a')]));
    expect(read.gateway).to.equal(undefined);
    expect(fields(read)).to.deep.equal(['spec.listeners[0].port']);
    const twice = readGateway(gateway('gw', [httpListener('a'), httpListener('a', { port: 81 })]));
    expect(fields(twice)).to.deep.equal(['spec.listeners[1].name']);
  });

  it('refuses a namespace selector Kubernetes would not take', () => {
    const selector = {
      namespaces: {
        from: 'Selector',
        selector: {
          matchExpressions: [
            { key: 'team', operator: 'Within', values: ['a'] },
            { key: 'x', operator: 'Exists', values: ['a'] },
          ],
        },
      },
    };
    const read = readGateway(gateway('gw', [httpListener('http', { allowedRoutes: selector })]));
    expect(fields(read)).to.deep.equal([
      'spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].operator',
      'spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[1].values',
    ]);
  });

  it('marks route kinds it does not serve, keeping the ones it does', () => {
    const read = readGateway(gateway('gw', [httpListener('http', { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'TCPRoute' }] } })]));
    const listener = read.gateway!.listeners[0]!;
    expect(listener.kinds).to.deep.equal([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
    expect(listener.faults[0]).to.include({ condition: 'ResolvedRefs', reason: 'InvalidRouteKinds' });
  });
});

describe('readReferenceGrants', () => {
  const from = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }];
  const to = (name?: string) => [{ group: '', kind: 'Service', ...(name ? { name } : {}) }];
  const route = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' };
  const target = (name: string, namespace = 'infra') => ({ group: '', kind: 'Service', namespace, name });

  it('permits the same namespace always, and across namespaces what a grant in the target namespace names', () => {
    const grants = readReferenceGrants([referenceGrant('infra', from, to('web'))]);
    expect(grants.permits(route, target('anything', 'apps'))).to.equal(true);
    expect(grants.permits(route, target('web'))).to.equal(true);
    expect(grants.permits(route, target('db'))).to.equal(false);
    expect(grants.permits({ ...route, namespace: 'other' }, target('web'))).to.equal(false);
    expect(grants.permits({ ...route, kind: 'GRPCRoute' }, target('web'))).to.equal(false);
    // A grant in the route's own namespace grants nothing.
    expect(readReferenceGrants([referenceGrant('apps', from, to())]).permits(route, target('web'))).to.equal(false);
  });

  it('leaves out a malformed grant, which then grants nothing', () => {
    const grants = readReferenceGrants([referenceGrant('infra', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }], to())]);
    expect(grants.problems.map((problem) => problem.field)).to.deep.equal(['spec.from[0].namespace']);
    expect(grants.permits(route, target('web'))).to.equal(false);
  });
});
