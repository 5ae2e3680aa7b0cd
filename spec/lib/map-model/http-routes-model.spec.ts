import { expect } from 'chai';
import { readGatewayApi } from '../../../lib/gateway/gateway-api.ts';
import type { MapModel, MapModelSources } from '../../../lib/map-model/types.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { routedObjects } from '../../../lib/routing-view/model-sources.ts';
import { mulberry32 } from '../../support/fuzz-values.ts';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { mapModelSources } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { gateway, gatewayClass, httpListener, httpRoute, sources as gatewaySources } from '../gateway/fixtures.ts';
import { endpointSlice, ingress, path, rule, service, sources, tlsSecret } from '../ingress/fixtures.ts';
import { base64, CA_CERT, LEAF_CERT, LEAF_KEY } from '../../support/tls-fixture.ts';

/**
 * HTTPRoutes in the one routing model: their records become the same host
 * map, path map lines, backends and route policies as Ingress rules.
 */

const ALL_NAMESPACES = { allowedRoutes: { namespaces: { from: 'All' } } };

interface World {
  readonly ingresses?: readonly KubeObject[];
  readonly routes?: readonly KubeObject[];
  readonly gateways?: readonly KubeObject[];
  readonly services?: readonly KubeObject[];
  readonly sharing?: readonly string[];
}

const web = service('web', [{ name: 'http', port: 8080 }], 'infra');
const api = service('api', [{ port: 9090 }], 'infra');
const slices = [
  endpointSlice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'], ready: true }], { namespace: 'infra' }),
  endpointSlice('api-1', 'api', [{ port: 9090 }], [{ addresses: ['10.0.0.2'], ready: true }], { namespace: 'infra' }),
];

function worldSources(world: World): MapModelSources {
  const services = world.services ?? [web, api];
  const model = readGatewayApi(
    gatewaySources({
      classes: [gatewayClass()],
      gateways: world.gateways ?? [gateway('gw', [httpListener('http', ALL_NAMESPACES)])],
      routes: world.routes ?? [],
      services,
    }),
  );
  return { ...sources({ ingresses: world.ingresses ?? [], services, slices, ...(world.sharing ? { sharedHostNamespaces: world.sharing } : {}) }), ...routedObjects(model) };
}

const build = (world: World) => buildMapModel(worldSources(world));

const lines = (model: MapModel) => ({
  hosts: model.hosts.map((host) => host.host),
  exact: model.exactRoutes.map((route) => `${route.key} ${route.backend}${route.policy ? ':policy' : ''}`),
  prefix: model.prefixRoutes.map((route) => `${route.key} ${route.backend}${route.policy ? ':policy' : ''}`),
});

const match = (type: string, value: string) => ({ path: { type, value } });
const secret = tlsSecret('secure-tls', LEAF_CERT, LEAF_KEY, 'infra');
/** An HTTPS listener on 443 with the Secret secure-tls, admitting routes from every namespace. */
const https = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  port: 443,
  protocol: 'HTTPS',
  tls: { mode: 'Terminate', certificateRefs: [{ name: 'secure-tls' }] },
  ...ALL_NAMESPACES,
  ...extra,
});
const parent = { parentRefs: [{ name: 'gw' }] };

describe('HTTPRoutes in the Ingress view model', () => {
  it('serves Exact and PathPrefix matches as exact and prefix lines to the backend an Ingress would name', () => {
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('Exact', '/health')], backendRefs: [{ name: 'api', port: 9090 }] },
        { matches: [match('PathPrefix', '/static/')], backendRefs: [{ name: 'web', port: 8080 }] },
        { backendRefs: [{ name: 'web', port: 8080 }] },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model)).to.deep.equal({
      hosts: ['shop.example.com'],
      exact: ['shop.example.com/health infra_api_9090', 'shop.example.com/static infra_web_8080'],
      prefix: ['shop.example.com/static/ infra_web_8080', 'shop.example.com/ infra_web_8080'],
    });
    expect(model.backends.map((backend) => [backend.name, backend.servers.map((server) => server.address)])).to.deep.equal([
      ['infra_api_9090', ['10.0.0.2']],
      ['infra_web_8080', ['10.0.0.1']],
    ]);
    expect(model.excluded).to.deep.equal([]);
    expect(model.warnings).to.deep.equal([]);
  });

  it('serves a RegularExpression path as a whole-path, case-sensitive line of the regex map under its host key', () => {
    const route = httpRoute('items', {
      ...parent,
      hostnames: ['*.example.com'],
      rules: [{ matches: [match('RegularExpression', '/items/[0-9]+')], backendRefs: [{ name: 'api', port: 9090 }] }],
    });
    const model = build({ routes: [route] });
    expect(model.regexRoutes.map((line) => `${line.key} ${line.backend}`)).to.deep.equal(['^\\*\\.example\\.com(?:/items/[0-9]+)$ infra_api_9090']);
    const pattern = new RegExp(model.regexRoutes[0]!.key);
    expect(['*.example.com/items/12', '*.example.com/items/12/x', '*.example.com/ITEMS/12', 'a.example.com/items/12'].map((candidate) => pattern.test(candidate))).to.deep.equal([
      true,
      false,
      false,
      false,
    ]);
  });

  it('shares one backend with an Ingress naming the same Service port by name', () => {
    const route = httpRoute('shop', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] });
    const byName = ingress('blog', { namespace: 'infra', rules: [rule('blog.example.com', path('/', 'web', 'http'))] });
    const model = build({ routes: [route], ingresses: [byName] });
    expect(model.backends.map((backend) => backend.name)).to.deep.equal(['infra_web_8080']);
    expect(lines(model).prefix).to.have.members(['shop.example.com/ infra_web_8080', 'blog.example.com/ infra_web_8080']);
  });

  it('serves filters as route policies, and a redirect without a backend', () => {
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        {
          matches: [match('PathPrefix', '/api')],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Tenant', value: 'acme' }] } }],
          backendRefs: [{ name: 'api', port: 9090 }],
        },
        { matches: [match('PathPrefix', '/old')], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'new.example.com', statusCode: 301 } }] },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/api/ infra_api_9090:policy', 'shop.example.com/old/ :policy']);
    expect(model.policies.map((policy) => ({ set: policy.requestHeaders?.set, redirect: policy.redirect }))).to.have.deep.members([
      {
        set: undefined,
        redirect: {
          code: 301,
          prefix: {
            host: 'new.example.com',
            locations: [
              { scheme: 'http', port: undefined, plainOnly: true, tlsOnly: false },
              { scheme: 'https', port: undefined, plainOnly: false, tlsOnly: true },
            ],
          },
        },
      },
      { set: [{ name: 'X-Tenant', value: 'acme' }], redirect: undefined },
    ]);
    expect(model.backends.map((backend) => backend.name)).to.deep.equal(['infra_api_9090']);
  });

  it("serves a RequestRedirect's path as replace-path pairs before a prefix redirect, the prefix one in a policy of its own path", () => {
    const redirectTo = (modifier: unknown) => ({ type: 'RequestRedirect', requestRedirect: { statusCode: 301, path: modifier } });
    const route = httpRoute('moved', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('PathPrefix', '/old')], filters: [redirectTo({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' })] },
        { matches: [match('PathPrefix', '/gone')], filters: [redirectTo({ type: 'ReplaceFullPath', replaceFullPath: '/here' })] },
      ],
    });
    const model = build({ routes: [route] });
    const policyOf = (key: string) => model.policies.find((policy) => policy.key === model.prefixRoutes.find((line) => line.key === key)!.policy)!;
    expect(policyOf('shop.example.com/old/')).to.deep.include({
      redirect: {
        code: 301,
        prefix: {
          host: undefined,
          locations: [
            { scheme: 'http', port: undefined, plainOnly: true, tlsOnly: false },
            { scheme: 'https', port: undefined, plainOnly: false, tlsOnly: true },
          ],
        },
      },
      redirectRewrites: [{ pattern: '^/old(/.*)?$', replacement: '/new\\1' }],
    });
    expect(policyOf('shop.example.com/gone/').redirectRewrites).to.deep.equal([{ pattern: '^.*$', replacement: '/here' }]);
    expect(model.warnings).to.deep.equal([]);
  });

  it('serves timeouts.backendRequest as a server timeout its policy sets (0: the longest HAProxy has), which every backend then applies; timeouts.request alone too', () => {
    const route = httpRoute('slow', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('PathPrefix', '/a')], timeouts: { backendRequest: '1500ms' }, backendRefs: [{ name: 'web', port: 8080 }] },
        { matches: [match('PathPrefix', '/b')], timeouts: { request: '2s' }, backendRefs: [{ name: 'web', port: 8080 }] },
        { matches: [match('PathPrefix', '/c')], timeouts: { backendRequest: '0s' }, backendRefs: [{ name: 'web', port: 8080 }] },
        { matches: [match('PathPrefix', '/d')], timeouts: { request: '0s' }, backendRefs: [{ name: 'web', port: 8080 }] },
        { matches: [match('PathPrefix', '/e')], timeouts: { request: '3s', backendRequest: '1s' }, backendRefs: [{ name: 'web', port: 8080 }] },
      ],
    });
    expect(build({ routes: [] }).serverTimeouts).to.equal(false);
    const model = build({ routes: [route] });
    expect(model.serverTimeouts).to.equal(true);
    // A request timeout of 0 asks for no deadline, which HAProxy sets none of: its policy sets nothing.
    // 0 (no limit) is the longest timeout HAProxy has, as the specification says of one that cannot be disabled.
    // A request timeout alone bounds the wait for the server's answer: HAProxy's closest to a deadline to respond;
    // with a backendRequest, which is no longer, the backendRequest does.
    expect(model.policies.map((policy) => policy.serverTimeout?.milliseconds).sort((a, b) => (a ?? Infinity) - (b ?? Infinity))).to.deep.equal([1000, 1500, 2000, 2_147_483_647, undefined]);
    expect(lines(model).prefix).to.deep.equal([
      'shop.example.com/a/ infra_web_8080:policy',
      'shop.example.com/b/ infra_web_8080:policy',
      'shop.example.com/c/ infra_web_8080:policy',
      'shop.example.com/d/ infra_web_8080:policy',
      'shop.example.com/e/ infra_web_8080:policy',
    ]);
    expect(model.warnings).to.deep.equal([]);
  });

  it('serves a CORS filter as its policy\'s CORS rule: wildcards answered "*" without credentials, echoed with them, and wildcard origins as patterns', () => {
    const cors = (prefix: string, filter: Record<string, unknown>) => ({
      matches: [match('PathPrefix', prefix)],
      filters: [{ type: 'CORS', cors: filter }],
      backendRefs: [{ name: 'web', port: 8080 }],
    });
    const route = httpRoute('cors', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        cors('/open', { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], exposeHeaders: ['*'] }),
        cors('/credentialed', { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], exposeHeaders: ['*'], allowCredentials: true }),
        cors('/listed', { allowOrigins: ['https://a.example', 'https://*.b.example'], allowMethods: ['GET'], exposeHeaders: ['x-a', 'x-b'], maxAge: 60 }),
      ],
    });
    const model = build({ routes: [route] });
    expect(model.warnings).to.deep.equal([]);
    const policyOf = (key: string) => model.policies.find((policy) => policy.key === model.prefixRoutes.find((line) => line.key === key)!.policy)!.cors;
    const flags = (key: string) => {
      const { anyOrigin, echoAnyOrigin, methods, echoMethods, headers, echoHeaders, exposeHeaders, exposeResponseNames, credentials, maxAge } = policyOf(key)!;
      return { anyOrigin, echoAnyOrigin, methods, echoMethods, headers, echoHeaders, exposeHeaders, exposeResponseNames, credentials, maxAge };
    };
    expect(flags('shop.example.com/open/')).to.deep.equal({
      anyOrigin: true,
      echoAnyOrigin: false,
      methods: '*',
      echoMethods: false,
      headers: '*',
      echoHeaders: false,
      exposeHeaders: '*',
      exposeResponseNames: false,
      credentials: false,
      maxAge: 5,
    });
    expect(flags('shop.example.com/credentialed/')).to.deep.equal({
      anyOrigin: false,
      echoAnyOrigin: true,
      methods: '',
      echoMethods: true,
      headers: '',
      echoHeaders: true,
      exposeHeaders: '',
      exposeResponseNames: true,
      credentials: true,
      maxAge: 5,
    });
    expect(policyOf('shop.example.com/listed/')).to.deep.include({
      origins: ['https://a.example', 'https://a.example:443'],
      originPatterns: ['^https://([A-Za-z0-9-]+\\.)+b\\.example(:443)?$'],
      methods: 'GET',
      exposeHeaders: 'x-a, x-b',
      maxAge: 60,
      respondToPreflight: true,
    });
  });

  it("serves a RequestMirror as its policy's mirror, with a backend for the mirror's Service port while a served route mirrors to it", () => {
    const mirrored = (share?: { percent: number } | { fraction: { numerator: number; denominator?: number } }) =>
      httpRoute('mirrored', {
        ...parent,
        hostnames: ['shop.example.com'],
        rules: [
          {
            filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 9090 }, ...share } }],
            backendRefs: [{ name: 'web', port: 8080 }],
          },
        ],
      });
    const cache = new MapModelCache();
    const before = buildMapModel(worldSources({ routes: [] }), cache);
    expect(before.mirrors).to.equal(false);
    const model = buildMapModel(worldSources({ routes: [mirrored()] }), cache);
    expect(model.mirrors).to.equal(true);
    expect(model.warnings).to.deep.equal([]);
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/ infra_web_8080:policy']);
    expect(model.policies.map((policy) => policy.mirrors)).to.deep.equal([[{ backend: 'infra_api_9090', namespace: 'infra', service: 'api', port: 9090, share: 1, of: 1, partial: false }]]);
    // The mirror's backend has the Service's servers, though no route sends requests there.
    expect(model.backends.map((backend) => [backend.name, backend.servers.map((server) => server.address)])).to.deep.equal([
      ['infra_api_9090', ['10.0.0.2']],
      ['infra_web_8080', ['10.0.0.1']],
    ]);
    expect(buildMapModel(worldSources({ routes: [mirrored()] }))).to.deep.equal(model);
    const shareOf = (built: MapModel) => built.policies.flatMap((policy) => policy.mirrors.map((mirror) => [mirror.share, mirror.of, mirror.partial]));
    expect(shareOf(buildMapModel(worldSources({ routes: [mirrored({ percent: 50 })] }), cache))).to.deep.equal([[1, 2, true]]);
    // A fraction to a millionth; its denominator is 100 unless given.
    expect(shareOf(buildMapModel(worldSources({ routes: [mirrored({ fraction: { numerator: 1, denominator: 3 } })] }), cache))).to.deep.equal([[333_333, 1_000_000, true]]);
    expect(shareOf(buildMapModel(worldSources({ routes: [mirrored({ fraction: { numerator: 25 } })] }), cache))).to.deep.equal([[1, 4, true]]);
    // A mirror of no request asks for nothing: no policy, no backend.
    const none = buildMapModel(worldSources({ routes: [mirrored({ percent: 0 })] }), cache);
    expect(none.mirrors).to.equal(false);
    expect(none.backends.map((backend) => backend.name)).to.deep.equal(['infra_web_8080']);
    expect(buildMapModel(worldSources({ routes: [] }), cache).backends).to.deep.equal([]);
  });

  it("keeps the mirror's backend for a rule's RequestMirror whose backendRefs are a choice (each share's policy mirrors)", () => {
    const header = { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-share', value: 'a' }] } };
    const route = httpRoute('chosen', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        {
          filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 9090 } } }],
          backendRefs: [
            { name: 'web', port: 8080, weight: 1, filters: [header] },
            { name: 'web', port: 8080, weight: 1 },
          ],
        },
      ],
    });
    const cache = new MapModelCache();
    const model = buildMapModel(worldSources({ routes: [route] }), cache);
    expect(model.warnings).to.deep.equal([]);
    expect(model.prefixRoutes.map((line) => line.backend.startsWith('~'))).to.deep.equal([true]);
    expect(model.mirrors).to.equal(true);
    expect(model.backends.map((backend) => backend.name)).to.deep.equal(['infra_api_9090', 'infra_web_8080']);
    expect(buildMapModel(worldSources({ routes: [route] }))).to.deep.equal(model);
    // The route gone, the mirror's backend goes with it.
    expect(buildMapModel(worldSources({ routes: [] }), cache).backends).to.deep.equal([]);
  });

  it("serves weighted backendRefs as one split backend of both Services' servers, weighted by share over servers, named after the rule", () => {
    const three = endpointSlice('web-3', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.1.1'] }, { addresses: ['10.0.1.2'] }, { addresses: ['10.0.1.3'] }], {
      namespace: 'infra',
    });
    const split = (webWeight: number, apiWeight: number) =>
      httpRoute('canary', {
        ...parent,
        hostnames: ['shop.example.com'],
        rules: [
          {
            backendRefs: [
              { name: 'web', port: 8080, weight: webWeight },
              { name: 'api', port: 9090, weight: apiWeight },
            ],
          },
        ],
      });
    const model = buildMapModel({
      ...sources({ services: [web, api], slices: [three, slices[1]!] }),
      ...routedObjects(readGatewayApi(gatewaySources({ gateways: [gateway('gw', [httpListener('http', ALL_NAMESPACES)])], routes: [split(3, 1)], services: [web, api] }))),
    });
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/ infra_canary_0_split']);
    expect(model.backends.map((backend) => [backend.name, backend.servers.map((server) => `${server.address} ${server.weight}`)])).to.deep.equal([
      ['infra_canary_0_split', ['10.0.0.2 256', '10.0.1.1 256', '10.0.1.2 256', '10.0.1.3 256']],
    ]);
    const cache = new MapModelCache();
    const world = (route: KubeObject) => ({
      ...sources({ services: [web, api], slices: [three, slices[1]!] }),
      ...routedObjects(readGatewayApi(gatewaySources({ gateways: [gateway('gw', [httpListener('http', ALL_NAMESPACES)])], routes: [route], services: [web, api] }))),
    });
    buildMapModel(world(split(3, 1)), cache);
    const changed = buildMapModel(world(split(9, 1)), cache);
    expect(changed).to.deep.equal(buildMapModel(world(split(9, 1))));
    expect(changed.backends[0]!.servers.map((server) => `${server.address} ${server.weight}`)).to.deep.equal(['10.0.0.2 85', '10.0.1.1 256', '10.0.1.2 256', '10.0.1.3 256']);
  });

  it("serves a backendRef's own filters after its rule's: in the route's policy for one backendRef, a choice of Service backends each with its policy for several", () => {
    const setRef = (value: string) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Ref', value }] } });
    const canary = (webWeight: number, apiWeight: number) =>
      httpRoute('shop', {
        ...parent,
        hostnames: ['shop.example.com'],
        rules: [
          { matches: [match('Exact', '/one')], filters: [setRef('rule')], backendRefs: [{ name: 'api', port: 9090, filters: [setRef('api')] }] },
          {
            matches: [match('PathPrefix', '/app')],
            filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'X-Rule', value: 'rule' }] } }],
            backendRefs: [
              {
                name: 'web',
                port: 8080,
                weight: webWeight,
                filters: [setRef('web'), { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } }],
              },
              { name: 'api', port: 9090, weight: apiWeight },
            ],
          },
        ],
      });
    const model = build({ routes: [canary(3, 1)] });
    const keyOf = (settings: object) => model.policies.find((policy) => JSON.stringify(policy.settings) === JSON.stringify(settings))!.key;
    const one = keyOf({ requestHeaders: { set: [{ name: 'X-Ref', value: 'api' }], add: [], remove: [] } });
    const toWeb = keyOf({
      requestHeaders: { set: [{ name: 'X-Ref', value: 'web' }], add: [{ name: 'X-Rule', value: 'rule' }], remove: [] },
      rewrite: { kind: 'prefix', replacement: '/v2' },
    });
    const toApi = keyOf({ requestHeaders: { set: [], add: [{ name: 'X-Rule', value: 'rule' }], remove: [] } });
    const choice = (total: number, bound: number) => `~${total}~${bound}@infra_web_8080:${toWeb}~${total}@infra_api_9090:${toApi}`;
    expect(model.exactRoutes.map((route) => `${route.key} ${route.backend}:${route.policy ?? ''}`)).to.deep.equal([
      `shop.example.com/app ${choice(4, 3)}:`,
      `shop.example.com/one infra_api_9090:${one}`,
    ]);
    expect(model.prefixRoutes.map((route) => `${route.key} ${route.backend}`)).to.deep.equal([`shop.example.com/app/ ${choice(4, 3)}`]);
    expect(model.policies).to.have.length(3);
    expect(model.backends.map((backend) => [backend.name, backend.split])).to.deep.equal([
      ['infra_api_9090', undefined],
      ['infra_web_8080', undefined],
    ]);
    expect(model.choiceFields).to.have.length(16);
    expect(model.warnings).to.deep.equal([]);
    // A weight change is a map value change: the same policies and backends, updated in place as a fresh build makes them.
    const cache = new MapModelCache();
    buildMapModel(worldSources({ routes: [canary(3, 1)] }), cache);
    const changed = buildMapModel(worldSources({ routes: [canary(1, 4)] }), cache);
    expect(changed).to.deep.equal(build({ routes: [canary(1, 4)] }));
    expect(changed.prefixRoutes.map((route) => route.backend)).to.deep.equal([choice(5, 1)]);
    expect(changed.policies.map((policy) => policy.key)).to.deep.equal(model.policies.map((policy) => policy.key));
    expect(changed.backends.map((backend) => backend.name)).to.deep.equal(model.backends.map((backend) => backend.name));
    expect(build({ routes: [] }).choiceFields).to.deep.equal([]);
  });

  it("leaves out a match whose backendRef's filters cannot be served with its rule's (a rewrite of a rewritten path), and serves a backendRef's mirror beside its rule's", () => {
    const mirror = { type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 9090 } } };
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        {
          matches: [match('PathPrefix', '/app')],
          filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/index' } } }],
          backendRefs: [{ name: 'web', port: 8080, filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } }] }],
        },
        { matches: [match('PathPrefix', '/copy')], filters: [mirror], backendRefs: [{ name: 'web', port: 8080, filters: [mirror] }] },
        { backendRefs: [{ name: 'web', port: 8080 }] },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/copy/ infra_web_8080:policy', 'shop.example.com/ infra_web_8080']);
    expect(model.warnings.map((problem) => `${problem.field}: ${problem.message}`)).to.deep.equal([
      "spec.rules[0].matches[0]: not served for host shop.example.com: a backendRef's URLRewrite ReplacePrefixMatch under its rule's URLRewrite path not routed yet",
    ]);
    // The rule's copy and the backendRef's own: two copies of each request.
    expect(model.policies.map((policy) => policy.mirrors.map((copy) => copy.backend))).to.deep.equal([['infra_api_9090', 'infra_api_9090']]);
  });

  it("serves a backendRef's own RequestMirror in the policy of that backendRef's requests alone, keeping the mirror's backend", () => {
    const mirror = { type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 9090 } } };
    const one = httpRoute('one', { ...parent, hostnames: ['one.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080, filters: [mirror] }] }] });
    const split = httpRoute('split', {
      ...parent,
      hostnames: ['split.example.com'],
      rules: [
        {
          backendRefs: [
            { name: 'web', port: 8080, weight: 1, filters: [mirror] },
            { name: 'web', port: 8080, weight: 1 },
          ],
        },
      ],
    });
    const cache = new MapModelCache();
    const model = buildMapModel(worldSources({ routes: [one, split] }), cache);
    expect(model.warnings).to.deep.equal([]);
    expect(model.mirrors).to.equal(true);
    // One policy mirrors, which both the single backendRef and the split's first share use; the split's other share has none.
    expect(model.policies.map((policy) => policy.mirrors.map((copy) => copy.backend))).to.deep.equal([['infra_api_9090']]);
    expect(lines(model).prefix).to.deep.equal([`split.example.com/ ${model.prefixRoutes[0]!.backend}`, 'one.example.com/ infra_web_8080:policy']);
    expect(model.prefixRoutes[0]!.backend).to.match(/^~2~1@infra_web_8080:p[0-9a-f]+~2@infra_web_8080$/);
    expect(model.backends.map((backend) => backend.name)).to.deep.equal(['infra_api_9090', 'infra_web_8080']);
    expect(buildMapModel(worldSources({ routes: [one, split] }))).to.deep.equal(model);
    expect(buildMapModel(worldSources({ routes: [] }), cache).backends).to.deep.equal([]);
  });

  it("answers 500 for a backendRef that does not resolve: every request for the only one, its weight's share of a split", () => {
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('PathPrefix', '/gone')], backendRefs: [{ name: 'ghost', port: 80 }] },
        { matches: [match('PathPrefix', '/other')], backendRefs: [{ name: 'web', namespace: 'elsewhere', port: 8080 }] },
        {
          matches: [match('PathPrefix', '/part')],
          backendRefs: [
            { name: 'web', port: 8080, weight: 2 },
            { name: 'ghost', port: 80, weight: 2 },
            { name: 'api', port: 9090, weight: 4 },
          ],
        },
        {
          matches: [match('PathPrefix', '/one')],
          backendRefs: [
            { name: 'ghost', port: 80, weight: 1 },
            { name: 'api', port: 9090, weight: 2 },
          ],
        },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model).prefix).to.deep.equal([
      'shop.example.com/other/ :policy',
      'shop.example.com/gone/ :policy',
      'shop.example.com/part/ infra_shop_2_split:policy',
      'shop.example.com/one/ infra_api_9090:policy',
    ]);
    const policyOf = (key: string) => model.policies.find((policy) => policy.key === model.prefixRoutes.find((line) => line.key === key)!.policy)!.unresolved;
    // Both routes answering every request share one policy: a second one changes map lines only.
    expect(model.prefixRoutes[0]!.policy).to.equal(model.prefixRoutes[1]!.policy);
    expect(policyOf('shop.example.com/gone/')).to.deep.equal({
      share: 1,
      of: 1,
      status: 500,
      answer: '500 Internal Server Error: no backend of the route can take this request.',
      partial: false,
    });
    expect(policyOf('shop.example.com/part/')).to.deep.equal({
      share: 1,
      of: 4,
      status: 500,
      answer: '500 Internal Server Error: no backend of the route can take this request.',
      partial: true,
    });
    expect(policyOf('shop.example.com/one/')).to.deep.equal({
      share: 1,
      of: 3,
      status: 500,
      answer: '500 Internal Server Error: no backend of the route can take this request.',
      partial: true,
    });
    expect(model.backends.find((backend) => backend.name === 'infra_shop_2_split')!.split!.map((share) => `${share.service} ${share.weight}`)).to.deep.equal(['web 2', 'api 4']);
    expect(model.warnings.map((problem) => `${problem.field}: ${problem.message}`)).to.deep.equal([
      'spec.rules[0].matches[0]: for host shop.example.com, the share of its backendRef to infra/ghost is answered 500: spec.rules[0].backendRefs[0]: Service infra/ghost does not exist',
      'spec.rules[1].matches[0]: for host shop.example.com, the share of its backendRef to elsewhere/web is answered 500: spec.rules[1].backendRefs[0]: Service elsewhere/web is in another namespace, and no ReferenceGrant there allows HTTPRoutes of infra to use it',
      'spec.rules[2].matches[0]: for host shop.example.com, the share of its backendRef to infra/ghost is answered 500: spec.rules[2].backendRefs[1]: Service infra/ghost does not exist',
      'spec.rules[3].matches[0]: for host shop.example.com, the share of its backendRef to infra/ghost is answered 500: spec.rules[3].backendRefs[0]: Service infra/ghost does not exist',
    ]);
  });

  it('answers 500 for every request of a rule whose backendRefs all have weight 0, sharing the policy of routes whose backendRefs all fail', () => {
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        {
          matches: [match('PathPrefix', '/zero')],
          backendRefs: [
            { name: 'web', port: 8080, weight: 0 },
            { name: 'api', port: 9090, weight: 0 },
          ],
        },
        { matches: [match('PathPrefix', '/gone')], backendRefs: [{ name: 'ghost', port: 80, weight: 0 }] },
        {
          matches: [match('PathPrefix', '/some')],
          backendRefs: [
            { name: 'web', port: 8080, weight: 0 },
            { name: 'api', port: 9090, weight: 1 },
          ],
        },
        { matches: [match('PathPrefix', '/lost')], backendRefs: [{ name: 'ghost', port: 80 }] },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model).prefix).to.deep.equal([
      'shop.example.com/gone/ :policy',
      'shop.example.com/lost/ :policy',
      'shop.example.com/some/ infra_shop_2_split',
      'shop.example.com/zero/ :policy',
    ]);
    const lineOf = (key: string) => model.prefixRoutes.find((line) => line.key === key)!;
    expect(model.policies.find((policy) => policy.key === lineOf('shop.example.com/zero/').policy)!.unresolved).to.deep.equal({
      share: 1,
      of: 1,
      status: 500,
      answer: '500 Internal Server Error: no backend of the route can take this request.',
      partial: false,
    });
    expect(new Set(['zero', 'gone', 'lost'].map((first) => lineOf(`shop.example.com/${first}/`).policy)).size).to.equal(1);
    expect(model.warnings.map((problem) => `${problem.field}: ${problem.message}`)).to.deep.equal([
      'spec.rules[0].matches[0]: for host shop.example.com, every request is answered 500: its backendRefs all have weight 0',
      'spec.rules[1].matches[0]: for host shop.example.com, every request is answered 500: its backendRefs all have weight 0',
      'spec.rules[3].matches[0]: for host shop.example.com, the share of its backendRef to infra/ghost is answered 500: spec.rules[3].backendRefs[0]: Service infra/ghost does not exist',
    ]);
  });

  it('leaves out, with a warning naming the match, a record it cannot serve yet', () => {
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('RegularExpression', '/v#[0-9]')], backendRefs: [{ name: 'api', port: 9090 }] },
        { matches: [match('PathPrefix', '/')], backendRefs: [{ name: 'web', port: 8080 }] },
      ],
    });
    const model = build({ routes: [route] });
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/ infra_web_8080']);
    expect(model.regexRoutes).to.deep.equal([]);
    expect(model.warnings).to.deep.equal([
      {
        object: 'HTTPRoute infra/shop',
        field: 'spec.rules[0].matches[0]',
        message: "not served for host shop.example.com: a RegularExpression path with '#', '%' or '`' not routed yet",
      },
    ]);
  });

  it('serves conditions on RegularExpression paths in the regex map: each line looks past the condition keys a request passes, its own among them, in the order of the specification', () => {
    const onShop = (name: string, created: string, rules: readonly unknown[]) => httpRoute(name, { ...parent, hostnames: ['shop.example.com'], rules }, 'infra', created);
    const regex = (value: string, extra: Record<string, unknown>, serviceName: string) => ({
      matches: [{ ...match('RegularExpression', value), ...extra }],
      backendRefs: [{ name: serviceName, port: 8080 }],
    });
    const model = build({
      routes: [
        onShop('older', '2026-01-01T00:00:00Z', [regex('/v[0-9]', { headers: [{ name: 'X-Version', value: '2' }] }, 'web'), regex('/v[0-9]', {}, 'web')]),
        onShop('newer', '2026-01-02T00:00:00Z', [
          regex('/v[0-9]', { method: 'POST' }, 'api'),
          regex('/v[0-9]', { headers: [{ name: 'x-version', value: '2' }] }, 'api'),
          regex('/v[0-9]/long', { queryParams: [{ name: 'q', value: 'v' }] }, 'api'),
        ]),
      ],
      services: [web, service('api', [{ port: 8080 }], 'infra')],
    });
    const conditions = new Map(
      model.regexConditions.map((set) => [
        set.key,
        [set.method, ...set.headers.map((h) => `${h.name}=${h.value}`), ...set.query.map((q) => `?${q.name}=${q.value}`)].filter(Boolean).join(' '),
      ]),
    );
    expect([...conditions.values()].sort()).to.deep.equal(['?q=v', 'POST', 'x-version=2']);
    // The longer expression first; then, for one expression, the method match, the header match of the older route, and the line without conditions.
    const described = model.regexRoutes.map((line) => `${line.key.replace(/c[0-9a-f]{16}/, (key) => `<${conditions.get(key)}>`)} ${line.backend}`);
    expect(described).to.deep.equal([
      '^(?:[^|]+)?:<?q=v>:(?:[^|]+)?[|]shop\\.example\\.com(?:/v[0-9]/long)$ infra_api_8080',
      '^(?:[^|]+)?:<POST>:(?:[^|]+)?[|]shop\\.example\\.com(?:/v[0-9])$ infra_api_8080',
      '^(?:[^|]+)?:<x-version=2>:(?:[^|]+)?[|]shop\\.example\\.com(?:/v[0-9])$ infra_web_8080',
      '^[^|]+[|]shop\\.example\\.com(?:/v[0-9])$ infra_web_8080',
    ]);
    // A request passing the header match's conditions alone: its held keys are those of that set.
    const held = (...sets: string[]) => `:${sets.map((set) => `${[...conditions].find(([, what]) => what === set)![0]}:`).join('')}|shop.example.com/v1`;
    const first = (request: string) => model.regexRoutes.findIndex((line) => new RegExp(line.key).test(request));
    expect([first(held('x-version=2')), first(held()), first(held('POST', 'x-version=2')), first(held('?q=v'))]).to.deep.equal([2, 3, 1, 3]);
    // The newer route's header match has the older one's conditions on the same expression: never reached, and told.
    expect(model.warnings.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`)).to.deep.equal([
      'HTTPRoute infra/newer spec.rules[1].matches[0]: route "^shop\\\\.example\\\\.com(?:/v[0-9])$" not served here: older HTTPRoute infra/older, with the same header, query parameter and method matches, sends it to backend infra_web_8080',
    ]);
  });

  it("makes an Ingress's regex line look past the held condition keys too, while some HTTPRoute regex line has conditions", () => {
    const nginx = ingress('nginx', {
      namespace: 'infra',
      annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' },
      rules: [rule('nginx.example.com', path('/api/[a-z]+', 'web', 'http', 'Prefix'))],
    });
    const conditional = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [{ matches: [{ ...match('RegularExpression', '/v[0-9]'), method: 'POST' }], backendRefs: [{ name: 'api', port: 9090 }] }],
    });
    const plain = build({ ingresses: [nginx] }).regexRoutes.map((line) => line.key);
    expect(plain).to.deep.equal(['(?i)^nginx\\.example\\.com/api/[a-z]+']);
    const model = build({ ingresses: [nginx], routes: [conditional] });
    const keys = model.regexRoutes.map((line) => line.key.replace(/c[0-9a-f]{16}/, 'c<key>'));
    expect(keys).to.deep.equal(['(?i)^[^|]+[|]nginx\\.example\\.com/api/[a-z]+', '^(?:[^|]+)?:c<key>:(?:[^|]+)?[|]shop\\.example\\.com(?:/v[0-9])$']);
    // PCRE's (?i) is JavaScript's flag i.
    expect(new RegExp(model.regexRoutes[0]!.key.replace('(?i)', ''), 'i').test(`:${model.regexConditions[0]!.key}:|NGINX.example.com/api/x`)).to.equal(true);
    expect(new RegExp(model.regexRoutes[1]!.key).test(':|shop.example.com/v1')).to.equal(false);
  });

  it('serves header, query parameter and method matches as candidate lists ranked as the specification ranks matches', () => {
    const onShop = (name: string, created: string, rules: readonly unknown[]) => httpRoute(name, { ...parent, hostnames: ['shop.example.com'], rules }, 'infra', created);
    const model = build({
      routes: [
        onShop('older', '2026-01-01T00:00:00Z', [
          { matches: [{ ...match('PathPrefix', '/a'), headers: [{ name: 'X-One', value: '1' }] }], backendRefs: [{ name: 'web', port: 8080 }] },
          { matches: [match('PathPrefix', '/')], backendRefs: [{ name: 'web', port: 8080 }] },
        ]),
        onShop('newer', '2026-01-02T00:00:00Z', [
          {
            matches: [
              {
                ...match('PathPrefix', '/a/b'),
                headers: [
                  { name: 'X-One', value: '1' },
                  { name: 'x-two', type: 'RegularExpression', value: '^2' },
                ],
              },
              { ...match('PathPrefix', '/a/b'), method: 'POST' },
              { ...match('PathPrefix', '/a/b'), queryParams: [{ name: 'q', value: 'v' }] },
              { ...match('PathPrefix', '/a'), headers: [{ name: 'x-one', value: '1' }] },
            ],
            backendRefs: [{ name: 'api', port: 9090 }],
          },
        ]),
      ],
    });
    const listOf = (map: 'exact' | 'prefix', key: string) => {
      const line = (map === 'exact' ? model.exactRoutes : model.prefixRoutes).find((route) => route.key === key)!;
      expect(line.backend).to.match(/^\?l[0-9a-f]{16}$/);
      const id = line.backend.slice(1);
      const conditions = new Map(model.conditions.map((set) => [set.lookup, set]));
      return model.candidates
        .filter((candidate) => candidate.key.startsWith(`${id}/`))
        .sort((a, b) => (a.value < b.value ? -1 : 1))
        .map((candidate) => {
          const set = conditions.get(candidate.key.slice(id.length + 1));
          const what = set
            ? [set.method, ...set.headers.map((h) => `${h.name}${h.regex ? '~' : '='}${h.value}`), ...set.query.map((q) => `?${q.name}=${q.value}`)].filter(Boolean).join(' ')
            : 'fallback';
          return `${candidate.value} ${what}`;
        });
    };
    // Method first, then most headers, then query; the same conditions at /a/ from the older route win over the newer's;
    // the shorter prefix's candidates follow, and the unconditional "/" ends the list.
    expect(listOf('prefix', 'shop.example.com/a/b/')).to.deep.equal([
      '000=infra_api_9090 POST',
      '001=infra_api_9090 x-one=1 x-two~^2',
      '002=infra_api_9090 ?q=v',
      '003=infra_web_8080 x-one=1',
      '999=infra_web_8080 fallback',
    ]);
    // An exact key without an unconditional candidate lets the next lookups run.
    expect(listOf('exact', 'shop.example.com/a')).to.deep.equal(['000=infra_web_8080 x-one=1', '999= fallback']);
    // The newer route's match with the same key and conditions is never reached: it is told so, on both of its keys.
    const shadowed = (key: string) => ({
      object: 'HTTPRoute infra/newer',
      field: 'spec.rules[0].matches[3]',
      message: `route "${key}" not served here: older HTTPRoute infra/older, with the same header, query parameter and method matches, sends it to backend infra_web_8080`,
    });
    expect(model.warnings).to.deep.equal([shadowed('shop.example.com/a'), shadowed('shop.example.com/a/')]);
    expect(model.backends.map((backend) => backend.name)).to.deep.equal(['infra_api_9090', 'infra_web_8080']);
  });

  it('serves a key two HTTPRoutes of one age ask for from the first by "{namespace}/{name}" as one string: a-b/r before a/r', () => {
    const ab = service('web', [{ port: 8080 }], 'a-b');
    const a = service('web', [{ port: 8080 }], 'a');
    const routeIn = (namespace: string) =>
      httpRoute(
        'r',
        {
          ...parent,
          parentRefs: [{ name: 'gw', namespace: 'infra' }],
          hostnames: ['shop.example.com'],
          rules: [{ matches: [match('PathPrefix', '/')], backendRefs: [{ name: 'web', port: 8080 }] }],
        },
        namespace,
      );
    for (const routes of [
      [routeIn('a'), routeIn('a-b')],
      [routeIn('a-b'), routeIn('a')],
    ]) {
      const model = build({ routes, services: [a, ab] });
      expect(lines(model).prefix).to.deep.equal(['shop.example.com/ a-b_web_8080']);
      // (Both backends have no servers, said apart.)
      expect(model.warnings.filter((problem) => problem.message.includes('not served here'))).to.deep.equal([
        {
          object: 'HTTPRoute a/r',
          field: 'spec.rules[0].matches[0]',
          message: 'route "shop.example.com/" not served here: HTTPRoute a-b/r, as old and first by namespace/name, sends it to backend a-b_web_8080',
        },
      ]);
    }
  });

  it('settles a key an Ingress and an HTTPRoute sharing a host both ask for as Ingresses do: Exact first, then the older object', () => {
    const older = ingress('old', { namespace: 'infra', created: '2020-01-01T00:00:00Z', rules: [rule('shop.example.com', path('/a', 'web', 'http'), path('/b', 'web', 'http'))] });
    const route = httpRoute('shop', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        { matches: [match('PathPrefix', '/a')], backendRefs: [{ name: 'api', port: 9090 }] },
        { matches: [match('Exact', '/b')], backendRefs: [{ name: 'api', port: 9090 }] },
      ],
    });
    const model = build({ ingresses: [older], routes: [route], sharing: ['*'] });
    expect(lines(model).exact).to.deep.equal(['shop.example.com/a infra_web_8080', 'shop.example.com/b infra_api_9090']);
    expect(lines(model).prefix).to.deep.equal(['shop.example.com/a/ infra_web_8080', 'shop.example.com/b/ infra_web_8080']);
    expect(model.warnings.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`)).to.deep.equal([
      'HTTPRoute infra/shop spec.rules[0].matches[0]: route "shop.example.com/a" not served here: older Ingress infra/old sends it to backend infra_web_8080',
      'HTTPRoute infra/shop spec.rules[0].matches[0]: route "shop.example.com/a/" not served here: older Ingress infra/old sends it to backend infra_web_8080',
    ]);
  });

  it('lets HTTPRoutes of several namespaces share a host, and keeps it from an Ingress that came later', () => {
    const teamRoute = (team: string, prefix: string, created: string) =>
      httpRoute(
        team.slice(-1),
        {
          parentRefs: [{ name: 'gw', namespace: 'infra' }],
          hostnames: ['shop.example.com'],
          rules: [{ matches: [match('PathPrefix', prefix)], backendRefs: [{ name: 'web', port: 8080, namespace: 'infra' }] }],
        },
        team,
        created,
      );
    const first = teamRoute('team-a', '/a', '2026-01-01T00:00:00Z');
    const second = teamRoute('team-b', '/b', '2026-01-02T00:00:00Z');
    const grant = {
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { namespace: 'infra', name: 'routes' },
      spec: {
        from: [
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' },
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-b' },
        ],
        to: [{ group: '', kind: 'Service' }],
      },
    };
    const later = ingress('late', { namespace: 'other', created: '2026-02-01T00:00:00Z', rules: [rule('shop.example.com', path('/c', 'web', 'http'))] });
    const model = readGatewayApi(gatewaySources({ gateways: [gateway('gw', [httpListener('http', ALL_NAMESPACES)])], routes: [first, second], grants: [grant], services: [web] }));
    const built = buildMapModel({ ...sources({ ingresses: [later], services: [web], slices }), ...routedObjects(model) });
    expect(lines(built).prefix).to.have.members(['shop.example.com/a/ infra_web_8080', 'shop.example.com/b/ infra_web_8080']);
    expect(built.excluded.map((problem) => `${problem.object}: ${problem.message}`)).to.deep.equal([
      'Ingress other/late: host "shop.example.com" belongs to namespace team-a: older HTTPRoute team-a/a claims it; rule not served',
    ]);
  });

  it('lists the wildcard hosts HTTPRoutes serve for the suffix lookup, and no wildcard only an Ingress serves', () => {
    const route = httpRoute('wild', { ...parent, hostnames: ['*.wild.example.com', 'plain.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] });
    const one = ingress('one', { namespace: 'infra', rules: [rule('*.one.example.com', path('/', 'web', 'http'))] });
    const model = build({ routes: [route], ingresses: [one] });
    expect(model.hosts.map((host) => host.host)).to.deep.equal(['*.one.example.com', '*.wild.example.com', 'plain.example.com']);
    expect(model.suffixHosts.map((host) => host.host)).to.deep.equal(['*.wild.example.com']);
    expect(model.suffixLookups.map((lookup) => lookup.labels)).to.deep.equal([3]);
  });

  it('looks wildcard hosts up once per number of labels their domains have, most first, and keeps the lookups while those numbers stay', () => {
    const wild = (name: string, hostnames: readonly string[]) => httpRoute(name, { ...parent, hostnames, rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] });
    const cache = new MapModelCache();
    const first = buildMapModel(worldSources({ routes: [wild('a', ['*.example.com', '*.deep.wild.example.com', '*.wild.example.com'])] }), cache);
    expect(first.suffixLookups).to.deep.equal([
      { labels: 4, more: [1, 2, 3] },
      { labels: 3, more: [1, 2] },
      { labels: 2, more: [1] },
    ]);
    // Another domain of 3 labels: a host-suffix.map line, the same lookups.
    const second = buildMapModel(worldSources({ routes: [wild('a', ['*.example.com', '*.deep.wild.example.com', '*.wild.example.com']), wild('b', ['*.more.example.com'])] }), cache);
    expect(second.suffixHosts.map((host) => host.host)).to.include('*.more.example.com');
    expect(second.suffixLookups).to.equal(first.suffixLookups);
  });

  it("serves an HTTPS listener's certificate on a crt-list line for its hostname; one without a hostname's first, as the fallback, and refuses the names Ingress namespaces hold without a certificate", () => {
    const route = httpRoute('shop', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] });
    const model = readGatewayApi(
      gatewaySources({ gateways: [gateway('gw', [https('named', { hostname: 'secure.example.com' }), https('any', {})])], routes: [route], services: [web], secrets: [secret] }),
    );
    const held = [
      ingress('held', { namespace: 'infra', rules: [rule('held.example.com', path('/', 'web', 'http')), rule('*.wild.example.com', path('/', 'web', 'http'))] }),
      ingress('own', { namespace: 'infra', tls: [{ hosts: ['own.example.com'], secretName: 'secure-tls' }], rules: [rule('own.example.com', path('/', 'web', 'http'))] }),
    ];
    const crtLines = (built: MapModel) => built.certificates.map((certificate) => [certificate.file, certificate.hosts, certificate.excludedHosts, certificate.refuses ?? false]);
    const built = buildMapModel({ ...sources({ services: [web], slices, secrets: [secret] }), ...routedObjects(model) });
    expect(crtLines(built)).to.deep.equal([
      ['infra_secure-tls.pem', [], ['fallback-certificate.invalid'], false],
      ['infra_secure-tls.pem', ['secure.example.com'], [], false],
    ]);
    expect(built.fallbackCertificate).to.equal(true);
    expect(built.excluded).to.deep.equal([]);
    const withIngresses = buildMapModel({ ...sources({ ingresses: held, services: [web], slices, secrets: [secret] }), ...routedObjects(model) });
    expect(crtLines(withIngresses)).to.deep.equal([
      ['infra_secure-tls.pem', [], ['fallback-certificate.invalid'], false],
      ['infra_secure-tls.pem', ['own.example.com'], [], false],
      ['infra_secure-tls.pem', ['secure.example.com'], [], false],
      ['infra_secure-tls.pem', ['*.wild.example.com', 'held.example.com'], [], true],
    ]);
    // Without a listener lacking a hostname: no fallback, strict-sni.
    const named = readGatewayApi(gatewaySources({ gateways: [gateway('gw', [https('named', { hostname: 'secure.example.com' })])], routes: [route], services: [web], secrets: [secret] }));
    const strict = buildMapModel({ ...sources({ ingresses: held, services: [web], slices, secrets: [secret] }), ...routedObjects(named) });
    expect([strict.fallbackCertificate, strict.certificates.some((certificate) => certificate.refuses)]).to.deep.equal([false, false]);
  });

  // After the conformance scenarios GatewayFrontendClientCertificateValidation and ...InsecureFallback.
  it("asks for client certificates on an HTTPS listener's crt-list lines as its validation says: verify required for AllowValidOnly, optional for AllowInsecureFallback, the fallback's line too", () => {
    const caConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'infra', name: 'client-ca' }, data: { 'ca.crt': CA_CERT } };
    const validated = (mode: string, ref: Record<string, unknown> = { kind: 'ConfigMap', group: '', name: 'client-ca' }) => {
      const object = gateway('gw', [httpListener('http', ALL_NAMESPACES), https('named', { hostname: 'secure.example.com' }), https('any', {})]);
      (object['spec'] as Record<string, unknown>)['tls'] = { frontend: { default: { validation: { mode, caCertificateRefs: [ref] } } } };
      return object;
    };
    const route = httpRoute('shop', { ...parent, hostnames: ['secure.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] });
    const find = (list: readonly KubeObject[]) => (namespace: string, name: string) => list.find((object) => object.metadata.namespace === namespace && object.metadata.name === name);
    const caSecret = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'infra', name: 'client-ca' }, type: 'Opaque', data: { 'ca.crt': base64(CA_CERT) } };
    const modelOf = (object: KubeObject, configMaps: readonly KubeObject[] = [caConfigMap]) => {
      const model = readGatewayApi({ ...gatewaySources({ gateways: [object], routes: [route], services: [web], secrets: [secret, caSecret] }), configMap: find(configMaps) });
      return buildMapModel({ ...sources({ services: [web], slices, secrets: [secret, caSecret] }), configMap: find(configMaps), ...routedObjects(model) });
    };
    const crtLines = (built: MapModel) => built.certificates.map((certificate) => [certificate.hosts, certificate.clientVerify, certificate.clientCaFile]);
    const strict = modelOf(validated('AllowValidOnly'));
    expect(crtLines(strict)).to.deep.equal([
      [[], 'required', 'infra_client-ca__configmap-client-ca.pem'],
      [['secure.example.com'], 'required', 'infra_client-ca__configmap-client-ca.pem'],
    ]);
    // No line lets a failed certificate through: the bind ends such a handshake.
    expect(strict.clientCertificates).to.equal(false);
    expect(strict.caCertificates).to.deep.equal([{ file: 'infra_client-ca__configmap-client-ca.pem', pem: CA_CERT }]);
    // The routes refuse too, over TLS alone: a request whose SNI named another line, or through a bind that lets failed ones by.
    expect(strict.policies.map((policy) => policy.clientCertificate)).to.deep.equal([{ required: true, verified: true, errorPage: undefined, passCertificate: false, overTlsOnly: true }]);
    expect(strict.warnings).to.deep.equal([]);
    const fallback = modelOf(validated('AllowInsecureFallback', { kind: 'Secret', group: '', name: 'client-ca' }));
    expect(fallback.clientCertificates).to.equal(true);
    expect(crtLines(fallback).map(([, verify, file]) => `${verify} ${file}`)).to.deep.equal(['optional infra_client-ca__client-ca.pem', 'optional infra_client-ca__client-ca.pem']);
    expect(fallback.policies).to.deep.equal([]);
    expect(fallback.caCertificates).to.deep.equal([{ file: 'infra_client-ca__client-ca.pem', pem: CA_CERT }]);
    expect(fallback.warnings).to.deep.equal([]);
    // A CA the Gateway API reader passes (a PEM block) that does not parse: nobody's CA stands in, and every certificate fails.
    const broken = modelOf(validated('AllowValidOnly'), [{ ...caConfigMap, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' } }]);
    expect(broken.caCertificates.map((ca) => [ca.file, ca.pem === CA_CERT])).to.deep.equal([['infra_client-ca__configmap-client-ca.pem', false]]);
    expect(broken.warnings.map((warning) => warning.object)).to.deep.equal(['HTTPRoute infra/shop']);
    expect(broken.warnings[0]!.message).to.match(
      /^ConfigMap infra\/client-ca data\[ca\.crt\] certificate 1 does not parse: .*: its client certificate authentication refuses every certificate$/,
    );
  });

  describe('HTTP and HTTPS listeners', () => {
    const onListener = (name: string, sectionName: string, rules: readonly unknown[]) =>
      httpRoute(name, { parentRefs: [{ name: 'gw', sectionName }], hostnames: ['shop.example.com'], rules });
    const modelOf = (gateways: readonly KubeObject[], routes: readonly KubeObject[], ingresses: readonly KubeObject[] = [], cache?: MapModelCache) => {
      const model = readGatewayApi(gatewaySources({ classes: [gatewayClass()], gateways, routes, services: [web, api], secrets: [secret] }));
      return buildMapModel({ ...sources({ ingresses, services: [web, api], slices, secrets: [secret] }), ...routedObjects(model) }, cache);
    };

    it('serves a route on listeners of one protocol alone as a candidate under that protocol, a regular expression path by its policy', () => {
      const model = modelOf(
        [gateway('gw', [httpListener('http', ALL_NAMESPACES), https('https')])],
        [
          onListener('backend', 'https', [{ matches: [match('Exact', '/pair')], backendRefs: [{ name: 'api', port: 9090 }] }]),
          onListener('upgrade', 'http', [
            { matches: [match('Exact', '/pair')], filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }] },
            { matches: [match('RegularExpression', '/re/[0-9]+')], backendRefs: [{ name: 'web', port: 8080 }] },
          ]),
        ],
      );
      expect(model.warnings).to.deep.equal([]);
      expect(lines(model).exact).to.have.length(1);
      expect(lines(model).exact[0]).to.match(/^shop\.example\.com\/pair \?l[0-9a-f]{16}$/);
      // Both candidates, each under its protocol; no fallback (a request of neither goes on to the regex and prefix maps).
      expect(model.candidates.map((line) => line.value)).to.have.members(['999=', '000=infra_api_9090', `001=:${model.policies.find((policy) => policy.redirect)!.key}`]);
      expect(model.conditions.map((conditions) => conditions.servedOver)).to.have.deep.members([{ tls: true }, { tls: false }]);
      expect(model.regexRoutes.map((route) => model.policies.find((policy) => policy.key === route.policy)?.settings.servedOver)).to.deep.equal([{ tls: false }]);
    });

    it('serves a route on listeners of both protocols, or of the only protocol served, without a condition', () => {
      const both = modelOf([gateway('gw', [httpListener('http', ALL_NAMESPACES), https('https')])], [httpRoute('r', { ...parent, hostnames: ['shop.example.com'] })]);
      const plainOnly = modelOf([gateway('gw', [httpListener('http', ALL_NAMESPACES)])], [onListener('r', 'http', [{ backendRefs: [{ name: 'web', port: 8080 }] }])]);
      for (const model of [both, plainOnly]) expect([model.conditions, model.candidates]).to.deep.equal([[], []]);
    });

    it("keeps a listener's certificate from the hosts Ingress namespaces hold: their names left out, said so, and excluded below its wildcard", () => {
      const taken = ingress('taken', { namespace: 'infra', rules: [rule('taken.example.com', path('/', 'web', 'http')), rule('owned.example.com', path('/', 'web', 'http'))] });
      const gateways = [gateway('gw', [https('wild', { hostname: '*.example.com' }), https('owned', { hostname: 'owned.example.com' })])];
      const cache = new MapModelCache();
      const model = modelOf(gateways, [], [taken], cache);
      expect(model.certificates.map((certificate) => [certificate.hosts, certificate.excludedHosts])).to.deep.equal([[['*.example.com'], ['owned.example.com', 'taken.example.com']]]);
      expect(model.warnings).to.deep.equal([
        { object: 'Gateway infra/gw', field: 'spec.listeners[1].tls.certificateRefs[0]', message: 'not served for host "owned.example.com": it belongs to the Ingresses of namespace infra' },
      ]);
      // A host an Ingress claims later is excluded too, by the next build from the same cache.
      const late = ingress('late', { namespace: 'infra', rules: [rule('late.example.com', path('/', 'web', 'http'))] });
      const next = modelOf(gateways, [], [taken, late], cache);
      expect(next.certificates.map((certificate) => certificate.excludedHosts)).to.deep.equal([['late.example.com', 'owned.example.com', 'taken.example.com']]);
      // HTTPRoutes' hosts are the listener's own to serve.
      const routed = modelOf(gateways, [httpRoute('r', { parentRefs: [{ name: 'gw' }], hostnames: ['shop.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] })], [taken]);
      expect(routed.certificates.map((certificate) => certificate.excludedHosts)).to.deep.equal([['owned.example.com', 'taken.example.com']]);
    });
  });

  it("adds the Gateway API's problems to the model's excluded, naming the object at fault", () => {
    const route = httpRoute('bad', { ...parent, rules: [{ matches: [match('Exact', 'no-slash')], backendRefs: [{ name: 'web', port: 8080 }] }] });
    const model = build({ routes: [route] });
    expect(model.excluded.map((problem) => problem.object)).to.deep.equal(['HTTPRoute infra/bad']);
  });

  it('gives the model a fresh build gives after every change of a seeded sequence of HTTPRoutes, Gateways and Ingresses', () => {
    const random = mulberry32(19);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const hosts = ['a.example.com', 'b.example.com', '*.example.com'];
    const paths = [
      match('PathPrefix', '/'),
      match('PathPrefix', '/x'),
      match('Exact', '/x'),
      match('PathPrefix', '/x/y'),
      match('RegularExpression', '/x/[a-z]+'),
      { ...match('PathPrefix', '/x'), headers: [{ name: 'X-V', value: '1' }] },
      { ...match('PathPrefix', '/x/y/z'), method: 'GET' },
      { ...match('Exact', '/x'), queryParams: [{ name: 'q', value: '1' }] },
    ];
    const backends = [
      { name: 'web', port: 8080 },
      { name: 'api', port: 9090 },
      { name: 'ghost', port: 80 },
    ];
    const filters = [
      [],
      [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'X-A', value: '1' }] } }],
      [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
      [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 9090 } } }],
      [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'web', port: 8080 }, percent: 10 } }],
      [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'ghost', port: 80 } } }],
    ];
    const routes = new Map<string, KubeObject>();
    const ingresses = new Map<string, KubeObject>();
    let gateways = [gateway('gw', [httpListener('http', ALL_NAMESPACES)])];
    const cache = new MapModelCache();
    const seen = { conflicts: 0, redirects: 0, unserved: 0, splits: 0, unresolved: 0, lists: 0, mirrors: 0, choices: 0 };
    // The first of two backendRefs: filters of its own by weight, so the draws are those of a sequence without them.
    const backendRef = (weight: number) => ({ ...backends[0]!, weight, filters: weight === 1 ? [] : filters[weight === 3 ? 1 : 2] });
    // One backendRef, or two with weights drawn from a few (a weight change keeps the split backend's name, or the choice's policies).
    const backendRefs = () => (random() < 0.3 ? [backendRef(pick([0, 1, 3])), { ...backends[1]!, weight: pick([1, 2]) }] : [pick(backends)]);
    for (let step = 1; step <= 200; step++) {
      const roll = random();
      const name = `r${Math.floor(random() * 6)}`;
      const created = `2026-01-0${1 + Math.floor(random() * 9)}T00:00:00Z`;
      if (roll < 0.5) {
        const redirect = random() < 0.15;
        const rules = [
          {
            matches: [pick(paths)],
            ...(redirect ? { filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] } : { filters: pick(filters), backendRefs: backendRefs() }),
            ...(random() < 0.1 ? { timeouts: { request: '5s' } } : {}),
          },
        ];
        routes.set(name, httpRoute(name, { ...parent, hostnames: [pick(hosts)], rules }, 'infra', created));
      } else if (roll < 0.65) {
        routes.delete(name);
      } else if (roll < 0.85) {
        ingresses.set(name, ingress(name, { namespace: 'infra', created, rules: [rule(pick(hosts), path(pick(['/', '/x', '/x/y']), pick(['web', 'api']), pick(['http', 9090])))] }));
      } else if (roll < 0.9) {
        ingresses.delete(name);
      } else {
        gateways = [gateway('gw', [httpListener('http', { ...ALL_NAMESPACES, ...(random() < 0.5 ? { hostname: pick(hosts) } : {}) })])];
      }
      const world = { routes: [...routes.values()], ingresses: [...ingresses.values()], gateways };
      const fresh = build(world);
      expect(buildMapModel(worldSources(world), cache), `step ${step}`).to.deep.equal(fresh);
      seen.conflicts += fresh.warnings.filter((problem) => problem.message.includes('not served here')).length;
      seen.redirects += fresh.prefixRoutes.filter((route) => route.backend === '').length;
      seen.splits += fresh.backends.filter((backend) => backend.split !== undefined).length;
      seen.unserved += fresh.warnings.filter((problem) => problem.message.includes('not routed yet')).length;
      seen.unresolved += fresh.warnings.filter((problem) => problem.message.includes('is answered 500')).length;
      seen.lists += fresh.candidates.length;
      seen.mirrors += fresh.policies.filter((policy) => policy.mirrors.length > 0).length;
      seen.choices += fresh.prefixRoutes.filter((route) => route.backend.startsWith('~')).length;
    }
    for (const [what, count] of Object.entries(seen)) expect(count, what).to.be.above(0);
  });
  it("follows the stores through their change logs: a split backend is resolved again when one of its Services' slices changes", () => {
    const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const config = loaded.config;
    const route = httpRoute('canary', {
      ...parent,
      hostnames: ['shop.example.com'],
      rules: [
        {
          backendRefs: [
            { name: 'web', port: 8080, weight: 1 },
            { name: 'api', port: 9090, weight: 1 },
          ],
        },
      ],
    });
    const objects = new Map<string, KubeObject[]>([
      ['gatewayclasses', [gatewayClass()]],
      ['gateways', [gateway('gw', [httpListener('http', ALL_NAMESPACES)])]],
      ['httproutes', [route]],
      ['services', [web, api]],
      ['endpointslices', [...slices]],
    ]);
    const stores = buildStores(config.watchedResources, objects, config.ignoreFields);
    const cache = new MapModelCache();
    const first = buildMapModel(mapModelSources(config, stores)!, cache);
    expect(first.backends.map((backend) => backend.servers.map((server) => `${server.address} ${server.weight}`))).to.deep.equal([['10.0.0.1 256', '10.0.0.2 256']]);
    stores.get('endpointslices')!.upsert(endpointSlice('api-1', 'api', [{ port: 9090 }], [{ addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.3'] }], { namespace: 'infra' }));
    const cached = buildMapModel(mapModelSources(config, stores)!, cache);
    expect(cached).to.deep.equal(buildMapModel(mapModelSources(config, stores)!));
    expect(cached.backends.map((backend) => backend.servers.map((server) => `${server.address} ${server.weight}`))).to.deep.equal([['10.0.0.1 256', '10.0.0.2 128', '10.0.0.3 128']]);
  });
});
