/**
 * Loads the controller configuration from YAML: checks every field, fills
 * the defaults, compiles durations, paths, selectors and templates, and
 * reports every problem at once, each with its path, so one edit can fix
 * them all. Unknown fields are errors: a misspelt field silently falling
 * back to its default is the hardest mistake to spot.
 */
import { loadAll, YAMLException } from 'js-yaml';
import { errorMessage } from '../error-message.ts';
import { checkLabelKey, checkLabelValue } from '../kube-syntax/label-selector.ts';
import { readDataplane, type DataplaneTimings } from './dataplane-reader.ts';
import { guardedDirectives, isGuardedDirective, type GuardedDirective } from './guarded-directives.ts';
import { defaultPipelineSettings, type PipelineSettings } from './pipeline-settings.ts';
import { describe, formatPath, isMapping, Problems, type Path } from './problems.ts';
import { fields, readList, readMapping, readMatching, readString, withDefault, type Fields } from './readers.ts';
import { rules } from './rules.ts';
import { defaultIgnoreFields, readIgnoreFields, readWatchedResources } from './resources-reader.ts';
import { controllerConfigSchema } from './schema.ts';
import { fieldNames, readSetting } from './setting-reader.ts';
import { readTemplates } from './templates-reader.ts';
import { readValidationTests, renderedFiles, type TestContext } from './validation-tests-reader.ts';
import type { ConfigLoad, ControllerConfig } from './types.ts';

const schema = controllerConfigSchema.fields;

function readLabels(problems: Problems, value: unknown, at: Path): Record<string, string> {
  const valid = Object.entries(readMapping(problems, value, at) ?? {}).flatMap(([key, item]): [string, string][] => {
    const problem = checkLabelKey(key) ?? (typeof item === 'string' ? checkLabelValue(item) : `must be a string (quote numbers and booleans), got ${describe(item)}`);
    if (problem === undefined) return [[key, item as string]];
    problems.add([...at, key], problem);
    return [];
  });
  return Object.fromEntries(valid);
}

function readPodSelector(problems: Problems, value: unknown, at: Path): ControllerConfig['podSelector'] {
  const raw = fields(problems, value, at, fieldNames(schema.podSelector)) ?? {};
  return { matchLabels: raw.matchLabels === undefined ? schema.podSelector.fields.matchLabels.default : readLabels(problems, raw.matchLabels, [...at, 'matchLabels']) };
}

/** spec.controllerName of the GatewayClasses this controller serves unless the configuration names another. */
export const DEFAULT_GATEWAY_CONTROLLER_NAME: string = schema.gatewayApi.fields.controllerName.default;

function readPipeline(problems: Problems, raw: Fields<keyof typeof schema>, timings: DataplaneTimings): PipelineSettings {
  const debounceMs = readSetting(problems, schema.debounce, raw.debounce, ['debounce']);
  const maxWaitMs = readSetting(problems, schema.maxWait, raw.maxWait, ['maxWait']);
  // maxWait caps how long debouncing may postpone a render; below debounce it could never apply.
  if (maxWaitMs < debounceMs && problems.clean(['debounce'], ['maxWait'])) {
    problems.add(['maxWait'], `must not be shorter than debounce (${debounceMs}ms), got ${maxWaitMs}ms`);
  }
  const leadingEdge = readSetting(problems, schema.leadingEdge, raw.leadingEdge, ['leadingEdge']);
  const runtimeFirst = readSetting(problems, schema.runtimeFirst, raw.runtimeFirst, ['runtimeFirst']);
  return { debounceMs, maxWaitMs, leadingEdge, runtimeFirst, ...timings, retry: defaultPipelineSettings.retry };
}

function readConfig(problems: Problems, document: unknown): ControllerConfig {
  const raw = fields(problems, document, [], fieldNames(controllerConfigSchema)) ?? {};
  const { settings, timings } = readDataplane(problems, raw.dataplane, ['dataplane']);
  const watchedResources = readWatchedResources(problems, raw.watchedResources, ['watchedResources']);
  const templates = readTemplates(problems, raw.templates, ['templates']);
  const ingress = (raw.ingress === undefined ? undefined : fields(problems, raw.ingress, ['ingress'], fieldNames(schema.ingress))) ?? {};
  const gatewayApi = (raw.gatewayApi === undefined ? undefined : fields(problems, raw.gatewayApi, ['gatewayApi'], fieldNames(schema.gatewayApi))) ?? {};
  const context: TestContext = {
    resources: watchedResources,
    resourceNames: isMapping(raw.watchedResources) ? Object.keys(raw.watchedResources) : [],
    files: renderedFiles(settings, templates),
  };
  return {
    podSelector: raw.podSelector === undefined ? { matchLabels: schema.podSelector.fields.matchLabels.default } : readPodSelector(problems, raw.podSelector, ['podSelector']),
    dataplane: settings,
    pipeline: readPipeline(problems, raw, timings),
    watchedResources,
    ignoreFields: withDefault(raw.ignoreFields, ['ignoreFields'], defaultIgnoreFields, (v, p) => readIgnoreFields(problems, v, p)),
    ingress: {
      className: readSetting(problems, schema.ingress.fields.className, ingress.className, ['ingress', 'className']),
      sharedHostNamespaces: withDefault<readonly string[]>(ingress.sharedHostNamespaces, ['ingress', 'sharedHostNamespaces'], schema.ingress.fields.sharedHostNamespaces.default, (v, p) =>
        readSharedHostNamespaces(problems, v, p),
      ),
    },
    gatewayApi: {
      controllerName: readSetting(problems, schema.gatewayApi.fields.controllerName, gatewayApi.controllerName, ['gatewayApi', 'controllerName']),
      httpPort: readSetting(problems, schema.gatewayApi.fields.httpPort, gatewayApi.httpPort, ['gatewayApi', 'httpPort']),
      httpsPort: readSetting(problems, schema.gatewayApi.fields.httpsPort, gatewayApi.httpsPort, ['gatewayApi', 'httpsPort']),
    },
    templates,
    templateValues: withDefault(raw.templateValues, ['templateValues'], schema.templateValues.default, (v, p) => {
      if (isMapping(v)) return v;
      problems.add(p, `must be a mapping, got ${describe(v)}`);
      return undefined;
    }),
    validationTests: readValidationTests(problems, raw.validationTests, ['validationTests'], context),
    allowDirectives: withDefault<readonly GuardedDirective[]>(raw.allowDirectives, ['allowDirectives'], schema.allowDirectives.default, (v, p) => readAllowDirectives(problems, v, p)),
  };
}

/** Namespace names, or `*` alone for every namespace. */
function readSharedHostNamespaces(problems: Problems, value: unknown, at: Path): string[] | undefined {
  const items = readList(problems, value, at);
  if (items === undefined) return undefined;
  const namespaces = items.map((item, i) => {
    if (item === '*' && items.length === 1) return item;
    return readMatching(problems, item, [...at, i], rules.dnsLabel);
  });
  return namespaces.every((namespace) => namespace !== undefined) ? namespaces : undefined;
}

function readAllowDirectives(problems: Problems, value: unknown, at: Path): GuardedDirective[] | undefined {
  const items = readList(problems, value, at);
  if (items === undefined) return undefined;
  const allowed = items.map((item, i) => {
    const name = readString(problems, item, [...at, i]);
    if (name === undefined || isGuardedDirective(name)) return name;
    problems.add([...at, i], `unknown guarded directive ${JSON.stringify(name)} (one of ${Object.keys(guardedDirectives).join(', ')})`);
    return undefined;
  });
  return allowed.every((name) => name !== undefined) ? (allowed as GuardedDirective[]) : undefined;
}

/**
 * The path of the first value that contains itself (a YAML alias to one of
 * its own ancestors): walking it, as rendering or hashing does, never ends.
 */
function selfReference(document: unknown): Path | undefined {
  const ancestors = new Set<object>();
  const done = new Set<object>();
  const visit = (value: unknown, at: Path): Path | undefined => {
    if (typeof value !== 'object' || value === null || done.has(value)) return undefined;
    if (ancestors.has(value)) return at;
    ancestors.add(value);
    const children: [string | number, unknown][] = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
    for (const [key, child] of children) {
      const found = visit(child, [...at, key]);
      if (found !== undefined) return found;
    }
    ancestors.delete(value);
    done.add(value);
    return undefined;
  };
  return visit(document, []);
}

/** Checks an already parsed configuration document (the value of the YAML). */
export function loadControllerConfigObject(document: unknown): ConfigLoad<ControllerConfig> {
  if (document === undefined || document === null) return { ok: false, errors: ['the configuration is empty'] };
  if (!isMapping(document)) return { ok: false, errors: [`the configuration must be a mapping, got ${describe(document)}`] };
  const cycle = selfReference(document);
  if (cycle !== undefined) return { ok: false, errors: [`${formatPath(cycle)}: refers to itself through a YAML alias`] };
  const problems = new Problems();
  const config = readConfig(problems, document);
  return problems.none ? { ok: true, config } : { ok: false, errors: problems.messages(document) };
}

function yamlError(error: unknown): string {
  if (!(error instanceof YAMLException)) return `invalid YAML: ${errorMessage(error)}`;
  const at = error.mark === undefined ? '' : ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}`;
  return `invalid YAML${at}: ${error.reason}`;
}

/** Parses and checks a configuration in its YAML text form. */
export function loadControllerConfig(text: string): ConfigLoad<ControllerConfig> {
  let documents: unknown[];
  try {
    documents = loadAll(text);
  } catch (error) {
    return { ok: false, errors: [yamlError(error)] };
  }
  if (documents.length > 1) return { ok: false, errors: [`expected one YAML document, got ${documents.length}`] };
  return loadControllerConfigObject(documents[0]);
}
