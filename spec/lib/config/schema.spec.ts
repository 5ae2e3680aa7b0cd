import { expect } from 'chai';
import { configRows } from '../../../.ci/config-reference.ts';
import { parseDuration } from '../../../lib/config/duration.ts';
import { loadControllerConfigObject } from '../../../lib/config/load.ts';
import type { Path } from '../../../lib/config/problems.ts';
import { controllerConfigSchema } from '../../../lib/config/schema.ts';
import type { Setting } from '../../../lib/config/schema-types.ts';
import type { Assertion, ControllerConfig, DataplaneSettings, Relation, Templates, ValidationTest, WatchedResource } from '../../../lib/config/types.ts';
import { runDefaults } from '../../../lib/cli/run-settings.ts';

const schema = controllerConfigSchema.fields;
const resource = schema.watchedResources.item.fields;
const test = schema.validationTests.item.fields;

/** A configuration with one of every mapping the schema has, each assertion type included. */
function minimal(): Record<string, unknown> {
  return {
    podSelector: { matchLabels: {} },
    dataplane: {},
    watchedResources: {
      ingresses: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', relations: { services: { resource: 'services', keys: ['metadata.namespace'] } } },
      services: { apiVersion: 'v1', kind: 'Service' },
    },
    ingress: {},
    gatewayApi: {},
    templates: { haproxyConfig: 'global\n', maps: { 'host.map': '' } },
    validationTests: [{ name: 'one', fixtures: { ingresses: [] }, assertions: Object.keys(test.assertions.item.variants).map(assertionOf) }],
  };
}

/** An assertion of the type with every field it needs. */
function assertionOf(type: string): Record<string, unknown> {
  const values: Record<string, unknown> = { target: 'maps/host.map', pattern: 'x', expected: '', count: 0 };
  const fields = test.assertions.item.variants[type as Assertion['type']];
  return { type, ...Object.fromEntries(fields.map((field) => [field, values[field]])) };
}

function loaded(document: unknown): ControllerConfig {
  const result = loadControllerConfigObject(document);
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.config;
}

/** The mapping at `path` of the document, given a field the schema does not have. */
function withUnknownField(path: Path): unknown {
  const document = minimal();
  let mapping = document as Record<string | number, unknown>;
  for (const key of path) mapping = mapping[key] as Record<string | number, unknown>;
  mapping['zzzzzz'] = 1;
  return document;
}

/** The fields the loader says it expects at `path` when it meets one it does not know. */
function fieldsTheLoaderAccepts(path: Path): string[] {
  const result = loadControllerConfigObject(withUnknownField(path));
  const prefix = [...path, 'zzzzzz'].map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');
  const message = result.ok ? undefined : result.errors.find((error) => error.startsWith(`${prefix}: unknown field`));
  const listed = /\(expected (?:one of )?(.*)\)$/.exec(message ?? '');
  if (listed === null) throw new Error(`no unknown-field error at ${prefix}: ${result.ok ? 'loaded' : result.errors.join('; ')}`);
  return listed[1]!.split(', ');
}

/** The generic path of a mapping in `minimal()` (`<name>` for a chosen name, `[]` for a list item), and its concrete path. */
const mappings: readonly (readonly [string, Path, readonly string[]])[] = [
  ['', [], Object.keys(schema)],
  ['podSelector', ['podSelector'], Object.keys(schema.podSelector.fields)],
  ['dataplane', ['dataplane'], Object.keys(schema.dataplane.fields)],
  ['watchedResources.<name>', ['watchedResources', 'services'], Object.keys(resource)],
  ['watchedResources.<name>.relations.<name>', ['watchedResources', 'ingresses', 'relations', 'services'], Object.keys(resource.relations.item.fields)],
  ['ingress', ['ingress'], Object.keys(schema.ingress.fields)],
  ['gatewayApi', ['gatewayApi'], Object.keys(schema.gatewayApi.fields)],
  ['templates', ['templates'], Object.keys(schema.templates.fields)],
  ['validationTests[]', ['validationTests', 0], Object.keys(test)],
  ...Object.values(test.assertions.item.variants).map((fields, i) => ['validationTests[].assertions[]', ['validationTests', 0, 'assertions', i], ['type', ...fields]] as const),
];

/** The settings the loaded configuration keeps as `pipeline`, not under their own names. */
type PipelineFields = 'debounce' | 'maxWait' | 'leadingEdge' | 'runtimeFirst';
type TimingFields = 'minDeploymentInterval' | 'driftCheckInterval' | 'deployTimeout' | 'maxParallel';

/** Typechecks only when the two sets of keys are the same. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('the controller configuration schema', () => {
  it('declares the fields of the loaded configuration types, and no others', () => {
    // A field added to a type or the schema alone fails typecheck here.
    const same: readonly true[] = [
      true satisfies Same<keyof typeof schema, Exclude<keyof ControllerConfig, 'pipeline'> | PipelineFields>,
      true satisfies Same<keyof typeof schema.podSelector.fields, keyof ControllerConfig['podSelector']>,
      true satisfies Same<keyof typeof schema.dataplane.fields, keyof DataplaneSettings | TimingFields>,
      true satisfies Same<keyof typeof resource, Exclude<keyof WatchedResource, 'name'>>,
      true satisfies Same<keyof typeof resource.relations.item.fields, Exclude<keyof Relation, 'name'>>,
      true satisfies Same<keyof typeof schema.ingress.fields, keyof ControllerConfig['ingress']>,
      true satisfies Same<keyof typeof schema.gatewayApi.fields, keyof ControllerConfig['gatewayApi']>,
      true satisfies Same<keyof typeof schema.templates.fields, keyof Templates>,
      true satisfies Same<keyof typeof test, keyof ValidationTest>,
      true satisfies Same<keyof typeof test.assertions.item.variants, Assertion['type']>,
    ];
    expect(same).to.have.length(10);
  });

  it('is what the loader accepts: in every mapping, exactly the fields the schema declares', () => {
    const isMapping = (setting: Setting) => setting.kind === 'section' || setting.kind === 'variants';
    const mappingsInSchema = [
      '',
      ...configRows(controllerConfigSchema).flatMap(({ path, setting }) => {
        if (isMapping(setting)) return [path];
        return setting.kind === 'list' && isMapping(setting.item) ? [`${path}[]`] : [];
      }),
    ];
    expect([...new Set(mappings.map(([generic]) => generic))]).to.have.members(mappingsInSchema);
    for (const [generic, path, declared] of mappings) expect(fieldsTheLoaderAccepts(path), generic || 'the root').to.deep.equal(declared);
  });

  it('holds the defaults the loader fills in', () => {
    const config = loaded(minimal());
    const [ingresses, services] = config.watchedResources;
    const untargeted = loaded({ ...minimal(), validationTests: [{ name: 'x', assertions: [{ type: 'contains', pattern: 'x' }] }] }).validationTests[0]!;
    const ms = (setting: { readonly default: string }) => parseDuration(setting.default);
    const paths = (list: readonly { readonly source: string }[]) => list.map((path) => path.source);
    const bare = loaded({ watchedResources: { services: { apiVersion: 'v1', kind: 'Service' } }, templates: { haproxyConfig: 'global\n' } });
    // Each setting with a default, and the value a configuration leaving it out loads with.
    const checked: [string, unknown, unknown][] = [
      ['podSelector.matchLabels', bare.podSelector.matchLabels, schema.podSelector.fields.matchLabels.default],
      ['dataplane.port', config.dataplane.port, schema.dataplane.fields.port.default],
      ['dataplane.scheme', config.dataplane.scheme, schema.dataplane.fields.scheme.default],
      ['dataplane.minDeploymentInterval', config.pipeline.minDeploymentIntervalMs, ms(schema.dataplane.fields.minDeploymentInterval)],
      ['dataplane.driftCheckInterval', config.pipeline.driftCheckIntervalMs, ms(schema.dataplane.fields.driftCheckInterval)],
      ['dataplane.deployTimeout', config.pipeline.deployTimeoutMs, ms(schema.dataplane.fields.deployTimeout)],
      ['dataplane.maxParallel', config.pipeline.maxParallel, schema.dataplane.fields.maxParallel.default],
      ['dataplane.baseDir', config.dataplane.baseDir, schema.dataplane.fields.baseDir.default],
      ['dataplane.mapsDir', config.dataplane.mapsDir, schema.dataplane.fields.mapsDir.default],
      ['dataplane.certificatesDir', config.dataplane.certificatesDir, schema.dataplane.fields.certificatesDir.default],
      ['dataplane.generalDir', config.dataplane.generalDir, schema.dataplane.fields.generalDir.default],
      ['dataplane.configFile', config.dataplane.configFile, `${schema.dataplane.fields.baseDir.default}/haproxy.cfg`],
      ['debounce', config.pipeline.debounceMs, ms(schema.debounce)],
      ['maxWait', config.pipeline.maxWaitMs, ms(schema.maxWait)],
      ['leadingEdge', config.pipeline.leadingEdge, schema.leadingEdge.default],
      ['runtimeFirst', config.pipeline.runtimeFirst, schema.runtimeFirst.default],
      ['watchedResources.<name>.resource', services!.resource, 'services'],
      ['watchedResources.<name>.namespace', services!.namespace, undefined],
      ['watchedResources.<name>.indexBy', paths(services!.indexBy), resource.indexBy.default],
      ['watchedResources.<name>.relations', services!.relations, []],
      ['watchedResources.<name>.validationWebhook', ingresses!.validationWebhook, resource.validationWebhook.default],
      ['watchedResources.<name>.optional', ingresses!.optional ?? false, resource.optional.default],
      ['watchedResources.<name>.fallbackApiVersions', ingresses!.fallbackApiVersions ?? [], resource.fallbackApiVersions.default],
      ['ignoreFields', paths(config.ignoreFields), schema.ignoreFields.default],
      ['ingress.className', config.ingress.className, schema.ingress.fields.className.default],
      ['ingress.sharedHostNamespaces', config.ingress.sharedHostNamespaces, schema.ingress.fields.sharedHostNamespaces.default],
      ['gatewayApi.controllerName', config.gatewayApi.controllerName, schema.gatewayApi.fields.controllerName.default],
      ['gatewayApi.httpPort', config.gatewayApi.httpPort, schema.gatewayApi.fields.httpPort.default],
      ['gatewayApi.httpsPort', config.gatewayApi.httpsPort, schema.gatewayApi.fields.httpsPort.default],
      ['templates.partials', config.templates.partials.size, 0],
      ['templates.maps', bare.templates.maps.size, 0],
      ['templates.files', config.templates.files.size, 0],
      ['templates.certificates', config.templates.certificates.size, 0],
      ['templateValues', config.templateValues, schema.templateValues.default],
      ['validationTests', bare.validationTests, schema.validationTests.default],
      ['validationTests[].fixtures', untargeted.fixtures.size, 0],
      ['validationTests[].assertions[].target', (untargeted.assertions[0] as { readonly target: string }).target, test.assertions.item.fields.target.default],
      ['allowDirectives', config.allowDirectives, schema.allowDirectives.default],
    ];
    const defaulted = configRows(controllerConfigSchema).filter(
      ({ setting }) => !setting.required && (setting.defaultText !== undefined || ('default' in setting && setting.default !== undefined)),
    );
    expect(checked.map(([path]) => path)).to.have.members(defaulted.map(({ path }) => path));
    for (const [path, value, expected] of checked) expect(value, path).to.deep.equal(expected);
  });

  it('gives the seed design its defaults', () => {
    expect(schema.dataplane.fields.port.default, 'Data Plane API port').to.equal(5555);
    expect(schema.debounce.default, 'debounce').to.equal('500ms');
    expect(schema.dataplane.fields.minDeploymentInterval.default, 'minimum deployment interval').to.equal('2s');
    // The controller's own ports are flags of `run`, not settings of the configuration.
    expect([runDefaults.healthPort, runDefaults.metricsPort, runDefaults.webhookPort]).to.deep.equal([8080, 9090, 9443]);
  });

  it('describes every setting', () => {
    const undescribed = configRows(controllerConfigSchema).filter(({ setting }) => setting.description.trim() === '');
    expect(undescribed.map(({ path }) => path)).to.deep.equal([]);
  });
});
