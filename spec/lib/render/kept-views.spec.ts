import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { cacheInputs } from '../../../lib/render/cache-inputs.ts';
import { keptViews } from '../../../lib/render/kept-views.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

/**
 * A controller configuration edit hands the routing view, with its
 * per-object caches, to the next configuration's renderer when cacheInputs
 * says it holds: the renders that follow must be what a fresh renderer makes
 * of the same stores, and an edit that changes how the stores are read must
 * not hand it over.
 */

const shipped = readFileSync(defaultConfigPath(), 'utf8');

function load(text: string): ControllerConfig {
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

function edited(from: string, to: string): ControllerConfig {
  expect(shipped).to.contain(from);
  return load(shipped.replace(from, to));
}

const ingress = (i: number): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: `app-${i}`, namespace: 'default', resourceVersion: '1' },
  spec: {
    ingressClassName: 'haproxy',
    rules: [{ host: `app-${i}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } }] } }],
  },
});
const service = (i: number): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: `svc-${i}`, namespace: 'default', resourceVersion: '1' },
  spec: { ports: [{ port: 80, targetPort: 8080 }] },
});
const slice = (i: number, address: string): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `svc-${i}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${i}` }, resourceVersion: address },
  addressType: 'IPv4',
  ports: [{ port: 8080 }],
  endpoints: [{ addresses: [address] }],
});

describe('the routing view across a controller configuration edit', () => {
  const config = load(shipped);

  it('has the same inputs after an edit of templates, their values, timings and validation tests', () => {
    expect(cacheInputs(edited('timeout client 30s', 'timeout client 31s'))).to.equal(cacheInputs(config));
    expect(cacheInputs(edited('debounce: 500ms', 'debounce: 200ms'))).to.equal(cacheInputs(config));
    expect(cacheInputs(edited('  statusPort: 8404\n', '  statusPort: 8405\n'))).to.equal(cacheInputs(config));
  });

  it('has other inputs after an edit that changes how the stores are read', () => {
    expect(cacheInputs(edited('  className: haproxy\n', '  className: other\n'))).to.not.equal(cacheInputs(config));
    expect(cacheInputs(edited('\ntemplates:', '\ngatewayApi: { controllerName: example.com/other }\ntemplates:'))).to.not.equal(cacheInputs(config));
    expect(cacheInputs(edited('fieldSelector: type=kubernetes.io/tls', 'fieldSelector: type=kubernetes.io/tls,metadata.name!=x'))).to.not.equal(cacheInputs(config));
    expect(
      cacheInputs(edited('  namespaces:\n    apiVersion: v1\n    kind: Namespace\n', '  namespaces:\n    apiVersion: v1\n    kind: Namespace\n    labelSelector: team=web\n')),
    ).to.not.equal(cacheInputs(config));
  });

  it('is handed to the next renderer while its inputs hold, and made anew when they do not', () => {
    const views = keptViews(routingViews, cacheInputs);
    const routes = views.views['routes']!;
    const view = routes(config);
    expect(routes(edited('timeout client 30s', 'timeout client 31s'))).to.equal(view);
    const other = routes(edited('  className: haproxy\n', '  className: other\n'));
    expect(other).to.not.equal(view);
    expect(routes(config)).to.not.equal(other);
    expect(views.deprecatedNames).to.deep.equal(routingViews.deprecatedNames);
  });

  it('taken over by the edited configuration, renders what a fresh renderer renders, through later changes', () => {
    const next = edited('timeout client 30s', 'timeout client 31s');
    const objects = new Map([
      ['ingresses', Array.from({ length: 6 }, (_, i) => ingress(i))],
      ['services', Array.from({ length: 6 }, (_, i) => service(i))],
      ['endpointslices', Array.from({ length: 6 }, (_, i) => slice(i, `10.0.0.${i + 1}`))],
    ]);
    const stores = buildStores(config.watchedResources, objects, config.ignoreFields);
    const views = keptViews(routingViews, cacheInputs);
    const before = createRenderer(config, views)({ stores });
    const taken = createRenderer(next, views);
    const fresh = () => createRenderer(next, routingViews)({ stores });
    const first = taken({ stores });
    expect(first.files.config).to.contain('timeout client 31s');
    expect(first.files).to.deep.equal(fresh().files);
    expect(first.files.maps).to.deep.equal(before.files.maps);
    // The stores change after the edit: the handed-over caches follow them as their own renderer's would.
    (stores.get('endpointslices') as IndexedStore).upsert(slice(2, '10.0.9.9'));
    (stores.get('ingresses') as IndexedStore).delete(ingress(4));
    const later = taken({ stores });
    expect(later.files).to.deep.equal(fresh().files);
    expect(JSON.stringify(later.files)).to.contain('10.0.9.9');
  });

  it('taken over with stores built anew (kept stores that failed and were listed again), renders what a fresh renderer renders', () => {
    const objects = new Map([
      ['ingresses', Array.from({ length: 6 }, (_, i) => ingress(i))],
      ['services', Array.from({ length: 6 }, (_, i) => service(i))],
      ['endpointslices', Array.from({ length: 6 }, (_, i) => slice(i, `10.0.0.${i + 1}`))],
    ]);
    const views = keptViews(routingViews, cacheInputs);
    createRenderer(config, views)({ stores: buildStores(config.watchedResources, objects, config.ignoreFields) });
    const next = edited('timeout client 30s', 'timeout client 31s');
    const rebuilt = buildStores(next.watchedResources, new Map([...objects, ['ingresses', objects.get('ingresses')!.slice(1)]]), next.ignoreFields);
    expect(createRenderer(next, views)({ stores: rebuilt }).files).to.deep.equal(createRenderer(next, routingViews)({ stores: rebuilt }).files);
  });
});
