/**
 * The resource endpoints: which verb a request is, and the answer to
 * every verb but watch (which the server streams with a WatchSession from
 * the WatchRequest built here).
 *
 * LIST follows the real semantics: items sorted by namespace and name,
 * `{kind: <Kind>List, apiVersion, metadata: {resourceVersion}, items}`
 * where built-in types' items carry no kind or apiVersion (custom
 * resources' do), label and field selectors, `limit` / `continue` pages
 * that stay consistent at the first page's version (410 once that version
 * is compacted), and resourceVersion / resourceVersionMatch (Exact reads
 * the past from the history; a version the server has not reached is 504).
 */
import { load as loadYaml } from 'js-yaml';
import { matchesLabels, parseLabelSelector } from '../../../lib/kube-syntax/label-selector.ts';
import { matchesFields, parseFieldSelector } from './field-selector.ts';
import type { ResourceVerb } from './faults.ts';
import { isJsonObject } from './json-values.ts';
import { metadataOf, stringField } from './object-meta.ts';
import { objectKey } from './object-store.ts';
import { PATCH_MEDIA_TYPES } from './patch.ts';
import type { DeletePreconditions, Registry } from './registry.ts';
import type { ApiPath } from './request-path.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';
import { StatusError, badRequest, expired, methodNotAllowed, resourceNotFound, tooLargeResourceVersion, unsupportedMediaType } from './status.ts';
import type { WatchRequest } from './watch-session.ts';

export type ResourcePath = Extract<ApiPath, { kind: 'resource' }>;

export interface ResourceRequest {
  readonly method: string;
  readonly path: ResourcePath;
  readonly verb: ResourceVerb;
  readonly query: URLSearchParams;
  /** Media type of the body without parameters, lower case. */
  readonly contentType: string;
  readonly body: Buffer;
}

export type ResourceReply = { readonly kind: 'json'; readonly status: number; readonly body: unknown } | { readonly kind: 'watch'; readonly watch: WatchRequest };

const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A boolean query parameter as Go's strconv.ParseBool reads it; 400 for anything else. */
function booleanParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  if (raw === null || raw === '') return false;
  if (TRUE_WORDS.has(raw)) return true;
  if (FALSE_WORDS.has(raw)) return false;
  throw badRequest(`${name}: invalid boolean value ${JSON.stringify(raw)}`);
}

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name}: invalid value ${JSON.stringify(raw)}: must be a non-negative integer`);
  return Number(raw);
}

/** The verb of a resource request; 404 for an unknown subresource, 405 for a method the path does not take. */
export function resolveVerb(method: string, path: ResourcePath, query: URLSearchParams): ResourceVerb {
  const { type, name, subresource } = path;
  if (subresource !== undefined && (subresource !== 'status' || !type.statusSubresource)) throw resourceNotFound();
  const acrossNamespaces = type.namespaced && path.namespace === undefined;
  if (name === undefined) {
    if (method === 'GET') return booleanParam(query, 'watch') ? 'watch' : 'list';
    if (method === 'POST' && !acrossNamespaces) return 'create';
    if (method === 'DELETE' && !acrossNamespaces) return 'deletecollection';
    throw methodNotAllowed();
  }
  if (method === 'GET') return 'get';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  if (method === 'DELETE' && subresource === undefined) return 'delete';
  throw methodNotAllowed();
}

/** Namespace, label selector and field selector of a list, watch or deletecollection as one predicate. */
function selection(path: ResourcePath, query: URLSearchParams): { matches: (object: KubeObject) => boolean; selective: boolean } {
  const { type, namespace } = path;
  let labels;
  try {
    labels = parseLabelSelector(query.get('labelSelector') ?? '');
  } catch (error) {
    throw badRequest(`unable to parse requirement: ${(error as Error).message}`);
  }
  let fields;
  try {
    fields = parseFieldSelector(query.get('fieldSelector') ?? '');
  } catch (error) {
    throw badRequest((error as Error).message);
  }
  const supported = new Set(['metadata.name', 'metadata.namespace', ...type.selectableFields]);
  const unsupported = fields.find(({ field }) => !supported.has(field));
  if (unsupported !== undefined) throw badRequest(`field label not supported: ${unsupported.field}`);
  const matches = (object: KubeObject): boolean => {
    const metadata = metadataOf(object);
    if (namespace !== undefined && stringField(metadata, 'namespace') !== namespace) return false;
    const objectLabels = metadata['labels'] as Record<string, string> | undefined;
    return matchesLabels(labels, objectLabels) && matchesFields(fields, object);
  };
  return { matches, selective: labels.requirements.length > 0 || fields.length > 0 };
}

function parseVersion(raw: string): number {
  if (!/^\d+$/.test(raw)) throw badRequest(`invalid resource version: ${JSON.stringify(raw)}`);
  return Number(raw);
}

interface ContinueToken {
  readonly resourceVersion: number;
  readonly after: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ rv: token.resourceVersion, start: token.after })).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (isJsonObject(value) && typeof value['rv'] === 'number' && typeof value['start'] === 'string') {
      return { resourceVersion: value['rv'], after: value['start'] };
    }
  } catch {
    // Answered below with the same error as a well-formed token of the wrong shape.
  }
  throw badRequest(`continue key is not valid: ${JSON.stringify(raw)}`);
}

/** Built-in types' list items have no type fields on the wire; custom resources' have them. */
function listItem(type: ResourceType, object: KubeObject): KubeObject {
  if (type.custom) return object;
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest;
}

/** Where the objects (sorted by key, as the store lists them) after `after` start: a page of a large LIST reads its own objects, not every one before them. */
function firstAfter(objects: readonly KubeObject[], after: string): number {
  let low = 0;
  let high = objects.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (objectKey(objects[middle]!) > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

function list(registry: Registry, request: ResourceRequest): ResourceReply {
  const { type } = request.path;
  const { query } = request;
  const { matches, selective } = selection(request.path, query);
  const store = registry.store;
  const token = query.get('continue');
  const requested = query.get('resourceVersion') ?? '';
  let resourceVersion = store.resourceVersion;
  let objects: KubeObject[];
  let after = '';
  if (token !== null && token !== '') {
    if (requested !== '') throw badRequest('specifying resource version is not allowed when using continue');
    ({ resourceVersion, after } = decodeContinue(token));
    const past = store.snapshot(type, resourceVersion);
    if (past === undefined) {
      throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    }
    objects = past;
  } else if (requested !== '' && requested !== '0' && query.get('resourceVersionMatch') === 'Exact') {
    resourceVersion = parseVersion(requested);
    if (resourceVersion > store.resourceVersion) throw tooLargeResourceVersion(resourceVersion, store.resourceVersion);
    const past = store.snapshot(type, resourceVersion);
    if (past === undefined) throw expired(`too old resource version: ${resourceVersion} (${store.oldestVersion(type)})`);
    objects = past;
  } else {
    if (requested !== '' && requested !== '0' && parseVersion(requested) > store.resourceVersion) {
      throw tooLargeResourceVersion(parseVersion(requested), store.resourceVersion);
    }
    objects = store.list(type);
  }
  const selected = objects.slice(firstAfter(objects, after)).filter(matches);
  const limit = integerParam(query, 'limit') ?? 0;
  const page = limit > 0 ? selected.slice(0, limit) : selected;
  const remaining = selected.length - page.length;
  const metadata: Record<string, unknown> = { resourceVersion: String(resourceVersion) };
  if (remaining > 0) {
    metadata['continue'] = encodeContinue({ resourceVersion, after: objectKey(page.at(-1)!) });
    if (!selective) metadata['remainingItemCount'] = remaining;
  }
  return {
    kind: 'json',
    status: 200,
    body: { kind: type.listKind, apiVersion: type.apiVersion, metadata, items: page.map((object) => listItem(type, structuredClone(object))) },
  };
}

function watchRequest(request: ResourceRequest): WatchRequest {
  const { query } = request;
  const { matches } = selection(request.path, query);
  const resourceVersion = query.get('resourceVersion') ?? '';
  if (resourceVersion !== '' && resourceVersion !== '0') parseVersion(resourceVersion);
  const sendInitialEvents = booleanParam(query, 'sendInitialEvents');
  if (query.has('sendInitialEvents') && query.get('resourceVersionMatch') !== 'NotOlderThan') {
    throw new StatusError(422, 'Invalid', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  }
  const timeoutSeconds = integerParam(query, 'timeoutSeconds');
  return {
    type: request.path.type,
    namespace: request.path.namespace,
    matches,
    resourceVersion,
    allowBookmarks: booleanParam(query, 'allowWatchBookmarks'),
    sendInitialEvents,
    timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
  };
}

/** The request body as an object: JSON, or YAML as kubectl may send; 415 for other media types. */
function decodeBody(request: ResourceRequest): unknown {
  const text = request.body.toString('utf8');
  const { contentType } = request;
  try {
    if (contentType === 'application/json' || contentType in PATCH_MEDIA_TYPES) return JSON.parse(text);
    if (contentType === 'application/yaml') return loadYaml(text);
  } catch (error) {
    throw badRequest(`the body of the request could not be decoded as ${contentType}: ${(error as Error).message}`);
  }
  throw unsupportedMediaType(`the body of the request was in an unknown format (${contentType || 'no Content-Type'}) - accepted media types include: application/json, application/yaml`);
}

function objectBody(request: ResourceRequest): KubeObject {
  const body = decodeBody(request);
  if (!isJsonObject(body)) throw badRequest(`the body of a ${request.path.type.kind} must be a JSON object`);
  return body as KubeObject;
}

function dryRun(request: ResourceRequest, options?: Record<string, unknown>): boolean {
  const values = [...request.query.getAll('dryRun'), ...(Array.isArray(options?.['dryRun']) ? (options['dryRun'] as unknown[]) : [])];
  const unknown = values.find((value) => value !== 'All');
  if (unknown !== undefined) throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(unknown)}: supported values: "All"`);
  return values.length > 0;
}

/** DeleteOptions from the body (kubectl and client-node send one), when there is one. */
function deleteOptions(request: ResourceRequest): Record<string, unknown> {
  if (request.body.length === 0) return {};
  const body = decodeBody(request);
  if (!isJsonObject(body)) throw badRequest('the body of a DELETE must be DeleteOptions');
  return body;
}

function preconditions(options: Record<string, unknown>): DeletePreconditions {
  const given = options['preconditions'];
  if (!isJsonObject(given)) return {};
  return {
    ...(typeof given['resourceVersion'] === 'string' ? { resourceVersion: given['resourceVersion'] } : {}),
    ...(typeof given['uid'] === 'string' ? { uid: given['uid'] } : {}),
  };
}

function deletedReply(type: ResourceType, deleted: KubeObject): ResourceReply {
  if (type.returnDeletedObject) return { kind: 'json', status: 200, body: deleted };
  const metadata = metadataOf(deleted);
  const details = { name: metadata['name'], ...(type.group === '' ? {} : { group: type.group }), kind: type.plural, uid: metadata['uid'] };
  return { kind: 'json', status: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } };
}

/** Answers one resource request (for `watch`, the WatchRequest to stream). Throws StatusError for every failure. */
export function handleResource(registry: Registry, request: ResourceRequest): ResourceReply {
  const { type, name, subresource } = request.path;
  const namespace = request.path.namespace ?? '';
  const status = subresource === 'status';
  switch (request.verb) {
    case 'list':
      return list(registry, request);
    case 'watch':
      return { kind: 'watch', watch: watchRequest(request) };
    case 'get':
      return { kind: 'json', status: 200, body: registry.get(type, namespace, name!) };
    case 'create': {
      const object = registry.create(type, request.path.namespace, objectBody(request), { dryRun: dryRun(request), admission: true });
      return { kind: 'json', status: 201, body: object };
    }
    case 'update': {
      const result = registry.update(type, request.path.namespace, name!, objectBody(request), { dryRun: dryRun(request), admission: true, status });
      return { kind: 'json', status: result.created ? 201 : 200, body: result.object };
    }
    case 'patch': {
      const patchType = PATCH_MEDIA_TYPES[request.contentType];
      if (patchType === undefined) {
        const why = request.contentType === 'application/apply-patch+yaml' ? 'server-side apply is not implemented by the fake API server; ' : '';
        throw unsupportedMediaType(
          `${why}the body of the request was in an unknown format (${request.contentType || 'no Content-Type'}) - accepted media types include: ${Object.keys(PATCH_MEDIA_TYPES).join(', ')}`,
        );
      }
      const object = registry.patch(type, namespace, name!, patchType, decodeBody(request), { dryRun: dryRun(request), status });
      return { kind: 'json', status: 200, body: object };
    }
    case 'delete': {
      const options = deleteOptions(request);
      return deletedReply(type, registry.delete(type, namespace, name!, preconditions(options), { dryRun: dryRun(request, options) }));
    }
    case 'deletecollection': {
      const options = deleteOptions(request);
      const { matches } = selection(request.path, request.query);
      const doomed = registry.store.list(type, request.path.namespace).filter(matches);
      const deleted = doomed.map((object) => {
        const metadata = metadataOf(object);
        return registry.delete(type, stringField(metadata, 'namespace'), stringField(metadata, 'name'), {}, { dryRun: dryRun(request, options) });
      });
      return { kind: 'json', status: 200, body: { kind: type.listKind, apiVersion: type.apiVersion, metadata: {}, items: deleted.map((object) => listItem(type, object)) } };
    }
  }
}
