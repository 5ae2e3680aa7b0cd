/**
 * Write semantics of the API server over the object store (what the
 * generic registry store and each type's strategy do): create, update,
 * status update, patch and delete with their preconditions, system
 * metadata, status subresource rules, validation and no-op detection.
 * The HTTP handlers and the in-process test API both go through here, so
 * they cannot disagree.
 */
import { PatchError, applyPatch } from './patch.ts';
import type { PatchType } from './patch.ts';
import { clone, isJsonObject, jsonEqual } from './json-values.ts';
import { generateName, metadataForCreate, metadataForUpdate, metadataOf, stringField, validateMetadata } from './object-meta.ts';
import type { Metadata } from './object-meta.ts';
import { microTimeProblem } from './micro-time.ts';
import type { ObjectStore } from './object-store.ts';
import type { KubeObject, ResourceType, TypeRegistry } from './resource-types.ts';
import { STALE_OBJECT, StatusError, alreadyExists, badRequest, conflict, invalid, namespaceNotFound, notFound, serverError } from './status.ts';

export interface WriteOptions {
  /** Check what a write would do without storing it (`dryRun=All`). */
  readonly dryRun?: boolean;
  /** Refuse namespaced objects in a namespace that does not exist, as the NamespaceLifecycle admission plugin does. */
  readonly admission?: boolean;
}

export interface UpdateOptions extends WriteOptions {
  /** Write through /status: only status changes. */
  readonly status?: boolean;
}

export interface DeletePreconditions {
  readonly resourceVersion?: string;
  readonly uid?: string;
}

export interface UpdateResult {
  readonly object: KubeObject;
  /** PUT created the object (types that allow create on update). */
  readonly created: boolean;
}

const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces' } as const;

/** The object without what a write never compares for generation: metadata, status, type fields. */
function specPart(object: KubeObject): KubeObject {
  const { metadata: _metadata, status: _status, apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest;
}

export class Registry {
  readonly types: TypeRegistry;
  readonly store: ObjectStore;

  constructor(types: TypeRegistry, store: ObjectStore) {
    this.types = types;
    this.store = store;
  }

  get(type: ResourceType, namespace: string, name: string): KubeObject {
    const object = this.store.get(type, namespace, name);
    if (object === undefined) throw notFound(type, name);
    return clone(object);
  }

  #checkTypeFields(type: ResourceType, body: KubeObject): void {
    const { apiVersion, kind } = body;
    if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== type.apiVersion) {
      throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${type.apiVersion})`);
    }
    if (kind !== undefined && kind !== '' && kind !== type.kind) {
      throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${type.kind})`);
    }
  }

  /** The namespace a namespaced write goes to: the request's, which the body may repeat but not contradict. */
  #namespaceFor(type: ResourceType, body: KubeObject, requested: string | undefined): string | undefined {
    if (!type.namespaced) return undefined;
    const inBody = stringField(metadataOf(body), 'namespace');
    const namespace = requested ?? inBody;
    if (namespace === '') throw badRequest(`a ${type.kind} is namespaced: metadata.namespace is required`);
    if (inBody !== '' && inBody !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return namespace;
  }

  #checkNamespaceExists(namespace: string | undefined): void {
    if (namespace === undefined) return;
    const namespaces = this.types.byPath(NAMESPACES.group, NAMESPACES.version, NAMESPACES.plural)!;
    if (this.store.get(namespaces, '', namespace) === undefined) throw namespaceNotFound(namespace);
  }

  #validate(type: ResourceType, object: KubeObject, old: KubeObject | undefined): void {
    const decoding = microTimeProblem(type, object);
    if (decoding !== undefined) throw decoding;
    const errors = [...validateMetadata(type, object), ...(type.validate?.(object, old) ?? [])];
    if (errors.length > 0) throw invalid(type, stringField(metadataOf(object), 'name'), errors);
  }

  /** POST to a collection. `namespace` is the request's (undefined in-process: the body's). */
  create(type: ResourceType, namespace: string | undefined, body: KubeObject, options: WriteOptions = {}): KubeObject {
    if (!isJsonObject(body)) throw badRequest(`the body of a ${type.kind} must be a JSON object`);
    this.#checkTypeFields(type, body);
    const target = this.#namespaceFor(type, body, namespace);
    const metadata = metadataOf(body);
    if (stringField(metadata, 'resourceVersion') !== '') {
      throw serverError(500, 'resourceVersion should not be set on objects to be created');
    }
    const requestedName = stringField(metadata, 'name');
    const prefix = stringField(metadata, 'generateName');
    const name = requestedName === '' && prefix !== '' ? generateName(prefix) : requestedName;
    const object: KubeObject = {
      ...clone(body),
      apiVersion: type.apiVersion,
      kind: type.kind,
      metadata: metadataForCreate(type, { ...metadata, ...(name === '' ? {} : { name }) }, target),
    };
    if (type.statusSubresource) delete object['status'];
    type.applyDefaults?.(object, undefined);
    this.#validate(type, object, undefined);
    if (options.admission === true) this.#checkNamespaceExists(target);
    if (this.store.get(type, target ?? '', name) !== undefined) throw alreadyExists(type, name);
    return options.dryRun === true ? object : this.store.put(type, object);
  }

  /** PUT to an object or its /status. `namespace` is the request's (undefined in-process: the body's). */
  update(type: ResourceType, namespace: string | undefined, name: string | undefined, body: KubeObject, options: UpdateOptions = {}): UpdateResult {
    if (!isJsonObject(body)) throw badRequest(`the body of a ${type.kind} must be a JSON object`);
    this.#checkTypeFields(type, body);
    const target = this.#namespaceFor(type, body, namespace);
    const metadata = metadataOf(body);
    const bodyName = stringField(metadata, 'name');
    const url = name ?? bodyName;
    if (bodyName !== url) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${url})`);
    const stored = this.store.get(type, target ?? '', url);
    if (stored === undefined) {
      if (!type.allowCreateOnUpdate || options.status === true) throw notFound(type, url);
      const { resourceVersion: _ignored, ...fresh } = metadata;
      return { object: this.create(type, target, { ...body, metadata: fresh }, options), created: true };
    }
    const storedMetadata = metadataOf(stored);
    const precondition = stringField(metadata, 'resourceVersion');
    if (precondition !== '' && precondition !== storedMetadata['resourceVersion']) throw conflict(type, url, STALE_OBJECT);
    const uid = stringField(metadata, 'uid');
    if (uid !== '' && uid !== storedMetadata['uid']) {
      throw conflict(type, url, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(storedMetadata['uid'])}`);
    }
    const object = this.#updated(type, stored, body, options.status === true);
    this.#validate(type, object, stored);
    if (jsonEqual(object, stored)) return { object: clone(stored), created: false };
    return { object: options.dryRun === true ? object : this.store.put(type, object), created: false };
  }

  /** The object a write stores: status-only for /status, the stored status for the main resource. */
  #updated(type: ResourceType, stored: KubeObject, body: KubeObject, statusWrite: boolean): KubeObject {
    const storedMetadata = metadataOf(stored);
    let next: KubeObject;
    let metadata: Metadata;
    if (statusWrite) {
      next = { ...clone(stored) };
      if (body['status'] === undefined) delete next['status'];
      else next['status'] = clone(body['status']);
      metadata = storedMetadata;
    } else {
      next = { ...clone(body), apiVersion: type.apiVersion, kind: type.kind };
      if (type.statusSubresource) {
        if (stored['status'] === undefined) delete next['status'];
        else next['status'] = clone(stored['status']);
      }
      metadata = metadataOf(body);
    }
    next.metadata = clone(metadata);
    type.applyDefaults?.(next, stored);
    const specChanged = !jsonEqual(specPart(next), specPart(stored));
    next.metadata = { ...metadataForUpdate(type, metadataOf(next), storedMetadata, specChanged), resourceVersion: storedMetadata['resourceVersion'] };
    return next;
  }

  /** PATCH of an object or its /status: the patch applied to the stored object, then written as an update. */
  patch(type: ResourceType, namespace: string, name: string, patchType: PatchType, patch: unknown, options: UpdateOptions = {}): KubeObject {
    const stored = this.store.get(type, namespace, name);
    if (stored === undefined) throw notFound(type, name);
    let patched: KubeObject;
    try {
      patched = applyPatch(clone(stored), patchType, patch);
    } catch (error) {
      if (!(error instanceof PatchError)) throw error;
      throw error.malformed ? badRequest(error.message) : new StatusError(422, 'Invalid', error.message);
    }
    return this.update(type, namespace, name, patched, options).object;
  }

  /** DELETE of one object; a Namespace takes everything in it along. Returns the deleted object. */
  delete(type: ResourceType, namespace: string, name: string, preconditions: DeletePreconditions = {}, options: WriteOptions = {}): KubeObject {
    const stored = this.store.get(type, namespace, name);
    if (stored === undefined) throw notFound(type, name);
    const metadata = metadataOf(stored);
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== metadata['resourceVersion']) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${String(metadata['resourceVersion'])}`,
      );
    }
    if (preconditions.uid !== undefined && preconditions.uid !== metadata['uid']) {
      throw conflict(type, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(metadata['uid'])}`);
    }
    if (options.dryRun === true) return clone(stored);
    if (type.key === `${NAMESPACES.group}/${NAMESPACES.version}/${NAMESPACES.plural}`) {
      for (const contained of this.types.all().filter((candidate) => candidate.namespaced)) {
        for (const object of this.store.list(contained, name)) {
          this.store.remove(contained, name, stringField(metadataOf(object), 'name'));
        }
      }
    }
    return this.store.remove(type, namespace, name)!;
  }
}
