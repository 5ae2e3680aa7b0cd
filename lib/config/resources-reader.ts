import { errorMessage } from '../error-message.ts';
import { parseLabelSelector } from '../kube-syntax/label-selector.ts';
import { pluralOf } from '../kube-syntax/plural.ts';
import { compilePath } from './json-path.ts';
import { isMapping, type Path, type Problems } from './problems.ts';
import { controllerConfigSchema } from './schema.ts';
import { fieldNames, readScalar, readSetting } from './setting-reader.ts';
import { fields, named, readList, readPath, readPaths, readString, required, withDefault } from './readers.ts';
import type { CompiledPath, FieldSelector, Relation, WatchedResource } from './types.ts';

/** `watchedResources` and `ignoreFields`: what the controller watches and what it drops from each object. */

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
  const raw = fields(problems, value, at, fieldNames(resourceSetting.relations.item));
  if (raw === undefined) return undefined;
  const resource = required(problems, raw.resource, [...at, 'resource'], (v, p) => readScalar(problems, resourceSetting.relations.item.fields.resource, v, p));
  const keys = required(problems, raw.keys, [...at, 'keys'], (v, p) => readPaths(problems, v, p));
  return resource === undefined || keys === undefined ? undefined : { name, resource, keys };
}

const resourceSchema = controllerConfigSchema.fields.watchedResources.item;
const { fields: resourceSetting } = resourceSchema;

const defaultIndexBy = resourceSetting.indexBy.default.map((source) => compilePath(source));

function readResource(problems: Problems, name: string, value: unknown, at: Path): WatchedResource | undefined {
  const raw = fields(problems, value, at, fieldNames(resourceSchema));
  if (raw === undefined) return undefined;
  const within = (key: string): Path => [...at, key];
  const apiVersion = required(problems, raw.apiVersion, within('apiVersion'), (v, p) => readScalar(problems, resourceSetting.apiVersion, v, p));
  const kind = raw.kind === undefined ? undefined : readScalar(problems, resourceSetting.kind, raw.kind, within('kind'));
  const resource = raw.resource === undefined ? undefined : readScalar(problems, resourceSetting.resource, raw.resource, within('resource'));
  if (raw.kind === undefined && raw.resource === undefined) problems.add(at, 'needs kind or resource');
  const labelSelector = raw.labelSelector === undefined ? undefined : readScalar(problems, resourceSetting.labelSelector, raw.labelSelector, within('labelSelector'));
  if (labelSelector !== undefined) {
    try {
      parseLabelSelector(labelSelector);
    } catch (error) {
      problems.add(within('labelSelector'), errorMessage(error));
    }
  }
  const relations = raw.relations === undefined ? [] : named(problems, raw.relations, within('relations'), resourceSetting.relations.name);
  const optional = readSetting(problems, resourceSetting.optional, raw.optional, within('optional'));
  const fallbackApiVersions = raw.fallbackApiVersions === undefined ? [] : readFallbackApiVersions(problems, raw.fallbackApiVersions, within('fallbackApiVersions'), apiVersion, optional);
  return {
    name,
    apiVersion: apiVersion ?? '',
    kind,
    resource: resource ?? (kind === undefined ? '' : pluralOf(kind)),
    namespace: raw.namespace === undefined ? undefined : readScalar(problems, resourceSetting.namespace, raw.namespace, within('namespace')),
    labelSelector,
    fieldSelector: raw.fieldSelector === undefined ? [] : readFieldSelector(problems, raw.fieldSelector, within('fieldSelector')),
    indexBy: withDefault(raw.indexBy, within('indexBy'), defaultIndexBy, (v, p) => readPaths(problems, v, p)),
    relations: relations.flatMap(([relation, item]) => readRelation(problems, relation, item, [...at, 'relations', relation]) ?? []),
    validationWebhook: readSetting(problems, resourceSetting.validationWebhook, raw.validationWebhook, within('validationWebhook')),
    ...(optional ? { optional: true } : {}),
    ...(fallbackApiVersions.length > 0 ? { fallbackApiVersions } : {}),
  };
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** Versions of the resource's own group, other than its apiVersion; only an optional resource is asked of discovery, so only it may have them. */
function readFallbackApiVersions(problems: Problems, value: unknown, at: Path, apiVersion: string | undefined, optional: boolean): string[] {
  if (!optional) problems.add(at, 'needs optional: true (discovery picks the version a cluster serves)');
  return (readList(problems, value, at) ?? []).flatMap((item, index) => {
    const version = readScalar(problems, resourceSetting.fallbackApiVersions.item, item, [...at, index]);
    if (version === undefined || apiVersion === undefined) return [];
    if (groupOf(version) !== groupOf(apiVersion) || version === apiVersion) {
      problems.add([...at, index], `${JSON.stringify(version)} is not another version of ${JSON.stringify(groupOf(apiVersion))}`);
      return [];
    }
    return [version];
  });
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

export function readWatchedResources(problems: Problems, value: unknown, at: Path): WatchedResource[] {
  if (value === undefined) {
    problems.add(at, 'required');
    return [];
  }
  const entries = named(problems, value, at, controllerConfigSchema.fields.watchedResources.name);
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

export function readIgnoreFields(problems: Problems, value: unknown, at: Path): CompiledPath[] | undefined {
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

export const defaultIgnoreFields = controllerConfigSchema.fields.ignoreFields.default.map((source) => compilePath(source));
