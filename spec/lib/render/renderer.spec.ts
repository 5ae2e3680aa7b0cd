import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { createRenderer, RenderError } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { refusedDirectives } from '../../../lib/haproxy/check.ts';
import { CONTROLLER_LUA } from '../../../lib/lua/controller-scripts.ts';

/** A configuration over a custom resource, with a relation to Services. */
function configWith(haproxyConfig: string, extra = ''): ControllerConfig {
  const text = `
watchedResources:
  routes:
    apiVersion: example.com/v1
    kind: Route
    relations:
      services: { resource: services, keys: [metadata.namespace, spec.service] }
  services:
    apiVersion: v1
    kind: Service
templateValues:
  port: 8080
  banner: "custom banner"
  unsafe: "a\\nb"
templates:
  haproxyConfig: |
${haproxyConfig
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
${extra}`;
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

function route(name: string, spec: Record<string, unknown>, namespace = 'default'): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Route', metadata: { name, namespace }, spec };
}

function service(name: string, namespace = 'default'): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ port: 80 }] } };
}

function render(config: ControllerConfig, routes: KubeObject[], services: KubeObject[] = [], baseDir?: string) {
  const stores = buildStores(
    config.watchedResources,
    new Map([
      ['routes', routes],
      ['services', services],
    ]),
    config.ignoreFields,
  );
  return createRenderer(config, routingViews)({ stores, ...(baseDir ? { baseDir } : {}) });
}

const routeLines = '{{#resources.routes}}\nuse {{metadata.name}} {{spec.host}}{{spec.path}}\n{{/resources.routes}}';

describe('renderer', () => {
  it('renders any watched resource in namespace/name order, without HTML escaping', () => {
    const config = configWith(routeLines);
    const output = render(config, [
      route('b', { host: 'b.example.com', path: '/x=1' }),
      route('a', { host: 'a.example.com', path: '/' }),
      route('c', { host: 'c.example.com', path: '/' }, 'aaa'),
    ]);
    expect(output.files.config).to.equal('use c c.example.com/\nuse a a.example.com/\nuse b b.example.com/x=1\n');
    expect(output.excluded).to.deep.equal([]);
  });

  it('resolves declared relations lazily through the target index', () => {
    const config = configWith('{{#resources.routes}}\n{{metadata.name}} ->{{#services}} {{metadata.namespace}}/{{metadata.name}}{{/services}}\n{{/resources.routes}}');
    const output = render(config, [route('r1', { service: 'web' }), route('r2', { service: 'absent' }), route('r3', {}, 'other')], [service('web'), service('web', 'other'), service('api')]);
    expect(output.files.config).to.equal('r1 -> default/web\nr2 ->\nr3 ->\n');
  });

  it('excludes an object whose value is unsafe where it stands, names it, and renders the rest', () => {
    const config = configWith(routeLines);
    const output = render(config, [
      route('good', { host: 'good.example.com', path: '/' }),
      route('evil', { host: 'evil.example.com\n  lua-load /tmp/x.lua', path: '/' }),
      route('spaced', { host: 'a b', path: '/' }),
    ]);
    expect(output.files.config).to.equal('use good good.example.com/\n');
    expect(output.excluded).to.deep.equal([
      {
        object: 'Route default/evil',
        field: 'spec.host',
        message: 'value contains U+000A (templates.haproxyConfig: line 2: {{spec.host}})',
      },
      {
        object: 'Route default/spaced',
        field: 'spec.host',
        message: 'value contains " " (templates.haproxyConfig: line 2: {{spec.host}})',
      },
    ]);
  });

  it('lets raw tags carry spaces and quotes but never a new line', () => {
    const config = configWith('{{#resources.routes}}\n  option {{{spec.option}}}\n{{/resources.routes}}');
    const output = render(config, [route('a', { option: 'httpchk GET /healthz "HTTP/1.1"' }), route('b', { option: 'httpchk\nbackend evil' })]);
    expect(output.files.config).to.equal('  option httpchk GET /healthz "HTTP/1.1"\n');
    expect(output.excluded.map((p) => [p.object, p.field])).to.deep.equal([['Route default/b', 'spec.option']]);
  });

  it('charges a value read through {{.}} to the object that held it', () => {
    const config = configWith('{{#resources.routes}}\nhosts{{#spec.hosts}} {{.}}{{/spec.hosts}}\n{{/resources.routes}}');
    const output = render(config, [route('a', { hosts: ['a.example.com', 'b.example.com'] }), route('b', { hosts: ['ok', '#x'] })]);
    expect(output.files.config).to.equal('hosts a.example.com b.example.com\n');
    expect(output.excluded.map((p) => p.object)).to.deep.equal(['Route default/b']);
  });

  it('refuses a list or mapping where a single value belongs', () => {
    const config = configWith('{{#resources.routes}}\nuse {{spec}}\n{{/resources.routes}}');
    const output = render(config, [route('a', { host: 'x' })]);
    expect(output.files.config).to.equal('');
    expect(output.excluded).to.have.length(1);
    expect(output.excluded[0]?.message).to.include('is not a single value');
  });

  it('fails the whole render, naming template and line, when a value of its own is unsafe', () => {
    const config = configWith('global\n  description {{templateValues.unsafe}}');
    expect(() => render(config, [])).to.throw(RenderError, 'templates.haproxyConfig: line 2: {{templateValues.unsafe}}: value contains U+000A');
  });

  it('names the partial and its line for a value a partial inserts', () => {
    const config = configWith('{{#resources.routes}}\n{{> route}}\n{{/resources.routes}}', '  partials:\n    route: "# route\\nuse {{spec.host}}\\n"');
    const output = render(config, [route('a', { host: 'x y' })]);
    expect(output.excluded[0]?.message).to.equal('value contains " " (templates.partials.route: line 2: {{spec.host}})');
  });

  it('puts the base directory of the request, or the configured one, in paths.base', () => {
    const config = configWith('default-path origin {{paths.base}}\nmap {{paths.maps}}/host.map');
    expect(render(config, []).files.config).to.equal('default-path origin /etc/haproxy\nmap maps/host.map\n');
    expect(render(config, [], [], '/tmp/render-1').files.config).to.equal('default-path origin /tmp/render-1\nmap maps/host.map\n');
  });

  it('renders maps and general files with their own templates', () => {
    const config = configWith(
      'global',
      '  maps:\n    hosts.map: "{{#resources.routes}}{{spec.host}} {{metadata.name}}\\n{{/resources.routes}}"\n  files:\n    banner.txt: "{{{templateValues.banner}}}"',
    );
    const output = render(config, [route('a', { host: 'a.example.com' })]);
    expect(output.files.maps).to.deep.equal({ 'hosts.map': 'a.example.com a\n' });
    expect(output.files.files).to.deep.equal({ 'banner.txt': 'custom banner' });
  });
});

describe('renderer line origins', () => {
  it('maps every output line to its template line and the objects whose values are on it', () => {
    const config = configWith('global\n  maxconn 100\n{{#resources.routes}}\nbackend {{metadata.name}}\n  server s {{spec.host}}:80\n{{/resources.routes}}', '  partials:\n    unused: "x"');
    const routes = [route('a', { host: '10.0.0.1' }), route('b', { host: '10.0.0.2' })];
    const output = render(config, routes);
    expect(output.files.config.split('\n')).to.have.length(7);
    const origins = output.origins.get('haproxy.cfg')!;
    expect(origins.map(({ template, line, objects, sources }) => ({ template, line, objects, fields: sources.map((s) => s.field) }))).to.deep.equal([
      { template: 'templates.haproxyConfig', line: 1, objects: [], fields: [] },
      { template: 'templates.haproxyConfig', line: 2, objects: [], fields: [] },
      { template: 'templates.haproxyConfig', line: 4, objects: ['Route default/a'], fields: ['metadata.name'] },
      { template: 'templates.haproxyConfig', line: 5, objects: ['Route default/a'], fields: ['spec.host'] },
      { template: 'templates.haproxyConfig', line: 4, objects: ['Route default/b'], fields: ['metadata.name'] },
      { template: 'templates.haproxyConfig', line: 5, objects: ['Route default/b'], fields: ['spec.host'] },
    ]);
    // The object as stored, not a view of it: the quarantine recognises it by identity.
    expect(origins[3]!.sources[0]!.object).to.equal(routes[0]);
  });

  it('names partials in origins and maps each file separately', () => {
    const config = configWith(
      'global\n{{> head}}\n',
      '  partials:\n    head: "# head\\n  description {{templateValues.port}}\\n"\n  maps:\n    a.map: "{{#resources.routes}}{{metadata.name}} x\\n{{/resources.routes}}"',
    );
    const output = render(config, [route('r', {})]);
    expect(output.origins.get('haproxy.cfg')!.map(({ template, line, objects, sources }) => ({ template, line, objects, sources }))).to.deep.equal([
      { template: 'templates.haproxyConfig', line: 1, objects: [], sources: [] },
      { template: 'templates.partials.head', line: 1, objects: [], sources: [] },
      { template: 'templates.partials.head', line: 2, objects: [], sources: [] },
    ]);
    expect(output.origins.get('maps/a.map')!.map((origin) => [origin.template, origin.line, origin.objects])).to.deep.equal([['templates.maps.a.map', 1, ['Route default/r']]]);
  });
});

describe('renderer line origins of the Ingress view model', () => {
  it('charges the lines of the shipped templates to the Ingress, Service, EndpointSlice or Secret each comes from, with the field', async () => {
    const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const { config } = loaded;
    const fixturesOf = (name: string) => config.validationTests.find((test) => test.name === name)!.fixtures;
    const [routing, tls] = [fixturesOf('hosts-paths-and-shared-backends'), fixturesOf('tls')];
    const fixtures = new Map<string, readonly KubeObject[]>([...routing, ['ingresses', [...routing.get('ingresses')!, ...tls.get('ingresses')!]], ['secrets', tls.get('secrets')!]]);
    const output = createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, fixtures, config.ignoreFields) });
    const sourcesOf = (target: string, pattern: RegExp) => {
      const text = target === 'haproxy.cfg' ? output.files.config : (output.files.maps[target.slice(5)] ?? output.files.files[target.slice(8)])!;
      const index = text.split('\n').findIndex((line) => pattern.test(line));
      expect(index, `${pattern} in ${target}`).to.be.at.least(0);
      return output.origins.get(target)![index]!.sources.map((source) => `${source.label} ${source.field}`);
    };
    expect(sourcesOf('haproxy.cfg', /^ {2}server srv-10\.0\.0\.1-8081 /)).to.deep.equal(['EndpointSlice default/web-1 endpoints[0].addresses[0]']);
    expect(sourcesOf('haproxy.cfg', /^backend default_api_8080$/)).to.deep.equal(['Service default/api spec.ports']);
    expect(sourcesOf('maps/host.map', /^shop\.example\.com /)).to.deep.equal(['Ingress default/shop spec.rules[0].host']);
    expect(sourcesOf('maps/path-exact.map', /^shop\.example\.com\/health /)).to.deep.equal(['Ingress default/shop spec.rules[0].http.paths[2]']);
    expect(sourcesOf('general/crt-list.txt', /secure\.example\.com/)).to.deep.equal(['Secret default/secure-tls data']);
    // Lines without values of an object (the template's own) name none.
    expect(sourcesOf('haproxy.cfg', /^ {2}balance roundrobin$/)).to.deep.equal([]);
  });
});

describe('renderer exclusions and the Ingress view model', () => {
  it('leaves an Ingress excluded for a value of a template line out of the view model too: its routes go with it', async () => {
    const shipped = await readFile(defaultConfigPath(), 'utf8');
    const loaded = loadControllerConfig(
      // The routing view under either name: `ingress` is its old one.
      shipped.replace(
        /^ {6}default_backend \{\{#(?:routes|ingress)\.defaultBackend\}\}/m,
        (line) =>
          `      {{#resources.ingresses}}\n      http-response set-header X-Team {{metadata.annotations.team}} if { var(txn.host) -m str {{spec.rules.0.host}} }\n      {{/resources.ingresses}}\n${line}`,
      ),
    );
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const { config } = loaded;
    const ingress = (name: string, team: string): KubeObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'default', annotations: { team } },
      spec: {
        ingressClassName: 'haproxy',
        rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
      },
    });
    const output = createRenderer(
      config,
      routingViews,
    )({ stores: buildStores(config.watchedResources, new Map([['ingresses', [ingress('good', 'web'), ingress('pwn', '%PWN')]]]), config.ignoreFields) });
    expect(output.excluded.map((p) => `${p.object} ${p.field}`)).to.deep.equal(['Ingress default/pwn metadata.annotations.team']);
    expect(output.files.maps['host.map']).to.equal('good.example.com good.example.com\n');
    expect(output.files.config).to.include('http-response set-header X-Team web if { var(txn.host) -m str good.example.com }');
    expect(output.files.config).to.not.include('pwn');
  });
});

describe("renderer and the controller's own Lua scripts", () => {
  for (const [file, script] of CONTROLLER_LUA) {
    const loads = `global\n  default-path origin /etc/haproxy\n  lua-load {{paths.general}}/${file}`;

    it(`writes ${file} among the general files exactly when the configuration loads it, and never as a template writes it`, () => {
      expect(render(configWith('global'), []).files.files).to.not.have.property(file);
      const output = render(configWith(loads, '  files:\n    other.lua: |\n      os.execute("id")\n'), []);
      expect(output.files.files[file]).to.equal(script);
      expect(Object.keys(output.files.files).filter((name) => CONTROLLER_LUA.has(name))).to.deep.equal([file]);
      // The template's own Lua is a file like any other, which the guard lets no lua-load name.
      expect(refusedDirectives(`${output.files.config}\n  lua-load general/other.lua`).map((finding) => finding.text)).to.deep.equal(['lua-load general/other.lua']);
      expect(refusedDirectives(output.files.config)).to.deep.equal([]);
    });

    it(`refuses a template named ${file} in any group of files`, () => {
      for (const group of ['files', 'maps', 'certificates']) {
        const loaded = loadControllerConfig(`templates:\n  haproxyConfig: global\n  ${group}:\n    ${file}: "-- another script"\n`);
        expect(loaded.ok, group).to.equal(false);
        if (!loaded.ok) expect(loaded.errors.join('\n')).to.include(`templates.${group}.${file}: is the name of one of the controller's own Lua scripts`);
      }
    });
  }
});
