import { expect } from 'chai';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import type { RendererViews } from '../../../lib/render/views.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

/**
 * The views a renderer is given, by name: the routing view as `routes`,
 * and as `ingress`, its old name, which a template may read for one more
 * release and which is told once per template, with its line.
 */

function configWith(haproxyConfig: string, partials = ''): ControllerConfig {
  const text = `
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    kind: Ingress
  services:
    apiVersion: v1
    kind: Service
  endpointslices:
    apiVersion: discovery.k8s.io/v1
    kind: EndpointSlice
    indexBy: [metadata.namespace, "metadata.labels['kubernetes.io/service-name']"]
templateValues:
  item: { ingress: from-the-item }
templates:
  haproxyConfig: ${JSON.stringify(`${haproxyConfig}\n`)}
${partials}`;
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

const ingress = (name: string, host: string): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: 'default' },
  spec: { ingressClassName: 'haproxy', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
});
const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } };
const slice: KubeObject = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ port: 8080 }],
  endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
};

function storesOf(config: ControllerConfig, ingresses: readonly KubeObject[]) {
  return buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', [...ingresses]],
      ['services', [service]],
      ['endpointslices', [slice]],
    ]),
    config.ignoreFields,
  );
}

const lines = (name: string) => `# hosts\n{{#${name}.hosts}}\nhost {{host}}\n{{/${name}.hosts}}\n{{#${name}.backends}}\nbackend {{name}}\n{{/${name}.backends}}`;

describe('the views a renderer is given', () => {
  it('renders a template reading `ingress` as one reading `routes`, and tells each template reading the old name once, with its line', () => {
    const byRoutes = configWith(lines('routes'));
    const byIngress = configWith(lines('ingress'));
    const world = [ingress('a', 'a.example.com'), ingress('b', 'b.example.com')];
    const routes = createRenderer(byRoutes, routingViews)({ stores: storesOf(byRoutes, world) });
    const render = createRenderer(byIngress, routingViews);
    const old = render({ stores: storesOf(byIngress, world) });
    expect(old.files).to.deep.equal(routes.files);
    expect(routes.files.config).to.include('host a.example.com\nhost b.example.com\nbackend default_web_80\n');
    expect(routes.deprecations, 'a template reading `routes`').to.equal(undefined);
    // The template's first read (line 2, the first section) is told, and only that.
    expect(old.deprecations).to.deep.equal(['templates.haproxyConfig: line 2: reads `ingress`, the old name of `routes`, which goes in the next release: read `routes` instead']);
    // Not at every render: the configuration has said it once.
    expect(render({ stores: storesOf(byIngress, [ingress('c', 'c.example.com')]) }).deprecations).to.equal(undefined);
  });

  it('tells a partial reading the old name on its own, and leaves a name of an item that is not the view alone', () => {
    const config = configWith('{{#templateValues.item}}\nitem {{ingress}}\n{{/templateValues.item}}\n{{> more}}', '  partials:\n    more: "{{^ingress.hosts}}no hosts{{/ingress.hosts}}"\n');
    const output = createRenderer(config, routingViews)({ stores: storesOf(config, []) });
    expect(output.files.config).to.equal('item from-the-item\nno hosts');
    expect(output.deprecations).to.deep.equal(['templates.partials.more: line 1: reads `ingress`, the old name of `routes`, which goes in the next release: read `routes` instead']);
  });

  it('gives templates what a view provides, the files it brings and what it left out, and each renderer its own view', () => {
    let made = 0;
    const views: RendererViews = {
      views: {
        extra: () => {
          made++;
          return (stores) => ({
            value: { count: stores.get('ingresses')!.list().length },
            certificates: [{ file: 'extra.pem', pem: 'PEM' }],
            generalFiles: [{ file: 'extra-ca.pem', pem: 'CA' }],
            excluded: [{ object: 'Extra x', field: 'spec', message: 'left out' }],
            warnings: [{ object: 'Extra y', field: 'spec', message: 'degraded' }],
          });
        },
      },
    };
    const config = configWith('ingresses {{extra.count}}');
    const render = createRenderer(config, views);
    const output = render({ stores: storesOf(config, [ingress('a', 'a.example.com')]) });
    expect(output.files.config).to.equal('ingresses 1\n');
    expect(output.files.certificates).to.deep.equal({ 'extra.pem': 'PEM' });
    expect(output.files.files).to.deep.equal({ 'extra-ca.pem': 'CA' });
    expect(output.excluded).to.deep.equal([{ object: 'Extra x', field: 'spec', message: 'left out' }]);
    expect(output.warnings).to.deep.equal([{ object: 'Extra y', field: 'spec', message: 'degraded' }]);
    render({ stores: storesOf(config, []) });
    createRenderer(config, views);
    expect(made, 'once per renderer').to.equal(2);
  });

  it('refuses a view under a name of the renderer, and an old name of no view', () => {
    const config = configWith('x');
    const view = () => () => ({ value: 1 });
    expect(() => createRenderer(config, { views: { paths: view } })).to.throw('a view cannot be named paths');
    expect(() => createRenderer(config, { views: { routes: view }, deprecatedNames: { ingress: 'route' } })).to.throw('ingress is an old name of route, which is no view');
    expect(() => createRenderer(config, { views: { routes: view }, deprecatedNames: { routes: 'routes' } })).to.throw('routes is both a view and an old name of routes');
  });
});
