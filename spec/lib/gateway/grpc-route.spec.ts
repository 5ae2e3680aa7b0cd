import { expect } from 'chai';
import { GatewayApiMemo, readGatewayApi, type GatewayApiSources } from '../../../lib/gateway/gateway-api.ts';
import { readGrpcRoute } from '../../../lib/gateway/grpc-route.ts';
import { statusWrites } from '../../../lib/gateway/status-writer.ts';
import { translateHttpRoute } from '../../../lib/gateway/translate-http-route.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { inPrecedenceOrder } from '../../../lib/routing/precedence.ts';
import { gateway, grpcRoute, httpListener, httpRoute, referenceGrant, service, sources, toService } from './fixtures.ts';

const parentRefs = [{ name: 'gw', namespace: 'infra' }];
const services = [service('infra', 'grpc'), service('infra', 'grpc-v2')];

/** The model of a Gateway with one HTTP listener, these routes, and the two Services. */
const modelWith = (grpcRoutes: KubeObject[], routes: KubeObject[] = []) => readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], routes, grpcRoutes, services }));

/** The route's matches as it reads them: path, and the header matches. */
function matchesOf(object: KubeObject) {
  const read = readGrpcRoute(object);
  expect(read.problems).to.deep.equal([]);
  return read.route!.rules.flatMap((rule) => rule.matches.map((match) => ({ path: match.path, headers: match.headers })));
}

function problemsOf(spec: Record<string, unknown>) {
  return readGrpcRoute(grpcRoute('g', { parentRefs, ...spec })).problems.map((problem) => `${problem.field}: ${problem.message}`);
}

describe('GRPCRoute', () => {
  describe('matches, as the paths gRPC calls are (POST /<service>/<method>)', () => {
    it('reads a service and a method as an Exact path, a service alone as a prefix of its path element, no method match as every call', () => {
      const route = grpcRoute('g', {
        parentRefs,
        rules: [
          { matches: [{ method: { service: 'shop.v1.Cart', method: 'Add' } }, { method: { service: 'shop.v1.Cart' } }] },
          { matches: [{ headers: [{ name: 'X-Version', value: '2' }] }] },
          {},
        ],
      });
      expect(matchesOf(route)).to.deep.equal([
        { path: { kind: 'exact', value: '/shop.v1.Cart/Add' }, headers: [] },
        { path: { kind: 'prefix', value: '/shop.v1.Cart' }, headers: [] },
        { path: { kind: 'prefix', value: '/' }, headers: [{ name: 'x-version', kind: 'exact', value: '2' }] },
        { path: { kind: 'prefix', value: '/' }, headers: [] },
      ]);
    });

    it('reads a method of any service, and RegularExpression matches, as regular expressions over the whole path', () => {
      const route = grpcRoute('g', {
        parentRefs,
        rules: [
          {
            matches: [
              { method: { method: 'Check' } },
              { method: { type: 'RegularExpression', service: 'shop\\.v[0-9]+\\.Cart', method: 'Add|Remove' } },
              { method: { type: 'RegularExpression', method: 'Get.*' }, headers: [{ type: 'RegularExpression', name: 'tenant', value: 'a|b' }] },
            ],
          },
        ],
      });
      expect(matchesOf(route)).to.deep.equal([
        { path: { kind: 'regex', value: '/[^/]+/Check' }, headers: [] },
        { path: { kind: 'regex', value: '/(?:shop\\.v[0-9]+\\.Cart)/(?:Add|Remove)' }, headers: [] },
        { path: { kind: 'regex', value: '/(?:[^/]+)/(?:Get.*)' }, headers: [{ name: 'tenant', kind: 'regex', value: 'a|b' }] },
      ]);
    });

    it('refuses, by field, a method match naming nothing, Exact names gRPC does not allow, and filters a GRPCRoute has not', () => {
      expect(
        problemsOf({
          rules: [
            { matches: [{ method: { type: 'Exact' } }, { method: { service: 'shop/v1' } }, { method: { service: 'shop', method: 'a b' } }] },
            { filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'a.example' } }], backendRefs: [{ name: 'grpc', port: 8080 }] },
          ],
        }),
      ).to.deep.equal([
        'spec.rules[0].matches[0].method: names neither a service nor a method',
        'spec.rules[0].matches[1].method.service: "shop/v1" is not a gRPC service name (matching ^\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)',
        'spec.rules[0].matches[2].method.method: "a b" is not a gRPC method name (matching ^[A-Za-z_][A-Za-z_0-9]*$)',
        'spec.rules[1].filters[0].type: "URLRewrite" filters are not supported (RequestHeaderModifier, ResponseHeaderModifier, RequestMirror are)',
      ]);
    });

    it('reads header modifiers, mirrors and weighted backendRefs as an HTTPRoute does', () => {
      const read = readGrpcRoute(
        grpcRoute('g', {
          parentRefs,
          rules: [
            {
              filters: [
                { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-env', value: 'prod' }] } },
                { type: 'RequestMirror', requestMirror: { backendRef: { name: 'grpc-v2', port: 8080 } } },
              ],
              backendRefs: [
                { name: 'grpc', port: 8080, weight: 3 },
                { name: 'grpc-v2', port: 8080, weight: 1 },
              ],
            },
          ],
        }),
      );
      const rule = read.route!.rules[0]!;
      expect(rule.settings).to.deep.equal({
        requestHeaders: { set: [{ name: 'x-env', value: 'prod' }], add: [], remove: [] },
        mirrors: [{ namespace: 'infra', service: 'grpc-v2', port: 8080 }],
      });
      expect(rule.backends.map((backend) => [backend.reference.name, backend.weight])).to.deep.equal([
        ['grpc', 3],
        ['grpc-v2', 1],
      ]);
    });
  });

  describe('beside HTTPRoutes in the Gateway API model', () => {
    it('attaches to the listeners HTTPRoutes attach to, its records named after it, keyed apart from an HTTPRoute of the same name', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('web', { parentRefs, hostnames: ['shop.example'], rules: [toService('grpc')] })],
          grpcRoutes: [grpcRoute('web', { parentRefs, hostnames: ['api.example'], rules: [{ matches: [{ method: { service: 'shop.Cart', method: 'Add' } }], ...toService('grpc') }] })],
          services,
        }),
      );
      expect([...model.routes.keys()]).to.deep.equal(['infra/web', 'GRPCRoute infra/web']);
      const outcome = model.routes.get('GRPCRoute infra/web')!;
      expect(outcome.parents.map((parent) => parent.acceptance.accepted)).to.deep.equal([true]);
      expect(outcome.records.map((record) => [record.host.key, record.path.value, record.origin.kind, record.origin.field])).to.deep.equal([
        ['api.example', '/shop.Cart/Add', 'GRPCRoute', 'spec.rules[0].matches[0]'],
      ]);
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('http')).to.equal(2);
    });

    it('is not accepted by a listener that admits HTTPRoutes alone', () => {
      const listener = httpListener('http', { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } });
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [listener])], grpcRoutes: [grpcRoute('g', { parentRefs, rules: [toService('grpc')] })], services }));
      expect(model.routes.get('GRPCRoute infra/g')!.parents.map((parent) => parent.acceptance)).to.deep.equal([
        { accepted: false, reason: 'NotAllowedByListeners', message: 'no listener of Gateway infra/gw admits GRPCRoutes from namespace infra' },
      ]);
    });

    it('is translated with HTTP/2 in clear text to its backends, and its status is written to grpcroutes', () => {
      const model = modelWith([
        grpcRoute('g', {
          parentRefs,
          rules: [
            {
              backendRefs: [
                { name: 'grpc', port: 8080 },
                { name: 'missing', port: 8080 },
              ],
            },
          ],
        }),
      ]);
      const outcome = model.routes.get('GRPCRoute infra/g')!;
      const translated = translateHttpRoute(outcome);
      expect(translated.label).to.equal('GRPCRoute infra/g');
      expect(translated.served!.settings.backend).to.deep.equal({ protocol: { version: 'h2c', tls: false } });
      expect(translated.served!.routes[0]!.settings.unresolvedShare).to.deep.equal({ share: 1, of: 2, status: 503 });
      const writes = statusWrites({ model, controllerName: 'haproxy-template-ic.io/gateway-controller', addresses: [], deployment: 'deployed', now: 0 });
      const write = writes.find((candidate) => candidate.object === outcome.object)!;
      expect(write.resource).to.equal('grpcroutes');
      const conditions = (write.status['parents'] as { conditions: { type: string; status: string; reason: string }[] }[])[0]!.conditions;
      expect(conditions.map(({ type, status, reason }) => [type, status, reason])).to.deep.equal([
        ['Accepted', 'True', 'Accepted'],
        ['ResolvedRefs', 'False', 'BackendNotFound'],
      ]);
    });

    it('resolves a backendRef to another namespace with a ReferenceGrant from GRPCRoutes, not with one from HTTPRoutes alone', () => {
      const route = grpcRoute('g', { parentRefs, rules: [{ backendRefs: [{ name: 'web', namespace: 'apps', port: 8080 }] }] });
      const grantFrom = (kind: string) => referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind, namespace: 'infra' }], [{ group: '', kind: 'Service' }]);
      const unresolved = (grants: KubeObject[]) =>
        readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], grpcRoutes: [route], grants, services: [service('apps', 'web')] }))
          .routes.get('GRPCRoute infra/g')!
          .unresolved.map((fault) => `${fault.reason}: ${fault.message}`);
      expect(unresolved([grantFrom('HTTPRoute')])).to.deep.equal([
        'RefNotPermitted: spec.rules[0].backendRefs[0]: Service apps/web is in another namespace, and no ReferenceGrant there allows GRPCRoutes of infra to use it',
      ]);
      expect(unresolved([grantFrom('GRPCRoute')])).to.deep.equal([]);
    });

    it('ranks a service and method before a regular expression, and that before a service alone, the longer service first', () => {
      const model = modelWith([
        grpcRoute('g', {
          parentRefs,
          rules: [
            { matches: [{ method: { service: 'shop' } }, { method: { service: 'shop.v1' } }], ...toService('grpc') },
            { matches: [{ method: { type: 'RegularExpression', method: 'Get.*' } }, { method: { service: 'shop', method: 'Get' } }], ...toService('grpc') },
          ],
        }),
      ]);
      expect(inPrecedenceOrder(model.records).map((record) => `${record.path.kind} ${record.path.value}`)).to.deep.equal([
        'exact /shop/Get',
        'regex /(?:[^/]+)/(?:Get.*)',
        'prefix /shop.v1',
        'prefix /shop',
      ]);
    });
  });

  describe('sharing a hostname on a listener with an HTTPRoute (GRPCRouteSpec.Hostnames)', () => {
    const http = (hostnames: string[], created: string, name = 'web') => httpRoute(name, { parentRefs, hostnames, rules: [toService('grpc')] }, 'infra', created);
    const grpc = (hostnames: string[], created: string, name = 'api') => grpcRoute(name, { parentRefs, hostnames, rules: [toService('grpc')] }, 'infra', created);
    const read = (routes: KubeObject[], grpcRoutes: KubeObject[]) => modelWith(grpcRoutes, routes);
    const accepted = (model: ReturnType<typeof read>, key: string) => model.routes.get(key)!.parents.map((parent) => parent.acceptance.accepted);

    it('accepts the older of the two where their hostnames meet, the other not accepted there, with why, and without records', () => {
      const model = read([http(['shop.example'], '2026-01-01T00:00:00Z')], [grpc(['shop.example'], '2026-02-01T00:00:00Z')]);
      expect(accepted(model, 'infra/web')).to.deep.equal([true]);
      expect(model.routes.get('GRPCRoute infra/api')!.parents.map((parent) => parent.acceptance)).to.deep.equal([
        {
          accepted: false,
          reason: 'NotAllowedByListeners',
          message: 'listener http serves older HTTPRoute infra/web for hostname shop.example: of an HTTPRoute and a GRPCRoute sharing a hostname on a listener, one is accepted',
        },
      ]);
      expect(model.routes.get('GRPCRoute infra/api')!.records).to.deep.equal([]);
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('http')).to.equal(1);
    });

    it('lets a GRPCRoute keep a hostname an HTTPRoute asks for later, and a wildcard or no hostname meets every name below it', () => {
      expect(accepted(read([http(['shop.example'], '2026-02-01T00:00:00Z')], [grpc(['shop.example'], '2026-01-01T00:00:00Z')]), 'infra/web')).to.deep.equal([false]);
      expect(accepted(read([http(['*.example'], '2026-01-01T00:00:00Z')], [grpc(['api.shop.example'], '2026-02-01T00:00:00Z')]), 'GRPCRoute infra/api')).to.deep.equal([false]);
      expect(accepted(read([http(['a.example'], '2026-01-01T00:00:00Z')], [grpc([], '2026-02-01T00:00:00Z')]), 'GRPCRoute infra/api')).to.deep.equal([false]);
      expect(accepted(read([http(['a.example'], '2026-01-01T00:00:00Z')], [grpc(['b.example'], '2026-02-01T00:00:00Z')]), 'GRPCRoute infra/api')).to.deep.equal([true]);
    });

    it('settles a tie of creation times by "{namespace}/{name}"', () => {
      const model = read([http(['shop.example'], '2026-01-01T00:00:00Z', 'b')], [grpc(['shop.example'], '2026-01-01T00:00:00Z', 'a')]);
      expect([accepted(model, 'infra/b'), accepted(model, 'GRPCRoute infra/a')]).to.deep.equal([[false], [true]]);
    });

    it('gives a memo read after either route changed what a fresh read gives', () => {
      const memo = new GatewayApiMemo();
      const grpcRoutes = [grpc(['shop.example'], '2026-02-01T00:00:00Z')];
      const withHttp = (route: KubeObject): GatewayApiSources => ({ ...sources({ gateways: [gateway('gw', [httpListener()])], routes: [route], grpcRoutes, services }), context: ['same'] });
      readGatewayApi(withHttp(http(['shop.example'], '2026-01-01T00:00:00Z')), memo);
      // The HTTPRoute replaced by one of other rules, on the same hostname: patched in place, the GRPCRoute still refused.
      const other = httpRoute('web', { parentRefs, hostnames: ['shop.example'], rules: [toService('grpc-v2')] }, 'infra', '2026-01-01T00:00:00Z');
      const patched = readGatewayApi(withHttp(other), memo);
      expect(patched.routes.get('infra/web')!.records[0]!.backends[0]!.service).to.equal('grpc-v2');
      expect(accepted(patched, 'GRPCRoute infra/api')).to.deep.equal([false]);
      expect(accepted(readGatewayApi(withHttp(http(['other.example'], '2026-01-01T00:00:00Z')), memo), 'GRPCRoute infra/api')).to.deep.equal([true]);
      const fresh = readGatewayApi({ ...withHttp(other), context: undefined });
      expect(accepted(fresh, 'GRPCRoute infra/api')).to.deep.equal([false]);
    });
  });
});
