import { expect } from 'chai';
import { loadControllerConfig, loadControllerConfigObject } from '../../../lib/config/load.ts';
import { defaultPipelineSettings } from '../../../lib/config/pipeline-settings.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';

const full = `
podSelector: { matchLabels: { app: haproxy } }
dataplane:
  port: 5556
  scheme: https
  minDeploymentInterval: 3s
  driftCheckInterval: 2m
  deployTimeout: 45s
  maxParallel: 4
  baseDir: /usr/local/etc/haproxy
  mapsDir: maps2
  certificatesDir: certs
  generalDir: misc
  configFile: /usr/local/etc/haproxy/main.cfg
debounce: 250ms
maxWait: 1m30s
leadingEdge: false
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    kind: Ingress
    resource: ingresses
    namespace: default
    labelSelector: "app=web,tier!=db"
    fieldSelector: "spec.ingressClassName=haproxy, metadata.name != skip"
    validationWebhook: true
    indexBy: [metadata.namespace, metadata.name]
    relations:
      endpointSlices: { resource: endpointslices, keys: [metadata.namespace, metadata.name] }
  endpointslices:
    apiVersion: discovery.k8s.io/v1
    kind: EndpointSlice
    indexBy: [metadata.namespace, "metadata.labels['kubernetes.io/service-name']"]
  policies:
    apiVersion: networking.k8s.io/v1
    kind: NetworkPolicy
  things:
    apiVersion: example.com/v1alpha1
    resource: things
ignoreFields: [metadata.managedFields, "metadata.annotations['example.com/noise']"]
ingress: { className: haproxy.example.com, sharedHostNamespaces: [team-a, team-b] }
templates:
  haproxyConfig: |
    global
    {{#resources.ingresses}}{{> backend}}{{/resources.ingresses}}
  partials: { backend: "backend {{metadata.name}}" }
  maps: { host.map: "{{#hosts}}{{.}}{{/hosts}}" }
  files: { 404.http: "HTTP/1.0 404" }
  certificates: { default.pem: "pem" }
templateValues: { httpPort: 80, nested: { list: [1, 2] } }
validationTests:
  - name: routes-exact-host
    description: routes by exact host
    fixtures:
      ingresses: [ { metadata: { name: a, namespace: default }, spec: { rules: [] } } ]
      things: [ { apiVersion: example.com/v1alpha1, kind: Thing, metadata: { name: t } } ]
    assertions:
      - { type: haproxy_valid }
      - { type: deterministic }
      - { type: contains, target: haproxy.cfg, pattern: "backend default_web_http" }
      - { type: not_contains, target: maps2/host.map, pattern: "^x$" }
      - { type: equals, target: misc/404.http, expected: "HTTP/1.0 404" }
      - { type: match_count, target: haproxy.cfg, pattern: "^\\\\s+server ", count: 3 }
      - { type: contains, target: certs/from-a-secret.pem, pattern: "BEGIN" }
  - name: second
    assertions: [ { type: deterministic } ]
`;

const minimal = `
watchedResources:
  ingresses: { apiVersion: networking.k8s.io/v1, kind: Ingress }
templates:
  haproxyConfig: "global\\n"
`;

function loaded(text: string): ControllerConfig {
  const result = loadControllerConfig(text);
  if (!result.ok) expect.fail(`expected the configuration to load, got:\n${result.errors.join('\n')}`);
  return result.config;
}

function errorsOf(text: string): readonly string[] {
  const result = loadControllerConfig(text);
  if (result.ok) expect.fail('expected the configuration to be rejected');
  return result.errors;
}

function sources(paths: readonly { readonly source: string }[]): string[] {
  return paths.map((path) => path.source);
}

describe('loadControllerConfig', () => {
  describe('a complete configuration', () => {
    const config = loaded(full);

    it('reads the pod selector and the dataplane settings', () => {
      expect(config.podSelector).to.deep.equal({ matchLabels: { app: 'haproxy' } });
      expect(config.dataplane).to.deep.equal({
        port: 5556,
        scheme: 'https',
        baseDir: '/usr/local/etc/haproxy',
        mapsDir: 'maps2',
        certificatesDir: 'certs',
        generalDir: 'misc',
        configFile: '/usr/local/etc/haproxy/main.cfg',
      });
    });

    it('gathers the timings into pipeline settings, with the default retry', () => {
      expect(config.pipeline).to.deep.equal({
        debounceMs: 250,
        maxWaitMs: 90_000,
        leadingEdge: false,
        minDeploymentIntervalMs: 3_000,
        driftCheckIntervalMs: 120_000,
        deployTimeoutMs: 45_000,
        maxParallel: 4,
        retry: defaultPipelineSettings.retry,
      });
    });

    it('reads the watched resources in order, deriving the missing resource name', () => {
      expect(config.watchedResources.map(({ name, apiVersion, kind, resource }) => ({ name, apiVersion, kind, resource }))).to.deep.equal([
        { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', resource: 'ingresses' },
        { name: 'endpointslices', apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', resource: 'endpointslices' },
        { name: 'policies', apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', resource: 'networkpolicies' },
        { name: 'things', apiVersion: 'example.com/v1alpha1', kind: undefined, resource: 'things' },
      ]);
    });

    it('marks the resources the admission webhook judges, and no others by default', () => {
      expect(config.watchedResources.map(({ name, validationWebhook }) => [name, validationWebhook])).to.deep.equal([
        ['ingresses', true],
        ['endpointslices', false],
        ['policies', false],
        ['things', false],
      ]);
    });

    it('compiles selectors, index keys and relations', () => {
      const [ingresses, endpointSlices] = config.watchedResources;
      expect(ingresses!.namespace).to.equal('default');
      expect(ingresses!.labelSelector).to.equal('app=web,tier!=db');
      expect(ingresses!.fieldSelector.map(({ path, operator, value }) => [path.source, operator, value])).to.deep.equal([
        ['spec.ingressClassName', '=', 'haproxy'],
        ['metadata.name', '!=', 'skip'],
      ]);
      expect(sources(endpointSlices!.indexBy)).to.deep.equal(['metadata.namespace', "metadata.labels['kubernetes.io/service-name']"]);
      expect(ingresses!.relations.map(({ name, resource, keys }) => ({ name, resource, keys: sources(keys) }))).to.deep.equal([
        { name: 'endpointSlices', resource: 'endpointslices', keys: ['metadata.namespace', 'metadata.name'] },
      ]);
      expect(endpointSlices!.indexBy[1]!.get({ metadata: { labels: { 'kubernetes.io/service-name': 'web' } } })).to.equal('web');
    });

    it('reads ignoreFields, the ingress class and the template values', () => {
      expect(sources(config.ignoreFields)).to.deep.equal(['metadata.managedFields', "metadata.annotations['example.com/noise']"]);
      expect(config.ingress).to.deep.equal({ className: 'haproxy.example.com', sharedHostNamespaces: ['team-a', 'team-b'] });
      expect(config.templateValues).to.deep.equal({ httpPort: 80, nested: { list: [1, 2] } });
    });

    it('compiles every template under its configuration path', () => {
      const { templates } = config;
      expect(templates.haproxyConfig.name).to.equal('templates.haproxyConfig');
      expect(templates.haproxyConfig.partials).to.deep.equal(['backend']);
      expect([...templates.partials.keys()]).to.deep.equal(['backend']);
      expect(templates.maps.get('host.map')!.name).to.equal('templates.maps.host.map');
      expect(templates.files.get('404.http')!.source).to.equal('HTTP/1.0 404');
      expect(templates.certificates.get('default.pem')!.name).to.equal('templates.certificates.default.pem');
    });

    it('reads validation tests, completing fixtures with the watched kind', () => {
      const [first, second] = config.validationTests;
      expect(first!.name).to.equal('routes-exact-host');
      expect(first!.description).to.equal('routes by exact host');
      expect(first!.fixtures.get('ingresses')).to.deep.equal([{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'a', namespace: 'default' }, spec: { rules: [] } }]);
      expect(first!.fixtures.get('things')).to.deep.equal([{ apiVersion: 'example.com/v1alpha1', kind: 'Thing', metadata: { name: 't' } }]);
      expect(first!.assertions).to.deep.equal([
        { type: 'haproxy_valid' },
        { type: 'deterministic' },
        { type: 'contains', target: 'haproxy.cfg', pattern: /backend default_web_http/m },
        { type: 'not_contains', target: 'maps2/host.map', pattern: /^x$/m },
        { type: 'equals', target: 'misc/404.http', expected: 'HTTP/1.0 404' },
        { type: 'match_count', target: 'haproxy.cfg', pattern: /^\s+server /m, count: 3 },
        { type: 'contains', target: 'certs/from-a-secret.pem', pattern: /BEGIN/m },
      ]);
      expect(second).to.deep.include({ name: 'second', description: undefined, assertions: [{ type: 'deterministic' }] });
      expect(second!.fixtures.size).to.equal(0);
    });
  });

  it('gives a minimal configuration every default', () => {
    const config = loaded(minimal);
    expect(config.podSelector).to.deep.equal({ matchLabels: {} });
    expect(config.dataplane).to.deep.equal({
      port: 5555,
      scheme: 'http',
      baseDir: '/etc/haproxy',
      mapsDir: 'maps',
      certificatesDir: 'ssl',
      generalDir: 'general',
      configFile: '/etc/haproxy/haproxy.cfg',
    });
    expect(config.pipeline).to.deep.equal(defaultPipelineSettings);
    expect(config.pipeline.leadingEdge).to.equal(true);
    expect(config.watchedResources).to.have.length(1);
    const [ingresses] = config.watchedResources;
    expect(ingresses).to.deep.include({
      name: 'ingresses',
      resource: 'ingresses',
      namespace: undefined,
      labelSelector: undefined,
      fieldSelector: [],
      relations: [],
      validationWebhook: false,
    });
    expect(sources(ingresses!.indexBy)).to.deep.equal(['metadata.namespace', 'metadata.name']);
    expect(sources(config.ignoreFields)).to.deep.equal(['metadata.managedFields', "metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']"]);
    expect(config.ingress).to.deep.equal({ className: 'haproxy', sharedHostNamespaces: [] });
    expect(config.gatewayApi).to.deep.equal({ controllerName: 'haproxy-template-ic.io/gateway-controller', httpPort: 80, httpsPort: 443 });
    expect(ingresses).to.not.have.property('optional');
    expect(config.templateValues).to.deep.equal({});
    expect(config.validationTests).to.deep.equal([]);
    expect(config.allowDirectives).to.deep.equal([]);
    const { templates } = config;
    expect([templates.partials.size, templates.maps.size, templates.files.size, templates.certificates.size]).to.deep.equal([0, 0, 0, 0]);
  });

  it('reads the Gateway API controller name, listener ports and optional resources', () => {
    const config = loaded(
      `${minimal.replace('Ingress }', 'Ingress }\n  routes: { apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, optional: true, fallbackApiVersions: [gateway.networking.k8s.io/v1beta1] }')}gatewayApi: { controllerName: example.com/gateway, httpPort: 8080, httpsPort: 8443 }\n`,
    );
    expect(config.watchedResources[1]!.fallbackApiVersions).to.deep.equal(['gateway.networking.k8s.io/v1beta1']);
    expect(config.gatewayApi).to.deep.equal({ controllerName: 'example.com/gateway', httpPort: 8080, httpsPort: 8443 });
    expect(config.watchedResources.map((resource) => [resource.name, resource.optional ?? false])).to.deep.equal([
      ['ingresses', false],
      ['routes', true],
    ]);
  });

  it('treats an empty section (a key with nothing after it) as absent', () => {
    const config = loaded(`${minimal}dataplane:\nvalidationTests:\n`);
    expect(config.dataplane.port).to.equal(5555);
    expect(config.validationTests).to.deep.equal([]);
  });

  it('allows guarded directives by name, and nothing else', () => {
    expect(loaded(`${minimal}allowDirectives: [lua-load, files-outside-base]`).allowDirectives).to.deep.equal(['lua-load', 'files-outside-base']);
    const refused = loadControllerConfig(`${minimal}allowDirectives: [lua-load, eval]`);
    expect(refused.ok ? [] : refused.errors).to.have.length(1);
    expect(refused.ok ? '' : refused.errors[0]).to.match(/^allowDirectives\[1\]: unknown guarded directive "eval" \(one of lua-load, /);
  });

  it('moves the default configFile with baseDir', () => {
    expect(loaded(`${minimal}dataplane: { baseDir: /opt/haproxy }`).dataplane.configFile).to.equal('/opt/haproxy/haproxy.cfg');
  });

  it('loads the document already parsed too', () => {
    const config = loadControllerConfigObject({
      watchedResources: { services: { apiVersion: 'v1', kind: 'Service' } },
      templates: { haproxyConfig: 'global' },
    });
    expect(config.ok && config.config.watchedResources[0]!.resource).to.equal('services');
  });

  describe('rejects', () => {
    const withResources = (resources: string, rest = ''): string => `
watchedResources:
${resources}
templates:
  haproxyConfig: "global\\n"
${rest}`;
    const withTemplates = (templates: string, rest = ''): string => `
watchedResources:
  ingresses: { apiVersion: networking.k8s.io/v1, kind: Ingress }
templates:
${templates}
${rest}`;
    const withTest = (test: string): string => `${minimal}validationTests:\n  - name: t\n${test}`;
    const withAssertion = (assertion: string): string => withTest(`    assertions:\n      - ${assertion}\n`);

    const cases: [string, string, string[]][] = [
      // The document itself
      ['an empty document', '', ['the configuration is empty']],
      ['a document of comments', '# nothing\n', ['the configuration is empty']],
      ['a null document', '---\n~\n', ['the configuration is empty']],
      ['a list at the root', '- a\n- b\n', ['the configuration must be a mapping, got a list']],
      ['a scalar at the root', 'hello\n', ['the configuration must be a mapping, got "hello"']],
      ['several documents', `${minimal}---\n${minimal}`, ['expected one YAML document, got 2']],
      ['a YAML syntax error', 'a: 1\nb: [1\n', ['invalid YAML at line 3, column 1: ']],
      ['a duplicated key', 'a: 1\na: 2\n', ['invalid YAML at line 2, column 1: duplicated mapping key']],
      ['a self-referencing alias', `${minimal}templateValues: &loop { self: *loop }\n`, ['templateValues.self: refers to itself through a YAML alias']],
      // Unknown fields at each level
      ['an unknown top-level field', `${minimal}debounceTime: 1s\n`, ['debounceTime: unknown field (expected one of podSelector, dataplane']],
      ['a misspelt dataplane field', `${minimal}dataplane: { prot: 1 }\n`, ['dataplane.prot: unknown field (did you mean port?)']],
      ['an unknown podSelector field', `${minimal}podSelector: { matchLabel: { a: b } }\n`, ['podSelector.matchLabel: unknown field (did you mean matchLabels?)']],
      ['an unknown ingress field', `${minimal}ingress: { class: x }\n`, ['ingress.class: unknown field']],
      [
        'an unknown resource field',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, namespaces: [a] }'),
        ['watchedResources.ingresses.namespaces: unknown field (did you mean namespace?)'],
      ],
      [
        'a validationWebhook that is not a boolean',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, validationWebhook: "yes" }'),
        ['watchedResources.ingresses.validationWebhook: must be true or false, got "yes"'],
      ],
      [
        'an unknown relation field',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, relations: { x: { resource: ingresses, keys: [a], key: b } } }'),
        ['watchedResources.ingresses.relations.x.key: unknown field'],
      ],
      ['an unknown templates field', withTemplates('  haproxyConfig: x\n  map: {}'), ['templates.map: unknown field (did you mean maps?)']],
      ['an unknown test field', withTest('    assertions: [ { type: deterministic } ]\n    fixture: {}\n'), ['validationTests[0].fixture: unknown field (did you mean fixtures?)']],
      [
        'a field of another assertion type',
        withAssertion('{ type: haproxy_valid, target: haproxy.cfg }'),
        ['validationTests[0].assertions[0].target: unknown field for a haproxy_valid assertion (expected type)'],
      ],
      // Wrong types
      ['a list where a mapping belongs', `${minimal}dataplane: [1]\n`, ['dataplane: must be a mapping, got a list']],
      ['watchedResources as a list', 'watchedResources: [a]\ntemplates: { haproxyConfig: x }\n', ['watchedResources: must be a mapping, got a list']],
      ['templateValues as a scalar', `${minimal}templateValues: 3\n`, ['templateValues: must be a mapping, got 3']],
      ['validationTests as a mapping', `${minimal}validationTests: { a: 1 }\n`, ['validationTests: must be a list, got a mapping']],
      // podSelector
      [
        'a label value that is not a string',
        `${minimal}podSelector: { matchLabels: { version: 1 } }\n`,
        ['podSelector.matchLabels.version: must be a string (quote numbers and booleans), got 1'],
      ],
      ['an invalid label value', `${minimal}podSelector: { matchLabels: { app: "a b" } }\n`, ['podSelector.matchLabels.app: invalid label value "a b"']],
      ['an invalid label key', `${minimal}podSelector: { matchLabels: { "Example.com/app": x } }\n`, ['podSelector.matchLabels.Example.com/app: invalid label key "Example.com/app"']],
      // dataplane
      ['a port that is not a number', `${minimal}dataplane: { port: abc }\n`, ['dataplane.port: must be an integer from 1 to 65535, got "abc"']],
      ['a port out of range', `${minimal}dataplane: { port: 70000 }\n`, ['dataplane.port: must be an integer from 1 to 65535, got 70000']],
      ['a quoted port', `${minimal}dataplane: { port: "5555" }\n`, ['dataplane.port: must be an integer from 1 to 65535, got "5555"']],
      ['an unknown scheme', `${minimal}dataplane: { scheme: ftp }\n`, ['dataplane.scheme: must be http or https, got "ftp"']],
      ['a fractional maxParallel', `${minimal}dataplane: { maxParallel: 1.5 }\n`, ['dataplane.maxParallel: must be an integer of at least 1, got 1.5']],
      ['a zero maxParallel', `${minimal}dataplane: { maxParallel: 0 }\n`, ['dataplane.maxParallel: must be an integer of at least 1, got 0']],
      ['a relative baseDir', `${minimal}dataplane: { baseDir: etc/haproxy }\n`, [`dataplane.baseDir: must be an absolute path without '.' or '..' segments, got "etc/haproxy"`]],
      ['a configFile with ..', `${minimal}dataplane: { configFile: /etc/../haproxy.cfg }\n`, ['dataplane.configFile: must be an absolute path']],
      ['a nested mapsDir', `${minimal}dataplane: { mapsDir: a/b }\n`, ['dataplane.mapsDir: must be a single directory name']],
      ['mapsDir ..', `${minimal}dataplane: { mapsDir: .. }\n`, ['dataplane.mapsDir: must be a single directory name']],
      ['two storage kinds in one directory', `${minimal}dataplane: { generalDir: maps }\n`, ['dataplane.generalDir: must differ from mapsDir (both are "maps")']],
      ['a directory clashing with a default', `${minimal}dataplane: { mapsDir: ssl }\n`, ['dataplane.mapsDir: must differ from certificatesDir (both are "ssl")']],
      // Durations
      ['a word for a duration', `${minimal}debounce: soon\n`, ['debounce: "soon" is not a duration: expected a number followed by a unit']],
      ['a bare number for a duration', `${minimal}debounce: 500\n`, ['debounce: must be a duration such as "500ms" or "1m30s", got 500']],
      ['a duration without unit', `${minimal}maxWait: "10"\n`, ['maxWait: "10" is not a duration: missing unit after 10']],
      ['a negative duration', `${minimal}dataplane: { minDeploymentInterval: -1s }\n`, ['dataplane.minDeploymentInterval: "-1s" is not a duration: negative durations are not allowed']],
      ['an unknown unit', `${minimal}dataplane: { driftCheckInterval: 1d }\n`, ['dataplane.driftCheckInterval: "1d" is not a duration: unknown unit "d"']],
      ['a zero timeout', `${minimal}dataplane: { deployTimeout: 0s }\n`, ['dataplane.deployTimeout: must be longer than 0s']],
      ['a zero drift interval', `${minimal}dataplane: { driftCheckInterval: 0ms }\n`, ['dataplane.driftCheckInterval: must be longer than 0s']],
      ['a duration too long for a timer', `${minimal}dataplane: { driftCheckInterval: 600h }\n`, ['dataplane.driftCheckInterval: must be at most 596h']],
      ['maxWait below debounce', `${minimal}debounce: 2s\nmaxWait: 1s\n`, ['maxWait: must not be shorter than debounce (2000ms), got 1000ms']],
      ['a leadingEdge that is not a boolean', `${minimal}leadingEdge: "yes"\n`, ['leadingEdge: must be true or false, got "yes"']],
      ['maxWait below the default debounce', `${minimal}maxWait: 100ms\n`, ['maxWait: must not be shorter than debounce (500ms), got 100ms']],
      // watchedResources
      ['a missing watchedResources', 'templates: { haproxyConfig: x }\n', ['watchedResources: required']],
      ['no watched resource', 'watchedResources: {}\ntemplates: { haproxyConfig: x }\n', ['watchedResources: must list at least one resource']],
      [
        'a resource name unusable in templates',
        withResources('  end-points: { apiVersion: v1, kind: Endpoints }'),
        [`watchedResources.end-points: invalid name: must be a lowercase letter followed by letters, digits or '_'`],
      ],
      ['a resource that is not a mapping', withResources('  ingresses: Ingress'), ['watchedResources.ingresses: must be a mapping, got "Ingress"']],
      ['a missing apiVersion', withResources('  ingresses: { kind: Ingress }'), ['watchedResources.ingresses.apiVersion: required']],
      ['a malformed apiVersion', withResources('  ingresses: { apiVersion: a/b/c, kind: Ingress }'), ['watchedResources.ingresses.apiVersion: must be "v1" or "group/version", got "a/b/c"']],
      ['neither kind nor resource', withResources('  ingresses: { apiVersion: v1 }'), ['watchedResources.ingresses: needs kind or resource']],
      ['a malformed kind', withResources('  ingresses: { apiVersion: v1, kind: "Ingress s" }'), ['watchedResources.ingresses.kind: must be a kind such as Ingress, got "Ingress s"']],
      [
        'a malformed resource',
        withResources('  ingresses: { apiVersion: v1, resource: Ingresses }'),
        ['watchedResources.ingresses.resource: must be a plural resource name such as ingresses, got "Ingresses"'],
      ],
      [
        'a malformed namespace',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, namespace: Default }'),
        [`watchedResources.ingresses.namespace: must be a DNS label (lowercase letters, digits and '-'), got "Default"`],
      ],
      [
        'a bad label selector',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, labelSelector: "app in web" }'),
        ['watchedResources.ingresses.labelSelector: expected "(" after "app in", got "web" at 8'],
      ],
      [
        'a field selector without operator',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, fieldSelector: "a=b,spec.x" }'),
        ['watchedResources.ingresses.fieldSelector: "spec.x" is not path=value or path!=value'],
      ],
      [
        'a field selector with a wildcard',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, fieldSelector: "spec.rules[*].host=a" }'),
        ['watchedResources.ingresses.fieldSelector: "spec.rules[*].host": wildcards are not supported at 11'],
      ],
      [
        'an unclosed bracket in indexBy',
        withResources(`  endpoints: { apiVersion: v1, kind: Endpoints, indexBy: [metadata.namespace, "metadata.labels['a'"] }`),
        ['watchedResources.endpoints.indexBy[1]: unclosed bracket at 16'],
      ],
      ['an empty indexBy', withResources('  ingresses: { apiVersion: v1, kind: Ingress, indexBy: [] }'), ['watchedResources.ingresses.indexBy: must list at least one path']],
      [
        'a relation to an unknown resource',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, relations: { services: { resource: services, keys: [a] } } }'),
        ['watchedResources.ingresses.relations.services.resource: "services" is not a watched resource (ingresses)'],
      ],
      [
        'too many relation keys',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, relations: { slices: { resource: slices, keys: [a, b, c] } } }\n  slices: { apiVersion: v1, resource: slices }'),
        ['watchedResources.ingresses.relations.slices.keys: slices is indexed by 2 keys, got 3'],
      ],
      [
        'too many keys for a one-key index',
        withResources(
          '  ingresses: { apiVersion: v1, kind: Ingress, relations: { slices: { resource: slices, keys: [a, b] } } }\n  slices: { apiVersion: v1, resource: slices, indexBy: [a] }',
        ),
        ['watchedResources.ingresses.relations.slices.keys: slices is indexed by 1 key, got 2'],
      ],
      [
        'a relation without keys',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, relations: { self: { resource: ingresses } } }'),
        ['watchedResources.ingresses.relations.self.keys: required'],
      ],
      [
        'a relation hiding a field',
        withResources('  ingresses: { apiVersion: v1, kind: Ingress, relations: { spec: { resource: ingresses, keys: [a] } } }'),
        [`watchedResources.ingresses.relations.spec: a relation named spec would hide the objects' own spec field`],
      ],
      // ignoreFields and ingress
      ['a wildcard in ignoreFields', `${minimal}ignoreFields: ["spec.rules[*]"]\n`, ['ignoreFields[0]: wildcards are not supported at 11']],
      [
        'ignoring the identity of objects',
        `${minimal}ignoreFields: [metadata, metadata.namespace]\n`,
        ['ignoreFields[0]: would remove metadata.name, which identifies objects', 'ignoreFields[1]: would remove metadata.namespace'],
      ],
      ['an invalid ingress class', `${minimal}ingress: { className: HAProxy }\n`, ['ingress.className: must be a DNS subdomain']],
      ['a namespace that cannot be one', `${minimal}ingress: { sharedHostNamespaces: [team-a, Team_B] }\n`, ['ingress.sharedHostNamespaces[1]: must be a DNS label']],
      ['"*" among namespaces', `${minimal}ingress: { sharedHostNamespaces: [team-a, "*"] }\n`, ['ingress.sharedHostNamespaces[1]: must be a DNS label']],
      ['namespaces not in a list', `${minimal}ingress: { sharedHostNamespaces: team-a }\n`, ['ingress.sharedHostNamespaces: must be a list']],
      ['a controller name without a path', `${minimal}gatewayApi: { controllerName: example.com }\n`, ['gatewayApi.controllerName: must be a domain, "/" and a path']],
      [
        'a listener port out of range',
        `${minimal}gatewayApi: { httpPort: 0, httpsPort: "443" }\n`,
        ['gatewayApi.httpPort: must be an integer from 1 to 65535', 'gatewayApi.httpsPort: must be an integer from 1 to 65535'],
      ],
      ['optional that is not a boolean', withResources('  ingresses: { apiVersion: v1, kind: Ingress, optional: maybe }'), ['watchedResources.ingresses.optional: must be true or false']],
      [
        'fallback versions of a resource that is not optional, or of another group',
        withResources('  grants: { apiVersion: gateway.networking.k8s.io/v1, kind: ReferenceGrant, fallbackApiVersions: [example.com/v1beta1, gateway.networking.k8s.io/v1] }'),
        [
          'watchedResources.grants.fallbackApiVersions: needs optional: true (discovery picks the version a cluster serves)',
          'watchedResources.grants.fallbackApiVersions[0]: "example.com/v1beta1" is not another version of "gateway.networking.k8s.io"',
          'watchedResources.grants.fallbackApiVersions[1]: "gateway.networking.k8s.io/v1" is not another version of "gateway.networking.k8s.io"',
        ],
      ],
      // templates
      ['a missing templates section', 'watchedResources: { a: { apiVersion: v1, kind: A } }\n', ['templates: required']],
      ['a missing haproxyConfig', withTemplates('  maps: {}'), ['templates.haproxyConfig: required']],
      ['an empty haproxyConfig', withTemplates('  haproxyConfig: ""'), ['templates.haproxyConfig: must be non-empty, got ""']],
      ['a template that is not a string', withTemplates('  haproxyConfig: x\n  files: { a.txt: [1] }'), ['templates.files.a.txt: must be a string, got a list']],
      [
        'a template syntax error',
        withTemplates('  haproxyConfig: x\n  maps:\n    host.map: |\n      a\n      b\n      {{#routes}}\n      c\n'),
        ['templates.maps.host.map: line 3: unclosed section "routes"'],
      ],
      [
        'a missing partial',
        withTemplates('  haproxyConfig: "{{> backend}}"\n  partials: { frontend: x }'),
        ['templates.haproxyConfig: uses partial "backend", which templates.partials does not define'],
      ],
      [
        'a missing partial used by a partial',
        withTemplates('  haproxyConfig: "{{> a}}"\n  partials: { a: "{{> b}}" }'),
        ['templates.partials.a: uses partial "b", which templates.partials does not define'],
      ],
      [
        'a file name with a slash',
        withTemplates('  haproxyConfig: x\n  files: { "../x": y }'),
        [`templates.files.../x: invalid name: must be a letter or digit followed by letters, digits, '_' or '-', and at most one '.' before an extension`],
      ],
      // The Data Plane API would store it as a_b.map, which the configuration does not name.
      ['a map name with two dots', withTemplates('  haproxyConfig: x\n  maps: { a.b.map: y }'), ['templates.maps.a.b.map: invalid name']],
      ['a hidden file name', withTemplates('  haproxyConfig: x\n  certificates: { .pem: y }'), ['templates.certificates..pem: invalid name']],
      ['a partial name with a space', withTemplates('  haproxyConfig: x\n  partials: { "a b": y }'), ['templates.partials.a b: invalid name']],
      // validationTests
      ['a test without name', `${minimal}validationTests:\n  - assertions: [ { type: deterministic } ]\n`, ['validationTests[0].name: required']],
      ['a test that is not a mapping', `${minimal}validationTests: [ t ]\n`, ['validationTests[0]: must be a mapping, got "t"']],
      [
        'duplicate test names',
        `${minimal}validationTests:\n  - { name: t, assertions: [ { type: deterministic } ] }\n  - { name: u, assertions: [ { type: deterministic } ] }\n  - { name: t, assertions: [ { type: deterministic } ] }\n`,
        ['validationTests[2].name: duplicate test name "t" (also validationTests[0])'],
      ],
      ['a test without assertions', withTest('    description: nothing to check\n'), ['validationTests[0].assertions: required']],
      ['an empty assertion list', withTest('    assertions: []\n'), ['validationTests[0].assertions: must list at least one assertion']],
      [
        'fixtures for an unknown resource',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { services: [] }\n'),
        ['validationTests[0].fixtures.services: "services" is not a watched resource (ingresses)'],
      ],
      [
        'fixtures that are not a list',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: { metadata: { name: a } } }\n'),
        ['validationTests[0].fixtures.ingresses: must be a list, got a mapping'],
      ],
      [
        'a fixture without metadata.name',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: [ { metadata: { namespace: default } } ] }\n'),
        ['validationTests[0].fixtures.ingresses[0].metadata.name: required'],
      ],
      [
        'a fixture without metadata',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: [ { spec: {} } ] }\n'),
        ['validationTests[0].fixtures.ingresses[0].metadata: required'],
      ],
      [
        'a fixture with a numeric label',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: [ { metadata: { name: a, labels: { v: 1 } } } ] }\n'),
        ['validationTests[0].fixtures.ingresses[0].metadata.labels: v must be a string, got 1'],
      ],
      [
        'a fixture of another kind',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: [ { kind: Service, metadata: { name: a } } ] }\n'),
        ['validationTests[0].fixtures.ingresses[0].kind: must be Ingress like the watched resource, got "Service"'],
      ],
      [
        'the same fixture twice',
        withTest('    assertions: [ { type: deterministic } ]\n    fixtures: { ingresses: [ { metadata: { name: a, namespace: n } }, { metadata: { name: a, namespace: n } } ] }\n'),
        ['validationTests[0].fixtures.ingresses[1]: duplicates validationTests[0].fixtures.ingresses[0] (n/a)'],
      ],
      [
        'an unknown assertion type',
        withAssertion('{ type: valid }'),
        ['validationTests[0].assertions[0].type: must be one of haproxy_valid, deterministic, contains, not_contains, equals, match_count, got "valid"'],
      ],
      ['an assertion without type', withAssertion('{ pattern: x }'), ['validationTests[0].assertions[0].type: required (one of haproxy_valid']],
      ['a bad regex', withAssertion('{ type: contains, pattern: "(" }'), ['validationTests[0].assertions[0].pattern: invalid regular expression: /(/m: Unterminated group']],
      ['a missing pattern', withAssertion('{ type: not_contains }'), ['validationTests[0].assertions[0].pattern: required']],
      ['a missing expected text', withAssertion('{ type: equals }'), ['validationTests[0].assertions[0].expected: required']],
      ['a missing count', withAssertion('{ type: match_count, pattern: x }'), ['validationTests[0].assertions[0].count: required']],
      ['a negative count', withAssertion('{ type: match_count, pattern: x, count: -1 }'), ['validationTests[0].assertions[0].count: must be an integer of at least 0, got -1']],
      [
        'a target in an unknown directory',
        withAssertion('{ type: contains, target: etc/host.map, pattern: x }'),
        ['validationTests[0].assertions[0].target: must be haproxy.cfg or one of maps/<file>, ssl/<file>, general/<file>, got "etc/host.map"'],
      ],
      ['a bare file target', withAssertion('{ type: contains, target: host.map, pattern: x }'), ['validationTests[0].assertions[0].target: must be haproxy.cfg or one of']],
      [
        'a target nothing renders',
        withAssertion('{ type: contains, target: maps/host.map, pattern: x }'),
        ['validationTests[0].assertions[0].target: no template renders "maps/host.map" (maps has none)'],
      ],
    ];

    for (const [what, text, expected] of cases) {
      it(what, () => {
        const errors = errorsOf(text);
        for (const substring of expected) {
          expect(
            errors.some((error) => error.includes(substring)),
            `${JSON.stringify(errors, null, 2)}\nshould include ${substring}`,
          ).to.be.true;
        }
      });
    }
  });

  it('reports every problem at once, in document order', () => {
    const errors = errorsOf(`
dataplane:
  prot: 5555
  port: abc
debounce: soon
watchedResources:
  endpoints:
    apiVersion: v1
    kind: Endpoints
    indexBy: [metadata.namespace, "metadata.labels['kubernetes.io/service-name'"]
    relations:
      slices: { resource: endpointslices, keys: [metadata.name] }
templates:
  haproxyConfig: "{{> missing}}"
  maps:
    host.map: "a\\nb\\n{{#routes}}"
validationTests:
  - name: t
    assertions: [ { type: contains, pattern: "[" } ]
  - name: t
    assertions: [ { type: nope } ]
`);
    expect(errors).to.deep.equal([
      'dataplane.prot: unknown field (did you mean port?)',
      'dataplane.port: must be an integer from 1 to 65535, got "abc"',
      'debounce: "soon" is not a duration: expected a number followed by a unit, such as 500ms, 2s or 1m30s',
      'watchedResources.endpoints.indexBy[1]: unclosed bracket at 16',
      'watchedResources.endpoints.relations.slices.resource: "endpointslices" is not a watched resource (endpoints)',
      'templates.haproxyConfig: uses partial "missing", which templates.partials does not define',
      'templates.maps.host.map: line 3: unclosed section "routes"',
      'validationTests[0].assertions[0].pattern: invalid regular expression: /[/m: Unterminated character class',
      'validationTests[1].name: duplicate test name "t" (also validationTests[0])',
      'validationTests[1].assertions[0].type: must be one of haproxy_valid, deterministic, contains, not_contains, equals, match_count, got "nope"',
    ]);
  });

  it('does not derive a second error from a field that is already wrong', () => {
    expect(errorsOf(`${minimal}debounce: 10s\nmaxWait: soon\n`)).to.have.length(1);
    expect(errorsOf(`${minimal}dataplane: { mapsDir: "a/b", generalDir: "a/b" }\n`)).to.have.length(2);
    expect(errorsOf(withBrokenPartial())).to.deep.equal(['templates.partials.p: line 1: unclosed section "x"']);
  });
});

function withBrokenPartial(): string {
  return `${minimal.replace('templates:\n  haproxyConfig: "global\\n"', 'templates:\n  haproxyConfig: "{{> p}}"\n  partials: { p: "{{#x}}" }')}`;
}
