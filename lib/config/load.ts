/**
 * Loads the controller configuration from YAML: checks every field, fills
 * the defaults, compiles durations, paths, selectors and templates, and
 * reports every problem at once, each with its path, so one edit can fix
 * them all. Unknown fields are errors: a misspelt field silently falling
 * back to its default is the hardest mistake to spot.
 */
import { posix } from 'node:path';
import { loadAll, YAMLException } from 'js-yaml';
import { errorMessage } from '../error-message.ts';
import { checkLabelKey, checkLabelValue, isDnsLabel, isDnsSubdomain, parseLabelSelector } from '../kube-syntax/label-selector.ts';
import { pluralOf } from '../kube-syntax/plural.ts';
import { guardedDirectives, isGuardedDirective, type GuardedDirective } from './guarded-directives.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { compileTemplate, TemplateError } from './template.ts';
import type { Template } from './template.ts';
import { parseDuration } from './duration.ts';
import { compilePath } from './json-path.ts';
import { defaultPipelineSettings } from './pipeline-settings.ts';
import type { PipelineSettings } from './pipeline-settings.ts';
import type {
  Assertion,
  ConfigLoad,
  CompiledPath,
  ControllerConfig,
  DataplaneSettings,
  FieldSelector,
  Relation,
  Templates,
  ValidationTest,
  WatchedResource,
} from './types.ts';

type Path = readonly (string | number)[];
type Mapping = Readonly<Record<string, unknown>>;
/** Reads one value; undefined means it was invalid and the problem is reported. */
type Reader<T> = (value: unknown, path: Path) => T | undefined;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isMapping(value)) return 'a mapping';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function formatPath(path: Path): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`)).join('');
}

function pathKey(path: Path): string {
  return JSON.stringify(path);
}

/** Every path of the document in document order (js-yaml keeps mapping keys in source order). */
function documentOrder(document: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const seen = new Set<object>();
  const visit = (value: unknown, path: Path): void => {
    order.set(pathKey(path), order.size);
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, [...path, i]));
    else for (const [key, item] of Object.entries(value)) visit(item, [...path, key]);
  };
  visit(document, []);
  return order;
}

/** A missing field sorts at its closest present ancestor. */
function rank(order: ReadonlyMap<string, number>, path: Path): number {
  for (let length = path.length; length > 0; length--) {
    const found = order.get(pathKey(path.slice(0, length)));
    if (found !== undefined) return found;
  }
  return 0;
}

class Problems {
  readonly #found: { readonly path: Path; readonly message: string }[] = [];

  add(path: Path, message: string): void {
    this.#found.push({ path, message });
  }

  get none(): boolean {
    return this.#found.length === 0;
  }

  /**
   * Whether nothing was reported at or under any of the paths. Checks that
   * combine several fields run only on fields that loaded cleanly, so that
   * one mistake is not reported twice.
   */
  clean(...paths: Path[]): boolean {
    return !this.#found.some((problem) => paths.some((path) => path.every((segment, i) => problem.path[i] === segment)));
  }

  /** Problems are found section by section; the author reads them top to bottom. */
  messages(document: unknown): string[] {
    const order = documentOrder(document);
    return this.#found
      .map((problem) => ({ problem, rank: rank(order, problem.path) }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ problem }) => (problem.path.length === 0 ? problem.message : `${formatPath(problem.path)}: ${problem.message}`));
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** `owner` names what the field belongs to when the known fields depend on it. */
function unknownField(key: string, known: readonly string[], owner: string | undefined): string {
  const field = owner === undefined ? 'unknown field' : `unknown field for ${owner}`;
  const distance = (name: string): number => editDistance(key.toLowerCase(), name.toLowerCase());
  const closest = known.toSorted((a, b) => distance(a) - distance(b))[0];
  if (closest !== undefined && distance(closest) <= 2) return `${field} (did you mean ${closest}?)`;
  return `${field} (expected ${known.length === 1 ? '' : 'one of '}${known.join(', ')})`;
}

function readMapping(problems: Problems, value: unknown, path: Path): Mapping | undefined {
  if (isMapping(value)) return value;
  problems.add(path, `must be a mapping, got ${describe(value)}`);
  return undefined;
}

type Fields<K extends string> = Partial<Record<K, unknown>>;

/**
 * The known fields of a mapping, or undefined when it is not one; unknown
 * fields are reported. A field set to null (`key:` with nothing after it)
 * counts as absent, as YAML authors expect.
 */
function fields<K extends string>(
  problems: Problems,
  value: unknown,
  path: Path,
  known: readonly K[],
  owner?: string,
): Fields<K> | undefined {
  if (readMapping(problems, value, path) === undefined) return undefined;
  const found: Partial<Record<K, unknown>> = {};
  for (const [key, item] of Object.entries(value as Mapping)) {
    if (!(known as readonly string[]).includes(key)) problems.add([...path, key], unknownField(key, known, owner));
    else if (item !== null) found[key as K] = item;
  }
  return found;
}

function withDefault<T>(value: unknown, path: Path, fallback: T, read: Reader<T>): T {
  return value === undefined ? fallback : (read(value, path) ?? fallback);
}

function required<T>(problems: Problems, value: unknown, path: Path, read: Reader<T>): T | undefined {
  if (value !== undefined) return read(value, path);
  problems.add(path, 'required');
  return undefined;
}

function readString(problems: Problems, value: unknown, path: Path): string | undefined {
  if (typeof value === 'string') return value;
  problems.add(path, `must be a string, got ${describe(value)}`);
  return undefined;
}

function readInteger(problems: Problems, value: unknown, path: Path, min: number, max = Infinity): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
  problems.add(path, `must be an integer ${range}, got ${describe(value)}`);
  return undefined;
}

interface Rule {
  readonly test: (text: string) => boolean;
  /** Completes "must be …". */
  readonly description: string;
}

function readMatching(problems: Problems, value: unknown, path: Path, rule: Rule): string | undefined {
  const text = readString(problems, value, path);
  if (text === undefined || rule.test(text)) return text;
  problems.add(path, `must be ${rule.description}, got ${JSON.stringify(text)}`);
  return undefined;
}

function readList(problems: Problems, value: unknown, path: Path): readonly unknown[] | undefined {
  if (Array.isArray(value)) return value;
  problems.add(path, `must be a list, got ${describe(value)}`);
  return undefined;
}

/** The entries of a name → value mapping whose names follow the rule; the others are reported. */
function named(problems: Problems, value: unknown, path: Path, rule: Rule): [string, unknown][] {
  return Object.entries(readMapping(problems, value, path) ?? {}).filter(([name]) => {
    if (rule.test(name)) return true;
    problems.add([...path, name], `invalid name: must be ${rule.description}`);
    return false;
  });
}

const rules = {
  /** Resource and relation names become Mustache path segments (`resources.ingresses`). */
  identifier: {
    test: (text) => /^[a-z][a-zA-Z0-9_]*$/.test(text),
    description: "a lowercase letter followed by letters, digits or '_'",
  },
  partial: { test: (text) => /^[A-Za-z0-9_.-]+$/.test(text), description: "letters, digits, '_', '.' or '-'" },
  /** File names end up in paths on the HAProxy host: no separators, no '.' or '..'. */
  fileName: {
    test: (text) => /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(text),
    description: "a letter or digit followed by letters, digits, '_', '.' or '-'",
  },
  directory: {
    test: (text) => /^[A-Za-z0-9._-]+$/.test(text) && text !== '.' && text !== '..',
    description: "a single directory name (letters, digits, '_', '.' or '-'; not '.' or '..')",
  },
  absolutePath: {
    test: (text) => text.startsWith('/') && !text.split('/').some((part) => part === '.' || part === '..'),
    description: "an absolute path without '.' or '..' segments",
  },
  apiVersion: {
    test: (text) => {
      const parts = text.split('/');
      const version = parts.at(-1)!;
      return parts.length <= 2 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(version) && (parts.length === 1 || isDnsSubdomain(parts[0]!));
    },
    description: '"v1" or "group/version"',
  },
  kind: { test: (text) => /^[A-Za-z][A-Za-z0-9]*$/.test(text), description: 'a kind such as Ingress' },
  resource: { test: isDnsLabel, description: 'a plural resource name such as ingresses' },
  dnsLabel: { test: isDnsLabel, description: "a DNS label (lowercase letters, digits and '-')" },
  dnsSubdomain: { test: isDnsSubdomain, description: "a DNS subdomain (lowercase letters, digits, '-' and '.')" },
  nonEmpty: { test: (text) => text !== '', description: 'non-empty' },
} satisfies Record<string, Rule>;

/**
 * Timers in Node.js fire at once when set beyond 2^31 - 1 ms, which would
 * turn a long interval into a busy loop; 596h is just below that.
 */
const longestDurationMs = 596 * 3_600_000;

function durationLimitProblem(milliseconds: number, positive: boolean): string | undefined {
  if (positive && milliseconds === 0) return 'must be longer than 0s';
  if (milliseconds > longestDurationMs) return 'must be at most 596h';
  return undefined;
}

function readDuration(problems: Problems, value: unknown, path: Path, positive = false): number | undefined {
  if (typeof value !== 'string') {
    problems.add(path, `must be a duration such as "500ms" or "1m30s", got ${describe(value)}`);
    return undefined;
  }
  let milliseconds: number;
  try {
    milliseconds = parseDuration(value);
  } catch (error) {
    problems.add(path, errorMessage(error));
    return undefined;
  }
  const problem = durationLimitProblem(milliseconds, positive);
  if (problem === undefined) return milliseconds;
  problems.add(path, problem);
  return undefined;
}

/** For intervals and timeouts, where zero would mean a busy loop or an instant failure. */
function readPositiveDuration(problems: Problems, value: unknown, path: Path): number | undefined {
  return readDuration(problems, value, path, true);
}

function readPath(problems: Problems, value: unknown, at: Path): CompiledPath | undefined {
  const source = readString(problems, value, at);
  if (source === undefined) return undefined;
  try {
    return compilePath(source);
  } catch (error) {
    problems.add(at, errorMessage(error));
    return undefined;
  }
}

function readPaths(problems: Problems, value: unknown, at: Path): CompiledPath[] | undefined {
  const items = readList(problems, value, at);
  if (items === undefined) return undefined;
  if (items.length === 0) {
    problems.add(at, 'must list at least one path');
    return undefined;
  }
  const compiled = items.map((item, i) => readPath(problems, item, [...at, i]));
  return compiled.every((item) => item !== undefined) ? compiled : undefined;
}

function readLabels(problems: Problems, value: unknown, at: Path): Record<string, string> {
  const valid = Object.entries(readMapping(problems, value, at) ?? {}).flatMap(([key, item]): [string, string][] => {
    const problem =
      checkLabelKey(key) ??
      (typeof item === 'string' ? checkLabelValue(item) : `must be a string (quote numbers and booleans), got ${describe(item)}`);
    if (problem === undefined) return [[key, item as string]];
    problems.add([...at, key], problem);
    return [];
  });
  return Object.fromEntries(valid);
}

function readPodSelector(problems: Problems, value: unknown, at: Path): ControllerConfig['podSelector'] {
  const raw = fields(problems, value, at, ['matchLabels']) ?? {};
  return { matchLabels: raw.matchLabels === undefined ? {} : readLabels(problems, raw.matchLabels, [...at, 'matchLabels']) };
}

const dataplaneFields = [
  'port',
  'scheme',
  'minDeploymentInterval',
  'driftCheckInterval',
  'deployTimeout',
  'maxParallel',
  'baseDir',
  'mapsDir',
  'certificatesDir',
  'generalDir',
  'configFile',
] as const;

type DataplaneTimings = Pick<PipelineSettings, 'minDeploymentIntervalMs' | 'driftCheckIntervalMs' | 'deployTimeoutMs' | 'maxParallel'>;

function readDataplane(problems: Problems, value: unknown, at: Path): { settings: DataplaneSettings; timings: DataplaneTimings } {
  const raw = (value === undefined ? undefined : fields(problems, value, at, dataplaneFields)) ?? {};
  const field = <T>(key: (typeof dataplaneFields)[number], fallback: T, read: Reader<T>): T =>
    withDefault(raw[key], [...at, key], fallback, read);
  const directory = (key: 'mapsDir' | 'certificatesDir' | 'generalDir', fallback: string): string =>
    field(key, fallback, (v, p) => readMatching(problems, v, p, rules.directory));
  const baseDir = field('baseDir', '/etc/haproxy', (v, p) => readMatching(problems, v, p, rules.absolutePath));
  const settings: DataplaneSettings = {
    port: field('port', 5555, (v, p) => readInteger(problems, v, p, 1, 65_535)),
    scheme: field('scheme', 'http', (v, p) => {
      if (v === 'http' || v === 'https') return v;
      problems.add(p, `must be http or https, got ${describe(v)}`);
      return undefined;
    }),
    baseDir,
    mapsDir: directory('mapsDir', 'maps'),
    certificatesDir: directory('certificatesDir', 'ssl'),
    generalDir: directory('generalDir', 'general'),
    // Follows baseDir unless given, so moving the base directory moves the configuration with it.
    configFile: field('configFile', posix.join(baseDir, 'haproxy.cfg'), (v, p) => readMatching(problems, v, p, rules.absolutePath)),
  };
  checkDistinctDirectories(problems, settings, raw, at);
  const defaults = defaultPipelineSettings;
  const timings: DataplaneTimings = {
    minDeploymentIntervalMs: field('minDeploymentInterval', defaults.minDeploymentIntervalMs, (v, p) => readDuration(problems, v, p)),
    driftCheckIntervalMs: field('driftCheckInterval', defaults.driftCheckIntervalMs, (v, p) => readPositiveDuration(problems, v, p)),
    deployTimeoutMs: field('deployTimeout', defaults.deployTimeoutMs, (v, p) => readPositiveDuration(problems, v, p)),
    maxParallel: field('maxParallel', defaults.maxParallel, (v, p) => readInteger(problems, v, p, 1)),
  };
  return { settings, timings };
}

/** Two storage kinds sharing a directory would overwrite each other's files. */
function checkDistinctDirectories(problems: Problems, settings: DataplaneSettings, raw: Fields<string>, at: Path): void {
  const keys = ['mapsDir', 'certificatesDir', 'generalDir'] as const;
  keys.forEach((key, i) => {
    const earlier = keys.slice(0, i).find((other) => settings[other] === settings[key]);
    if (earlier === undefined || !problems.clean([...at, key], [...at, earlier])) return;
    // Reported at the one the author wrote: a default can only clash with a given value.
    const [reported, other] = raw[key] === undefined ? [earlier, key] : [key, earlier];
    problems.add([...at, reported], `must differ from ${other} (both are ${JSON.stringify(settings[key])})`);
  });
}

function readFieldSelector(problems: Problems, value: unknown, at: Path): FieldSelector[] {
  const text = readString(problems, value, at);
  if (text === undefined || text === '') return [];
  return text.split(',').flatMap((part): FieldSelector[] => {
    const requirement = /^(.*?)(==|!=|=)(.*)$/s.exec(part);
    if (requirement === null) {
      problems.add(at, `${JSON.stringify(part)} is not path=value or path!=value`);
      return [];
    }
    const [, source = '', operator, selected = ''] = requirement;
    try {
      return [{ path: compilePath(source.trim()), operator: operator === '!=' ? '!=' : '=', value: selected.trim() }];
    } catch (error) {
      problems.add(at, `${JSON.stringify(source.trim())}: ${errorMessage(error)}`);
      return [];
    }
  });
}

/** Relations become properties of the source objects, so they must not hide the standard fields. */
const objectFields = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];

/** The relation as written; its target is checked once every resource is known. */
function readRelation(problems: Problems, name: string, value: unknown, at: Path): Relation | undefined {
  if (objectFields.includes(name)) problems.add(at, `a relation named ${name} would hide the objects' own ${name} field`);
  const raw = fields(problems, value, at, ['resource', 'keys']);
  if (raw === undefined) return undefined;
  const resource = required(problems, raw.resource, [...at, 'resource'], (v, p) => readString(problems, v, p));
  const keys = required(problems, raw.keys, [...at, 'keys'], (v, p) => readPaths(problems, v, p));
  return resource === undefined || keys === undefined ? undefined : { name, resource, keys };
}

const resourceFields = ['apiVersion', 'kind', 'resource', 'namespace', 'labelSelector', 'fieldSelector', 'indexBy', 'relations'] as const;

const defaultIndexBy = [compilePath('metadata.namespace'), compilePath('metadata.name')];

function readResource(problems: Problems, name: string, value: unknown, at: Path): WatchedResource | undefined {
  const raw = fields(problems, value, at, resourceFields);
  if (raw === undefined) return undefined;
  const within = (key: string): Path => [...at, key];
  const apiVersion = required(problems, raw.apiVersion, within('apiVersion'), (v, p) => readMatching(problems, v, p, rules.apiVersion));
  const kind = raw.kind === undefined ? undefined : readMatching(problems, raw.kind, within('kind'), rules.kind);
  const resource = raw.resource === undefined ? undefined : readMatching(problems, raw.resource, within('resource'), rules.resource);
  if (raw.kind === undefined && raw.resource === undefined) problems.add(at, 'needs kind or resource');
  const labelSelector = raw.labelSelector === undefined ? undefined : readString(problems, raw.labelSelector, within('labelSelector'));
  if (labelSelector !== undefined) {
    try {
      parseLabelSelector(labelSelector);
    } catch (error) {
      problems.add(within('labelSelector'), errorMessage(error));
    }
  }
  const relations = raw.relations === undefined ? [] : named(problems, raw.relations, within('relations'), rules.identifier);
  return {
    name,
    apiVersion: apiVersion ?? '',
    kind,
    resource: resource ?? (kind === undefined ? '' : pluralOf(kind)),
    namespace: raw.namespace === undefined ? undefined : readMatching(problems, raw.namespace, within('namespace'), rules.dnsLabel),
    labelSelector,
    fieldSelector: raw.fieldSelector === undefined ? [] : readFieldSelector(problems, raw.fieldSelector, within('fieldSelector')),
    indexBy: withDefault(raw.indexBy, within('indexBy'), defaultIndexBy, (v, p) => readPaths(problems, v, p)),
    relations: relations.flatMap(([relation, item]) => readRelation(problems, relation, item, [...at, 'relations', relation]) ?? []),
  };
}

/** A relation looks up its target's index by a prefix of the target's keys, so it can use at most that many. */
function checkRelations(problems: Problems, resources: readonly WatchedResource[], names: readonly string[], at: Path): void {
  for (const resource of resources) {
    for (const relation of resource.relations) {
      const within = [...at, resource.name, 'relations', relation.name];
      const target = resources.find((candidate) => candidate.name === relation.resource);
      if (!names.includes(relation.resource)) {
        problems.add([...within, 'resource'], `${JSON.stringify(relation.resource)} is not a watched resource (${names.join(', ')})`);
      } else if (target !== undefined && problems.clean([...at, target.name, 'indexBy']) && relation.keys.length > target.indexBy.length) {
        const indexed = `${target.name} is indexed by ${target.indexBy.length} key${target.indexBy.length === 1 ? '' : 's'}`;
        problems.add([...within, 'keys'], `${indexed}, got ${relation.keys.length}`);
      }
    }
  }
}

function readWatchedResources(problems: Problems, value: unknown, at: Path): WatchedResource[] {
  if (value === undefined) {
    problems.add(at, 'required');
    return [];
  }
  const entries = named(problems, value, at, rules.identifier);
  if (isMapping(value) && Object.keys(value).length === 0) problems.add(at, 'must list at least one resource');
  const resources = entries.flatMap(([name, item]) => readResource(problems, name, item, [...at, name]) ?? []);
  checkRelations(problems, resources, isMapping(value) ? Object.keys(value) : [], at);
  return resources;
}

/** The store is keyed by namespace and name; dropping them would merge unrelated objects. */
const identityPaths = [
  ['metadata', 'name'],
  ['metadata', 'namespace'],
];

function readIgnoreFields(problems: Problems, value: unknown, at: Path): CompiledPath[] | undefined {
  const items = readList(problems, value, at);
  if (items === undefined) return undefined;
  const compiled = items.map((item, i) => {
    const ignored = readPath(problems, item, [...at, i]);
    const identity = identityPaths.find((identityPath) => ignored?.segments.every((segment, j) => identityPath[j] === segment));
    if (identity === undefined) return ignored;
    problems.add([...at, i], `would remove ${identity.join('.')}, which identifies objects`);
    return undefined;
  });
  return compiled.every((item) => item !== undefined) ? compiled : undefined;
}

const defaultIgnoreFields = [
  compilePath('metadata.managedFields'),
  compilePath("metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']"),
];

function compile(problems: Problems, source: string, at: Path): Template {
  const name = formatPath(at);
  try {
    return compileTemplate(name, source);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    // TemplateError names the template; the path in front of the problem already does.
    const prefix = `${name}: `;
    problems.add(at, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message);
    return placeholder(at);
  }
}

/** Stands in for a template that failed to load, so the rest can still be checked; never rendered, since loading fails. */
function placeholder(at: Path): Template {
  return compileTemplate(formatPath(at), '');
}

/** Invalid templates stay in the map (compiled empty) so references to them are not reported as missing too. */
function readTemplateMap(problems: Problems, value: unknown, at: Path, rule: Rule): Map<string, Template> {
  const templates = new Map<string, Template>();
  if (value === undefined) return templates;
  for (const [name, source] of named(problems, value, at, rule)) {
    const text = readString(problems, source, [...at, name]);
    templates.set(name, text === undefined ? placeholder([...at, name]) : compile(problems, text, [...at, name]));
  }
  return templates;
}

const templateFields = ['haproxyConfig', 'partials', 'maps', 'files', 'certificates'] as const;

function readTemplates(problems: Problems, value: unknown, at: Path): Templates {
  const raw = required(problems, value, at, (v, p) => fields(problems, v, p, templateFields));
  const mainAt = [...at, 'haproxyConfig'];
  const main = raw && required(problems, raw.haproxyConfig, mainAt, (v, p) => readMatching(problems, v, p, rules.nonEmpty));
  const templates: Templates = {
    haproxyConfig: main === undefined ? placeholder(mainAt) : compile(problems, main, mainAt),
    partials: readTemplateMap(problems, raw?.partials, [...at, 'partials'], rules.partial),
    maps: readTemplateMap(problems, raw?.maps, [...at, 'maps'], rules.fileName),
    files: readTemplateMap(problems, raw?.files, [...at, 'files'], rules.fileName),
    certificates: readTemplateMap(problems, raw?.certificates, [...at, 'certificates'], rules.fileName),
  };
  checkPartials(problems, templates, at);
  return templates;
}

function checkPartials(problems: Problems, templates: Templates, at: Path): void {
  const all: [Path, Template][] = [[[...at, 'haproxyConfig'], templates.haproxyConfig]];
  for (const group of ['partials', 'maps', 'files', 'certificates'] as const) {
    for (const [name, template] of templates[group]) all.push([[...at, group, name], template]);
  }
  for (const [templateAt, template] of all) {
    for (const partial of template.partials) {
      if (!templates.partials.has(partial)) {
        problems.add(templateAt, `uses partial ${JSON.stringify(partial)}, which ${formatPath([...at, 'partials'])} does not define`);
      }
    }
  }
}

/**
 * The file names each storage directory can hold, for checking test
 * targets; undefined when only a render can tell: certificates also come
 * from the TLS secrets of ingresses.
 */
type RenderedFiles = ReadonlyMap<string, ReadonlySet<string> | undefined>;

function renderedFiles(dataplane: DataplaneSettings, templates: Templates): RenderedFiles {
  return new Map([
    [dataplane.mapsDir, new Set(templates.maps.keys())],
    [dataplane.certificatesDir, undefined],
    [dataplane.generalDir, new Set(templates.files.keys())],
  ]);
}

interface TestContext {
  readonly resources: readonly WatchedResource[];
  /** Every key under watchedResources, loadable or not. */
  readonly resourceNames: readonly string[];
  readonly files: RenderedFiles;
}

function stringMapProblem(value: unknown): string | undefined {
  if (!isMapping(value)) return `must be a mapping, got ${describe(value)}`;
  const wrong = Object.entries(value).find(([, item]) => typeof item !== 'string');
  return wrong === undefined ? undefined : `${wrong[0]} must be a string, got ${describe(wrong[1])}`;
}

function metadataProblems(metadata: Mapping): [string, string][] {
  const found: [string, string][] = [];
  const { name, namespace } = metadata;
  if (name === undefined) found.push(['name', 'required']);
  else if (typeof name !== 'string' || name === '') found.push(['name', `must be a non-empty string, got ${describe(name)}`]);
  if (namespace !== undefined && typeof namespace !== 'string') found.push(['namespace', `must be a string, got ${describe(namespace)}`]);
  for (const key of ['labels', 'annotations']) {
    const problem = metadata[key] === undefined ? undefined : stringMapProblem(metadata[key]);
    if (problem !== undefined) found.push([key, problem]);
  }
  return found;
}

/** Enough of a Kubernetes object for the store: a name, string labels and annotations, the watched kind. */
function readFixture(problems: Problems, value: unknown, at: Path, resource: WatchedResource | undefined): KubeObject | undefined {
  if (!isMapping(value)) {
    problems.add(at, `must be a mapping, got ${describe(value)}`);
    return undefined;
  }
  const metadataAt = [...at, 'metadata'];
  if (!isMapping(value.metadata)) {
    problems.add(metadataAt, value.metadata === undefined ? 'required' : `must be a mapping, got ${describe(value.metadata)}`);
    return undefined;
  }
  const found: [Path, string][] = metadataProblems(value.metadata).map(([key, problem]) => [[...metadataAt, key], problem]);
  for (const key of ['apiVersion', 'kind'] as const) {
    const expected = resource?.[key];
    if (value[key] !== undefined && expected !== undefined && value[key] !== expected) {
      found.push([[...at, key], `must be ${expected} like the watched resource, got ${describe(value[key])}`]);
    }
  }
  for (const [problemAt, problem] of found) problems.add(problemAt, problem);
  if (found.length > 0) return undefined;
  const kind = resource?.kind === undefined ? {} : { kind: resource.kind };
  return { ...(resource === undefined ? {} : { apiVersion: resource.apiVersion }), ...kind, ...value } as KubeObject;
}

function readFixtures(problems: Problems, value: unknown, at: Path, context: TestContext): Map<string, KubeObject[]> {
  const fixtures = new Map<string, KubeObject[]>();
  if (value === undefined) return fixtures;
  for (const [name, items] of named(problems, value, at, rules.identifier)) {
    const within = [...at, name];
    if (!context.resourceNames.includes(name)) {
      problems.add(within, `${JSON.stringify(name)} is not a watched resource (${context.resourceNames.join(', ')})`);
      continue;
    }
    const resource = context.resources.find((candidate) => candidate.name === name);
    const seen = new Map<string, number>();
    const objects = (readList(problems, items, within) ?? []).flatMap((item, i) => {
      const object = readFixture(problems, item, [...within, i], resource);
      if (object === undefined) return [];
      const { namespace, name: objectName } = object.metadata;
      const identity = namespace === undefined || namespace === '' ? objectName : `${namespace}/${objectName}`;
      const first = seen.get(identity);
      if (first !== undefined) problems.add([...within, i], `duplicates ${formatPath([...within, first])} (${identity})`);
      seen.set(identity, first ?? i);
      return [object];
    });
    fixtures.set(name, objects);
  }
  return fixtures;
}

const assertionTypes = ['haproxy_valid', 'deterministic', 'contains', 'not_contains', 'equals', 'match_count'] as const;
type AssertionType = (typeof assertionTypes)[number];

const assertionFields: Readonly<Record<AssertionType, readonly string[]>> = {
  haproxy_valid: ['type'],
  deterministic: ['type'],
  contains: ['type', 'target', 'pattern'],
  not_contains: ['type', 'target', 'pattern'],
  equals: ['type', 'target', 'expected'],
  match_count: ['type', 'target', 'pattern', 'count'],
};

const mainFile = 'haproxy.cfg';

/** A misspelt target would fail every run of the test; caught here, it names the files that exist. */
function targetProblem(target: string, files: RenderedFiles): string | undefined {
  if (target === mainFile) return undefined;
  const slash = target.indexOf('/');
  const directory = target.slice(0, Math.max(slash, 0));
  const file = target.slice(slash + 1);
  if (!files.has(directory) || !rules.fileName.test(file)) {
    const directories = [...files.keys()].map((name) => `${name}/<file>`).join(', ');
    return `must be ${mainFile} or one of ${directories}, got ${JSON.stringify(target)}`;
  }
  const names = files.get(directory);
  if (names === undefined || names.has(file)) return undefined;
  return `no template renders ${JSON.stringify(target)} (${directory} has ${names.size === 0 ? 'none' : [...names].join(', ')})`;
}

function readTarget(problems: Problems, value: unknown, at: Path, files: RenderedFiles): string | undefined {
  const target = readString(problems, value, at);
  const problem = target === undefined ? undefined : targetProblem(target, files);
  if (problem === undefined) return target;
  problems.add(at, problem);
  return undefined;
}

/** Multiline, so `^` and `$` anchor at configuration lines. */
function readPattern(problems: Problems, value: unknown, at: Path): RegExp | undefined {
  const source = readString(problems, value, at);
  if (source === undefined) return undefined;
  try {
    return new RegExp(source, 'm');
  } catch (error) {
    const message = errorMessage(error);
    problems.add(at, `${message.charAt(0).toLowerCase()}${message.slice(1)}`);
    return undefined;
  }
}

function assertionType(problems: Problems, assertion: Mapping, at: Path): AssertionType | undefined {
  const { type } = assertion;
  if (assertionTypes.includes(type as AssertionType)) return type as AssertionType;
  const expected = `one of ${assertionTypes.join(', ')}`;
  const problem = type === undefined || type === null ? `required (${expected})` : `must be ${expected}, got ${describe(type)}`;
  problems.add([...at, 'type'], problem);
  return undefined;
}

function readAssertion(problems: Problems, value: unknown, at: Path, context: TestContext): Assertion | undefined {
  const assertion = readMapping(problems, value, at);
  const checked = assertion && assertionType(problems, assertion, at);
  if (checked === undefined) return undefined;
  // The type decides which fields belong, so a field of another type is reported as unknown.
  const raw = fields(problems, assertion, at, assertionFields[checked], `a ${checked} assertion`) ?? {};
  const within = (key: string): Path => [...at, key];
  const file = withDefault(raw.target, within('target'), mainFile, (v, p) => readTarget(problems, v, p, context.files));
  const regex = (): RegExp | undefined => required(problems, raw.pattern, within('pattern'), (v, p) => readPattern(problems, v, p));
  switch (checked) {
    case 'haproxy_valid':
    case 'deterministic':
      return { type: checked };
    case 'contains':
    case 'not_contains': {
      const compiled = regex();
      return compiled === undefined ? undefined : { type: checked, target: file, pattern: compiled };
    }
    case 'equals': {
      const expected = required(problems, raw.expected, within('expected'), (v, p) => readString(problems, v, p));
      return expected === undefined ? undefined : { type: checked, target: file, expected };
    }
    case 'match_count': {
      const compiled = regex();
      const count = required(problems, raw.count, within('count'), (v, p) => readInteger(problems, v, p, 0));
      return compiled === undefined || count === undefined ? undefined : { type: checked, target: file, pattern: compiled, count };
    }
  }
}

function readTest(problems: Problems, value: unknown, at: Path, context: TestContext): ValidationTest | undefined {
  const raw = fields(problems, value, at, ['name', 'description', 'fixtures', 'assertions']);
  if (raw === undefined) return undefined;
  const within = (key: string): Path => [...at, key];
  const assertions = required(problems, raw.assertions, within('assertions'), (v, p) => {
    const items = readList(problems, v, p);
    if (items?.length === 0) problems.add(p, 'must list at least one assertion');
    return items?.flatMap((item, i) => readAssertion(problems, item, [...p, i], context) ?? []);
  });
  return {
    name: required(problems, raw.name, within('name'), (v, p) => readMatching(problems, v, p, rules.nonEmpty)) ?? '',
    description: raw.description === undefined ? undefined : readString(problems, raw.description, within('description')),
    fixtures: readFixtures(problems, raw.fixtures, within('fixtures'), context),
    assertions: assertions ?? [],
  };
}

function readValidationTests(problems: Problems, value: unknown, at: Path, context: TestContext): ValidationTest[] {
  const items = value === undefined ? [] : (readList(problems, value, at) ?? []);
  const firstByName = new Map<string, number>();
  return items.flatMap((item, i) => {
    const test = readTest(problems, item, [...at, i], context);
    if (test === undefined || !problems.clean([...at, i, 'name'])) return [];
    const first = firstByName.get(test.name);
    if (first === undefined) firstByName.set(test.name, i);
    else problems.add([...at, i, 'name'], `duplicate test name ${JSON.stringify(test.name)} (also ${formatPath([...at, first])})`);
    return [test];
  });
}

const rootFields = [
  'podSelector',
  'dataplane',
  'debounce',
  'maxWait',
  'watchedResources',
  'ignoreFields',
  'ingress',
  'templates',
  'templateValues',
  'validationTests',
  'allowDirectives',
] as const;

function readPipeline(problems: Problems, raw: Fields<(typeof rootFields)[number]>, timings: DataplaneTimings): PipelineSettings {
  const debounceMs = withDefault(raw.debounce, ['debounce'], defaultPipelineSettings.debounceMs, (v, p) => readDuration(problems, v, p));
  const maxWaitMs = withDefault(raw.maxWait, ['maxWait'], defaultPipelineSettings.maxWaitMs, (v, p) => readDuration(problems, v, p));
  // maxWait caps how long debouncing may postpone a render; below debounce it could never apply.
  if (maxWaitMs < debounceMs && problems.clean(['debounce'], ['maxWait'])) {
    problems.add(['maxWait'], `must not be shorter than debounce (${debounceMs}ms), got ${maxWaitMs}ms`);
  }
  return { debounceMs, maxWaitMs, ...timings, retry: defaultPipelineSettings.retry };
}

function readConfig(problems: Problems, document: unknown): ControllerConfig {
  const raw = fields(problems, document, [], rootFields) ?? {};
  const { settings, timings } = readDataplane(problems, raw.dataplane, ['dataplane']);
  const watchedResources = readWatchedResources(problems, raw.watchedResources, ['watchedResources']);
  const templates = readTemplates(problems, raw.templates, ['templates']);
  const ingress = (raw.ingress === undefined ? undefined : fields(problems, raw.ingress, ['ingress'], ['className', 'sharedHostNamespaces'])) ?? {};
  const context: TestContext = {
    resources: watchedResources,
    resourceNames: isMapping(raw.watchedResources) ? Object.keys(raw.watchedResources) : [],
    files: renderedFiles(settings, templates),
  };
  return {
    podSelector: raw.podSelector === undefined ? { matchLabels: {} } : readPodSelector(problems, raw.podSelector, ['podSelector']),
    dataplane: settings,
    pipeline: readPipeline(problems, raw, timings),
    watchedResources,
    ignoreFields: withDefault(raw.ignoreFields, ['ignoreFields'], defaultIgnoreFields, (v, p) => readIgnoreFields(problems, v, p)),
    ingress: {
      className: withDefault(ingress.className, ['ingress', 'className'], 'haproxy', (v, p) =>
        readMatching(problems, v, p, rules.dnsSubdomain),
      ),
      sharedHostNamespaces: withDefault(ingress.sharedHostNamespaces, ['ingress', 'sharedHostNamespaces'], [], (v, p) => readSharedHostNamespaces(problems, v, p)),
    },
    templates,
    templateValues: withDefault(raw.templateValues, ['templateValues'], {}, (v, p) => {
      if (isMapping(v)) return v;
      problems.add(p, `must be a mapping, got ${describe(v)}`);
      return undefined;
    }),
    validationTests: readValidationTests(problems, raw.validationTests, ['validationTests'], context),
    allowDirectives: withDefault(raw.allowDirectives, ['allowDirectives'], [], (v, p) => readAllowDirectives(problems, v, p)),
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
