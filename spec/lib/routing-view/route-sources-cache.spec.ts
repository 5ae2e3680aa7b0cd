import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { GatewayApiMemo, readGatewayApi } from '../../../lib/gateway/gateway-api.ts';
import { storeSources } from '../../../lib/gateway/store-sources.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources, RouteSourcesCache, routingSources } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { gateway, gatewayClass, httpListener, httpRoute, l4Route, namespaceObject, referenceGrant } from '../gateway/fixtures.ts';
import { endpointSlice, service } from '../ingress/fixtures.ts';

/**
 * The Gateway API model kept between renders (GatewayApiMemo and
 * RouteSourcesCache): after any change it gives what a read from nothing
 * gives, and judges again only what the change can touch.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const parent = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };
const fromAll = { allowedRoutes: { namespaces: { from: 'All' } } };
const fromLabelled = { allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { routes: 'yes' } } } } };

function route(name: string, namespace: string, backendRefs: readonly Record<string, unknown>[], version = '1'): KubeObject {
  const object = httpRoute(name, { ...parent, hostnames: [`${name}.example.com`], rules: [{ backendRefs }] }, namespace);
  return { ...object, metadata: { ...object.metadata, resourceVersion: version } };
}

const web = service('web', [{ name: 'http', port: 8080 }], 'apps');
const api = service('api', [{ port: 9090 }], 'apps');
const other = service('other', [{ port: 8080 }], 'elsewhere');
const slices = [
  endpointSlice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'], ready: true }], { namespace: 'apps' }),
  endpointSlice('api-1', 'api', [{ port: 9090 }], [{ addresses: ['10.0.0.2'], ready: true }], { namespace: 'apps' }),
];

function world() {
  return buildStores(
    config.watchedResources,
    new Map<string, KubeObject[]>([
      ['gatewayclasses', [gatewayClass()]],
      ['gateways', [gateway('gw', [httpListener('http', fromAll)])]],
      [
        'httproutes',
        [
          route('shop', 'apps', [{ name: 'web', port: 8080 }]),
          route('canary', 'apps', [
            { name: 'web', port: 8080, weight: 9 },
            { name: 'api', port: 9090, weight: 1 },
          ]),
          route('far', 'apps', [{ name: 'other', namespace: 'elsewhere', port: 8080 }]),
        ],
      ],
      ['services', [web, api, other]],
      ['endpointslices', [...slices]],
      ['namespaces', [namespaceObject('apps'), namespaceObject('infra')]],
    ]),
    config.ignoreFields,
  );
}

const read = (stores: ReturnType<typeof world>, memo?: GatewayApiMemo) => readGatewayApi(storeSources(stores, config.watchedResources, config.gatewayApi), memo);

function servedFor(hostname: string, version: string): KubeObject {
  const object = route('canary', 'apps', [{ name: 'web', port: 8080 }], version);
  return { ...object, spec: { ...(object['spec'] as object), hostnames: [hostname] } };
}

function pathPrefix(value: string, version: string): KubeObject {
  const object = route('canary', 'apps', [{ name: 'web', port: 8080 }], version);
  return { ...object, spec: { ...(object['spec'] as object), rules: [{ matches: [{ path: { type: 'PathPrefix', value } }] }] } };
}

/** What a change is, and what it must leave judged as before. */
const changes: readonly { readonly what: string; readonly change: (stores: ReturnType<typeof world>) => void; readonly kept: readonly string[] }[] = [
  {
    what: 'a weight change of one HTTPRoute judges that route alone again',
    change: (stores) =>
      stores.get('httproutes')!.upsert(
        route(
          'canary',
          'apps',
          [
            { name: 'web', port: 8080, weight: 5 },
            { name: 'api', port: 9090, weight: 5 },
          ],
          '2',
        ),
      ),
    kept: ['apps/shop', 'apps/far'],
  },
  {
    what: "a hostname change of one HTTPRoute judges that route alone again, and its listener's hostnames follow",
    change: (stores) => stores.get('httproutes')!.upsert(servedFor('canary.example.org', '2')),
    kept: ['apps/shop', 'apps/far'],
  },
  {
    what: 'an HTTPRoute given a bad value is refused and named, the others kept',
    change: (stores) => stores.get('httproutes')!.upsert(pathPrefix('/a\nbind :1', '2')),
    kept: ['apps/shop', 'apps/far'],
  },
  {
    what: 'an HTTPRoute moved to a Gateway of no class of ours is withdrawn, the others kept',
    change: (stores) => {
      const object = route('canary', 'apps', [{ name: 'web', port: 8080 }], '2');
      stores.get('httproutes')!.upsert({ ...object, spec: { ...(object['spec'] as object), parentRefs: [{ name: 'elsewhere', namespace: 'infra' }] } });
    },
    kept: ['apps/shop', 'apps/far'],
  },
  {
    what: 'a new HTTPRoute is judged, the others kept',
    change: (stores) => stores.get('httproutes')!.upsert(route('blog', 'apps', [{ name: 'api', port: 9090 }])),
    kept: ['apps/shop', 'apps/canary', 'apps/far'],
  },
  { what: 'a deleted Service judges every route again (one loses its backend)', change: (stores) => stores.get('services')!.delete(api), kept: [] },
  {
    what: 'a ReferenceGrant judges every route again (one gains a Service in another namespace)',
    change: (stores) =>
      stores.get('referencegrants')!.upsert(referenceGrant('elsewhere', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }])),
    kept: [],
  },
  {
    what: "a Gateway's listener change judges every route again (none attaches any more)",
    change: (stores) =>
      stores.get('gateways')!.upsert({ ...gateway('gw', [httpListener('http', fromLabelled)]), metadata: { namespace: 'infra', name: 'gw', generation: 2, resourceVersion: '2' } }),
    kept: [],
  },
  {
    what: 'a Namespace label judges every route again (a selector admits it)',
    change: (stores) => {
      stores.get('gateways')!.upsert({ ...gateway('gw', [httpListener('http', fromLabelled)]), metadata: { namespace: 'infra', name: 'gw', generation: 2, resourceVersion: '2' } });
      stores.get('namespaces')!.upsert({ ...namespaceObject('apps', { routes: 'yes' }), metadata: { name: 'apps', labels: { routes: 'yes' }, resourceVersion: '2' } });
    },
    kept: [],
  },
];

describe('the Gateway API model kept between renders', () => {
  for (const { what, change, kept } of changes) {
    it(`gives what a fresh read gives: ${what}`, () => {
      const stores = world();
      const memo = new GatewayApiMemo();
      const before = read(stores, memo);
      change(stores);
      const after = read(stores, memo);
      // The change matters: a memo that kept what it should not would give the model before it.
      expect(after).to.not.deep.equal(before);
      expect(after).to.deep.equal(read(stores));
      for (const [key, outcome] of after.routes) {
        const same = before.routes.get(key)?.records === outcome.records && outcome.records.length > 0;
        expect(same, `${key} kept`).to.equal(kept.includes(key));
      }
    });
  }

  it('after a few HTTPRoutes were replaced, keeps the rest of the model where they attach as before', () => {
    const stores = world();
    const memo = new GatewayApiMemo();
    const before = read(stores, memo);
    changes[0]!.change(stores);
    const weighted = read(stores, memo);
    expect(weighted.gateways).to.equal(before.gateways);
    expect(weighted.excluded).to.equal(before.excluded);
    expect(weighted.records).to.deep.equal(read(stores).records);
    // Served for another hostname: the listener's hostnames change, so the Gateways are counted again.
    stores.get('httproutes')!.upsert(servedFor('canary.example.org', '3'));
    const moved = read(stores, memo);
    expect(moved.gateways).to.not.equal(weighted.gateways);
    expect([...moved.gateways.get('infra/gw')!.attachedHostnames.get('http')!]).to.include('canary.example.org');
    expect(moved).to.deep.equal(read(stores));
    // Refused, then refused for another value: attached nowhere either time, but named for each.
    stores.get('httproutes')!.upsert(pathPrefix('/a\nbind :1', '4'));
    read(stores, memo);
    stores.get('httproutes')!.upsert(pathPrefix('/b#c', '5'));
    const refused = read(stores, memo);
    expect(refused.excluded.map((problem) => problem.message).join()).to.include('#');
    expect(refused).to.deep.equal(read(stores));
  });

  it('returns the last model when nothing changed, and reads again from nothing without a context', () => {
    const stores = world();
    const memo = new GatewayApiMemo();
    const first = read(stores, memo);
    expect(read(stores, memo)).to.equal(first);
    const sources = storeSources(stores, config.watchedResources, config.gatewayApi);
    const { context: _context, ...withoutContext } = sources;
    const again = readGatewayApi(withoutContext, memo);
    expect(again).to.not.equal(first);
    expect(again).to.deep.equal(first);
    expect(again.routes.get('apps/shop')!.records).to.not.equal(first.routes.get('apps/shop')!.records);
  });

  it('keeps the routed objects of unchanged HTTPRoutes, and the view model built from them is the one built from nothing', () => {
    const stores = world();
    const cache = new RouteSourcesCache();
    const modelCache = new MapModelCache();
    const first = mapModelSources(config, stores, cache)!;
    buildMapModel(first, modelCache);
    changes[0]!.change(stores);
    const second = mapModelSources(config, stores, cache)!;
    const routed = (sources: typeof first, name: string) => sources.httpRoutes!.find((entry) => entry.object.metadata.name === name);
    expect(routed(second, 'shop')).to.equal(routed(first, 'shop'));
    expect(routed(second, 'canary')).to.not.equal(routed(first, 'canary'));
    const built = buildMapModel(second, modelCache);
    expect(built).to.deep.equal(buildMapModel(mapModelSources(config, stores)!));
    expect(built.backends.find((backend) => backend.name.endsWith('_split'))!.servers.map((server) => server.weight)).to.deep.equal(['256', '256']);
  });

  it('builds the view model a build from nothing builds after each HTTPRoute change, whether the route was read again in place or routes came and went', () => {
    const stores = world();
    const cache = new RouteSourcesCache();
    const modelCache = new MapModelCache();
    buildMapModel(mapModelSources(config, stores, cache)!, modelCache);
    const routes = stores.get('httproutes')!;
    const suffixes: string[][] = [];
    const steps: readonly (() => unknown)[] = [
      () => changes[0]!.change(stores),
      () => routes.upsert(servedFor('canary.example.org', '3')),
      () => routes.upsert(pathPrefix('/a\nbind :1', '4')),
      () => routes.upsert(servedFor('canary.example.net', '5')),
      // A wildcard claimed, then given up, in place: the hosts below it are looked up in host-suffix.map, then no longer.
      () => routes.upsert(servedFor('*.canary.example.org', '6')),
      () => routes.upsert(servedFor('canary.example.org', '7')),
      () => routes.upsert(route('blog', 'apps', [{ name: 'api', port: 9090 }])),
      () => routes.delete(route('shop', 'apps', [])),
    ];
    for (const step of steps) {
      step();
      const built = buildMapModel(mapModelSources(config, stores, cache)!, modelCache);
      expect(built).to.deep.equal(buildMapModel(mapModelSources(config, stores)!));
      suffixes.push(built.suffixHosts.map((host) => host.host));
    }
    expect(suffixes.filter((hosts) => hosts.length > 0)).to.deep.equal([['*.canary.example.org']]);
  });

  it('gives the matches left out of a route as the render translated it: the same while its records are, keyed by the route as stored', () => {
    const stores = world();
    const unroutable = { matches: [{ path: { type: 'RegularExpression', value: '/a#b' } }], backendRefs: [{ name: 'web', port: 8080 }] };
    const partly = (rules: readonly unknown[], version: string, status?: object) => {
      const object = httpRoute('partly', { ...parent, hostnames: ['partly.example.com'], rules }, 'apps');
      return { ...object, metadata: { ...object.metadata, resourceVersion: version }, ...(status ? { status } : {}) };
    };
    const routes = stores.get('httproutes')!;
    routes.upsert(partly([{ backendRefs: [{ name: 'web', port: 8080 }] }, unroutable], '1'));
    const cache = new RouteSourcesCache();
    const leftOut = () => routingSources(config, stores, cache).outcome.leftOut;
    const found = [...leftOut().values()];
    expect(found.map((left) => left.all)).to.deep.equal([false]);
    expect(found[0]!.matches.map((match) => [match.field, match.reason])).to.deep.equal([['spec.rules[1].matches[0]', "a RegularExpression path with '#', '%' or '`'"]]);
    // Another route changes: this one's translation is the same one, and so is what it left out.
    changes[0]!.change(stores);
    expect([...leftOut().values()][0]!.matches).to.equal(found[0]!.matches);
    // Its own status written: what it left out is found by the route as stored now, not by the version first translated.
    const written = partly([{ backendRefs: [{ name: 'web', port: 8080 }] }, unroutable], '2', { parents: [] });
    routes.upsert(written);
    const afterStatus = leftOut();
    expect([...afterStatus.keys()]).to.deep.equal([written]);
    expect(afterStatus.get(written)!.matches).to.deep.equal(found[0]!.matches);
    // Fixed: nothing left out.
    routes.upsert(partly([{ backendRefs: [{ name: 'web', port: 8080 }] }], '3'));
    expect(leftOut().size).to.equal(0);
  });

  it('keeps the whole model while nothing changed, TLSRoutes and TCPRoutes watched but none stored, and reads them again when one comes', () => {
    const stores = world();
    const memo = new GatewayApiMemo();
    const before = read(stores, memo);
    expect(read(stores, memo)).to.equal(before);
    // A configuration that watches neither kind (as before they were served): the same model too.
    const httpOnly = config.watchedResources.filter((resource) => resource.kind !== 'TLSRoute' && resource.kind !== 'TCPRoute');
    const unwatched = new GatewayApiMemo();
    const first = readGatewayApi(storeSources(stores, httpOnly, config.gatewayApi), unwatched);
    expect(readGatewayApi(storeSources(stores, httpOnly, config.gatewayApi), unwatched)).to.equal(first);
    stores.get('gateways')!.upsert(gateway('gw', [httpListener('http', fromAll), { name: 'tcp', port: 9000, protocol: 'TCP', ...fromAll }]));
    stores.get('tcproutes')!.upsert(l4Route('TCPRoute', 'db', { ...parent, rules: [{ backendRefs: [{ name: 'web', namespace: 'apps', port: 8080 }] }] }, 'infra'));
    const after = read(stores, memo);
    expect([...after.l4Routes.keys()]).to.deep.equal(['TCPRoute infra/db']);
    expect(after).to.deep.equal(read(stores));
  });
});
