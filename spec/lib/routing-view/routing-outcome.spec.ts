import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { RouteSourcesCache, routingSources } from '../../../lib/routing-view/model-sources.ts';
import type { RoutingOutcome } from '../../../lib/routing-view/routing-outcome.ts';
import { routingView } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { gateway, gatewayClass, httpListener, httpRoute, l4Route, namespaceObject } from '../gateway/fixtures.ts';
import { backend, endpointSlice, ingress, path, rule, service } from '../ingress/fixtures.ts';

/**
 * What a render's routing translation hands the status side streams
 * (lib/routing-view/routing-outcome.ts): the very model and translations
 * the render used, and each object as stored when status is written.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const fromAll = { allowedRoutes: { namespaces: { from: 'All' } } };
const shop = httpRoute('shop', { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['shop.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }, 'apps');
const web = service('web', [{ port: 8080 }], 'apps');

function world() {
  return buildStores(
    config.watchedResources,
    new Map<string, KubeObject[]>([
      ['gatewayclasses', [gatewayClass()]],
      ['gateways', [gateway('gw', [httpListener('http', fromAll)])]],
      ['httproutes', [shop]],
      ['services', [web]],
      ['endpointslices', [endpointSlice('web-1', 'web', [{ port: 8080 }], [{ addresses: ['10.0.0.1'], ready: true }], { namespace: 'apps' })]],
      ['namespaces', [namespaceObject('apps'), namespaceObject('infra')]],
      [
        'ingresses',
        [
          ingress('ours', { namespace: 'apps', rules: [rule('ours.example.com', path('/', 'web', 8080))] }),
          ingress('theirs', { namespace: 'apps', className: 'nginx', defaultBackend: backend('web', 8080) }),
        ],
      ],
    ]),
    config.ignoreFields,
  );
}

/** The object with a status written on it, as the API server's answer comes back. */
const withStatus = (object: KubeObject, status: object): KubeObject => ({ ...object, metadata: { ...object.metadata, resourceVersion: '99' }, status });

describe('the routing outcome a render hands to status', () => {
  it('is the Gateway API model and the translations the render used, not another read', () => {
    const stores = world();
    const cache = new RouteSourcesCache();
    const { sources, outcome } = routingSources(config, stores, cache);
    expect(outcome.gatewayApi).to.equal(cache.last!.model);
    // The map model was given these very translations.
    expect(sources!.httpRoutes).to.deep.equal([cache.last!.translated[0]]);
    expect(sources!.httpRoutes![0]).to.equal(cache.last!.translated[0]);
    // A render after nothing changed hands over the same model again.
    expect(routingSources(config, stores, cache).outcome.gatewayApi).to.equal(outcome.gatewayApi);
  });

  it('reads the Gateway API model even when nothing routes Ingresses, for status', () => {
    const stores = world();
    const gatewayOnly = { ...config, watchedResources: config.watchedResources.filter((resource) => resource.kind !== 'Ingress') };
    const { sources, outcome } = routingSources(gatewayOnly, stores);
    expect(sources).to.equal(undefined);
    expect([...outcome.gatewayApi!.routes.keys()]).to.deep.equal(['apps/shop']);
  });

  it('gives each Gateway API object as stored now: the one rendered, or one changed in its status alone; none when changed otherwise or gone', () => {
    const stores = world();
    const outcome = routingSources(config, stores).outcome;
    const model = outcome.gatewayApi!;
    const routeRead = model.routes.get('apps/shop')!.object;
    const gatewayRead = model.gateways.get('infra/gw')!.object;
    const classRead = model.classes.get('haproxy')!.object;
    expect(outcome.currentGatewayObject('httproutes', routeRead)).to.equal(routeRead);
    const written = withStatus(routeRead, { parents: [] });
    stores.get('httproutes')!.upsert(written);
    expect(outcome.currentGatewayObject('httproutes', routeRead)).to.equal(written);
    // A new listener is a change its render has yet to judge.
    stores.get('gateways')!.upsert({ ...gateway('gw', [httpListener('http', fromAll), httpListener('more', { port: 8080 })]), metadata: { ...gatewayRead.metadata, generation: 2 } });
    expect(outcome.currentGatewayObject('gateways', gatewayRead)).to.equal(undefined);
    stores.get('gatewayclasses')!.delete(classRead);
    expect(outcome.currentGatewayObject('gatewayclasses', classRead)).to.equal(undefined);
  });

  it('gives a TCPRoute the render judged as stored now, from the TCPRoute store', () => {
    const stores = world();
    const tcpListener = { name: 'tcp', port: 9000, protocol: 'TCP', ...fromAll };
    stores.get('gateways')!.upsert(gateway('gw', [httpListener('http', fromAll), tcpListener]));
    const db = l4Route('TCPRoute', 'db', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }, 'apps');
    stores.get('tcproutes')!.upsert(db);
    const outcome = routingSources(config, stores).outcome;
    const routeRead = outcome.gatewayApi!.l4Routes.get('TCPRoute apps/db')!.object;
    expect(outcome.currentGatewayObject('tcproutes', routeRead)).to.equal(routeRead);
    const written = withStatus(routeRead, { parents: [] });
    stores.get('tcproutes')!.upsert(written);
    expect(outcome.currentGatewayObject('tcproutes', routeRead)).to.equal(written);
  });

  it('lists the Ingresses of the class as the render was given them, each as stored now', () => {
    const stores = world();
    const outcome = routingSources(config, stores).outcome;
    const names = () => outcome.classIngresses().map(({ resource, ingress: served }) => `${resource.resource} ${served.metadata.name} ${served.metadata.resourceVersion}`);
    expect(names()).to.deep.equal(['ingresses ours 1']);
    const ingresses = stores.get('ingresses')!;
    const ours = ingresses.get('apps', 'ours')!;
    ingresses.upsert(withStatus(ours, { loadBalancer: { ingress: [{ ip: '10.0.0.7' }] } }));
    // Added after the render: its own render brings it.
    ingresses.upsert(ingress('later', { namespace: 'apps', defaultBackend: backend('web', 8080) }));
    expect(names()).to.deep.equal(['ingresses ours 99']);
    // Moved to another class since: left to its render.
    ingresses.upsert({ ...ours, spec: { ...(ours['spec'] as object), ingressClassName: 'nginx' } });
    expect(names()).to.deep.equal([]);
  });

  it("says of each Ingress of the class whether the render's map model served it, as that render decided", () => {
    const stores = world();
    const ingresses = stores.get('ingresses')!;
    ingresses.upsert(ingress('evil', { namespace: 'apps', rules: [rule('evil.example.com', path('/x"y', 'web', 8080))] }));
    const view = routingView(config);
    const outcome = view(stores).outcome as RoutingOutcome;
    const served = (of: RoutingOutcome) => of.classIngresses().map(({ ingress: object, served: yes }) => `${object.metadata.name} ${yes}`);
    expect(served(outcome)).to.deep.equal(['ours true', 'evil false']);
    // Mended: the last render's outcome leaves it to the next render, which serves it.
    const mended = ingress('evil', { namespace: 'apps', rules: [rule('evil.example.com', path('/x', 'web', 8080))] });
    ingresses.upsert({ ...mended, metadata: { ...mended.metadata, resourceVersion: '2' } });
    expect(served(outcome)).to.deep.equal(['ours true']);
    expect(served(view(stores).outcome as RoutingOutcome)).to.deep.equal(['ours true', 'evil true']);
  });
});
