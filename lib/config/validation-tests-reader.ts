import { errorMessage } from '../error-message.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { describe, formatPath, isMapping, type Mapping, type Path, type Problems } from './problems.ts';
import { fields, named, readList, readMapping, readString, required, withDefault } from './readers.ts';
import { rules } from './rules.ts';
import { controllerConfigSchema } from './schema.ts';
import { fieldNames, readScalar } from './setting-reader.ts';
import type { Assertion, DataplaneSettings, Templates, ValidationTest, WatchedResource } from './types.ts';

/** `validationTests`: their fixtures as objects of the watched resources, their assertions on files the templates render. */

/**
 * The file names each storage directory can hold, for checking test
 * targets; undefined when only a render can tell: certificates also come
 * from the TLS secrets of ingresses.
 */
type RenderedFiles = ReadonlyMap<string, ReadonlySet<string> | undefined>;

export function renderedFiles(dataplane: DataplaneSettings, templates: Templates): RenderedFiles {
  return new Map([
    [dataplane.mapsDir, new Set(templates.maps.keys())],
    [dataplane.certificatesDir, undefined],
    [dataplane.generalDir, new Set(templates.files.keys())],
  ]);
}

export interface TestContext {
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
  for (const [name, items] of named(problems, value, at, testSetting.fixtures.name)) {
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

const testSchema = controllerConfigSchema.fields.validationTests.item;
const { fields: testSetting } = testSchema;
const assertionSchema = testSetting.assertions.item;
const { fields: assertionSetting } = assertionSchema;

const assertionTypes = Object.keys(assertionSchema.variants) as AssertionType[];

type AssertionType = Assertion['type'];

/** The type decides which fields belong. */
const assertionFields = (type: AssertionType): readonly string[] => ['type', ...assertionSchema.variants[type]];

const mainFile = assertionSetting.target.default;

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
  const raw = fields(problems, assertion, at, assertionFields(checked), `a ${checked} assertion`) ?? {};
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
      const count = required(problems, raw.count, within('count'), (v, p) => readScalar(problems, assertionSetting.count, v, p));
      return compiled === undefined || count === undefined ? undefined : { type: checked, target: file, pattern: compiled, count };
    }
  }
}

function readTest(problems: Problems, value: unknown, at: Path, context: TestContext): ValidationTest | undefined {
  const raw = fields(problems, value, at, fieldNames(testSchema));
  if (raw === undefined) return undefined;
  const within = (key: string): Path => [...at, key];
  const assertions = required(problems, raw.assertions, within('assertions'), (v, p) => {
    const items = readList(problems, v, p);
    if (items?.length === 0) problems.add(p, 'must list at least one assertion');
    return items?.flatMap((item, i) => readAssertion(problems, item, [...p, i], context) ?? []);
  });
  return {
    name: required(problems, raw.name, within('name'), (v, p) => readScalar(problems, testSetting.name, v, p)) ?? '',
    description: raw.description === undefined ? undefined : readScalar(problems, testSetting.description, raw.description, within('description')),
    fixtures: readFixtures(problems, raw.fixtures, within('fixtures'), context),
    assertions: assertions ?? [],
  };
}

export function readValidationTests(problems: Problems, value: unknown, at: Path, context: TestContext): ValidationTest[] {
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
