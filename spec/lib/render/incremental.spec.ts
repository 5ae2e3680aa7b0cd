import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources } from '../../../lib/routing-view/model-sources.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

/**
 * Renders reuse what did not change (view model parts, section output);
 * these specs hold every reusing render to what a fresh renderer produces
 * from the same stores, after every kind of change.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

function ingress(i: number, paths: string[] = ['/']): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: `app-${i}`, namespace: 'default', resourceVersion: paths.join(',') },
    spec: {
      ingressClassName: 'haproxy',
      rules: [
        {
          host: `app-${i}.example.com`,
          http: { paths: paths.map((path) => ({ path, pathType: 'Prefix', backend: { service: { name: `svc-${i % 4}`, port: { number: 80 } } } })) },
        },
      ],
    },
  };
}

function service(i: number, target = 8080): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'default', resourceVersion: String(target) }, spec: { ports: [{ port: 80, targetPort: target }] } };
}

function slice(i: number, addresses: string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `svc-${i}-a`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${i}` }, resourceVersion: addresses.join(',') },
    addressType: 'IPv4',
    ports: [{ port: 8080 }],
    endpoints: addresses.map((address) => ({ addresses: [address] })),
  };
}

function world() {
  return buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', Array.from({ length: 8 }, (_, i) => ingress(i))],
      ['services', Array.from({ length: 4 }, (_, i) => service(i))],
      ['endpointslices', Array.from({ length: 4 }, (_, i) => slice(i, [`10.0.${i}.1`]))],
    ]),
    config.ignoreFields,
  );
}

type Change = { readonly resource: string; readonly object: KubeObject } | { readonly resource: string; readonly delete: KubeObject };

/** A seeded sequence of changes of every kind the stores see. */
function* changes(seed: number): Generator<Change> {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let step = 0; step < 80; step++) {
    const i = Math.floor(random() * 8);
    const kind = Math.floor(random() * 5);
    if (kind === 0)
      yield {
        resource: 'endpointslices',
        object: slice(
          i % 4,
          Array.from({ length: 1 + Math.floor(random() * 3) }, (_, j) => `10.0.${i % 4}.${j + Math.floor(random() * 5)}`),
        ),
      };
    else if (kind === 1) yield { resource: 'ingresses', object: ingress(i, random() < 0.5 ? ['/'] : ['/', `/p${Math.floor(random() * 3)}`]) };
    else if (kind === 2) yield { resource: 'services', object: service(i % 4, random() < 0.5 ? 8080 : 9090) };
    else if (kind === 3) yield { resource: 'endpointslices', delete: slice(i % 4, []) };
    else yield { resource: 'ingresses', delete: ingress(i) };
  }
}

describe('incremental rendering', () => {
  it('gives the same view model as a fresh build after every change, reusing what did not change', () => {
    const stores = world();
    const cache = new MapModelCache();
    const first = buildMapModel(mapModelSources(config, stores)!, cache);
    expect(buildMapModel(mapModelSources(config, stores)!, cache)).to.equal(first);
    for (const change of changes(7)) {
      const store = stores.get(change.resource)!;
      if ('object' in change) store.upsert(change.object);
      else store.delete(change.delete);
      const reused = buildMapModel(mapModelSources(config, stores)!, cache);
      const fresh = buildMapModel(mapModelSources(config, stores)!);
      expect(reused).to.deep.equal(fresh);
    }
  });

  it('keeps unchanged lists and items as the same objects when one endpoint moves', () => {
    const stores = world();
    const cache = new MapModelCache();
    const before = buildMapModel(mapModelSources(config, stores)!, cache);
    stores.get('endpointslices')!.upsert(slice(1, ['10.0.1.9']));
    const after = buildMapModel(mapModelSources(config, stores)!, cache);
    expect(after.hosts).to.equal(before.hosts);
    expect(after.prefixRoutes).to.equal(before.prefixRoutes);
    expect(after.backends).to.not.equal(before.backends);
    const changed = after.backends.filter((backend, i) => backend !== before.backends[i]);
    expect(changed.map((backend) => backend.name)).to.deep.equal(['default_svc-1_80']);
  });

  it('renders the same files and line origins as a fresh renderer after every change', () => {
    const stores = world();
    const render = createRenderer(config, routingViews);
    render({ stores, baseDir: '/tmp/a' });
    for (const change of changes(11)) {
      const store = stores.get(change.resource)!;
      if ('object' in change) store.upsert(change.object);
      else store.delete(change.delete);
      const reused = render({ stores, baseDir: '/tmp/a' });
      const fresh = createRenderer(config, routingViews)({ stores, baseDir: '/tmp/a' });
      expect(reused.files).to.deep.equal(fresh.files);
      expect([...reused.origins]).to.deep.equal([...fresh.origins]);
      expect(reused.warnings).to.deep.equal(fresh.warnings);
    }
  });

  it('does not reuse output that depends on the base directory when it changes', () => {
    const stores = world();
    const render = createRenderer(config, routingViews);
    const a = render({ stores, baseDir: '/tmp/a' });
    const b = render({ stores, baseDir: '/tmp/b' });
    expect(a.files.config).to.include('default-path origin /tmp/a');
    expect(b.files.config).to.include('default-path origin /tmp/b');
    expect(b.files).to.deep.equal(createRenderer(config, routingViews)({ stores, baseDir: '/tmp/b' }).files);
  });

  it('re-renders reused section items when a root value they read changes', () => {
    const custom = loadControllerConfig(
      readFileSync(defaultConfigPath(), 'utf8').replace(
        /\n  haproxyConfig: \|\n(    .*\n|\n)*?(?=\n  maps:)/,
        '\n  haproxyConfig: |\n    {{#routes.backends}}\n    backend {{name}} {{paths.base}}\n    {{/routes.backends}}\n',
      ),
    );
    if (!custom.ok) throw new Error(custom.errors.join('\n'));
    const stores = world();
    const render = createRenderer(custom.config, routingViews);
    render({ stores, baseDir: '/tmp/a' });
    render({ stores, baseDir: '/tmp/a' });
    expect(render({ stores, baseDir: '/tmp/a' }).files.config).to.match(/^backend default_svc-0_80 \/tmp\/a$/m);
    expect(render({ stores, baseDir: '/tmp/b' }).files.config)
      .to.match(/^backend default_svc-0_80 \/tmp\/b$/m)
      .and.not.include('/tmp/a');
  });

  it('renders the same files as a fresh renderer after every change to TLSRoutes, TCPRoutes and the stores they read', () => {
    const gateway = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
      spec: {
        gatewayClassName: 'haproxy',
        listeners: [
          { name: 'passthrough', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
          { name: 'tcp', port: 9000, protocol: 'TCP' },
        ],
      },
    };
    const gatewayClass = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'haproxy' },
      spec: { controllerName: 'haproxy-template-ic.io/gateway-controller' },
    };
    const l4Route = (kind: 'TLSRoute' | 'TCPRoute', i: number, version: number, shares: readonly (readonly [number, number])[], hostname?: string): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind,
      metadata: { name: `${kind.toLowerCase()}-${i}`, namespace: 'default', resourceVersion: String(version), creationTimestamp: `2026-01-0${1 + (i % 3)}T00:00:00Z` },
      spec: {
        parentRefs: [{ name: 'gw', sectionName: kind === 'TLSRoute' ? 'passthrough' : 'tcp' }],
        ...(hostname === undefined ? {} : { hostnames: [hostname] }),
        rules: [{ backendRefs: shares.map(([index, weight]) => ({ name: `svc-${index}`, port: 80, weight })) }],
      },
    });
    const stores = buildStores(
      config.watchedResources,
      new Map([
        ['gatewayclasses', [gatewayClass]],
        ['gateways', [gateway]],
        ['tlsroutes', Array.from({ length: 6 }, (_, i) => l4Route('TLSRoute', i, 0, [[i % 4, 1]], `tls-${i}.example.com`))],
        ['tcproutes', [l4Route('TCPRoute', 0, 0, [[0, 1]])]],
        ['services', Array.from({ length: 4 }, (_, i) => service(i))],
        ['endpointslices', Array.from({ length: 4 }, (_, i) => slice(i, [`10.0.${i}.1`]))],
      ]),
      config.ignoreFields,
    );
    const render = createRenderer(config, routingViews);
    expect(render({ stores, baseDir: '/tmp/a' }).files.config).to.include('bind *:8443');
    let state = 5;
    const random = (n: number) => Math.floor(((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    for (let step = 1; step <= 60; step++) {
      const i = random(6);
      const shares = Array.from({ length: 1 + random(2) }, () => [random(5), random(3)] as const);
      const kind = random(6);
      // Weights alone, backends (svc-4 is missing: refused) and hostnames of the routes; their deletion; endpoints and ports of the Services.
      if (kind === 0) stores.get('tlsroutes')!.upsert(l4Route('TLSRoute', i, step, shares, `tls-${random(3) === 0 ? i + 1 : i}.example.com`));
      else if (kind === 1) stores.get('tlsroutes')!.delete(l4Route('TLSRoute', i, step, []));
      else if (kind === 2) stores.get('tcproutes')!.upsert(l4Route('TCPRoute', i % 2, step, shares));
      else if (kind === 3) stores.get('endpointslices')!.upsert(slice(i % 4, [`10.0.${i % 4}.${1 + random(3)}`]));
      else if (kind === 4) stores.get('services')!.upsert(service(i % 4, random(2) === 0 ? 8080 : 9090));
      else
        stores.get('tlsroutes')!.upsert(
          l4Route(
            'TLSRoute',
            i,
            step,
            [
              [i % 4, 1 + random(3)],
              [(i + 1) % 4, 1 + random(3)],
            ],
            `tls-${i}.example.com`,
          ),
        );
      const reused = render({ stores, baseDir: '/tmp/a' });
      const fresh = createRenderer(config, routingViews)({ stores, baseDir: '/tmp/a' });
      expect(reused.files, `step ${step}`).to.deep.equal(fresh.files);
      expect(reused.warnings, `step ${step}`).to.deep.equal(fresh.warnings);
      expect(reused.excluded, `step ${step}`).to.deep.equal(fresh.excluded);
    }
  });
});
