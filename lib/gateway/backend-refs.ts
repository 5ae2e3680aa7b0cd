import type { Fields } from '../object-fields/fields.ts';
import { describeObject, isPortNumber, quote } from '../object-fields/names.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { GATEWAY_GROUP, groupKindText, SERVICE, sameGroupKind, type GroupKind } from './api.ts';
import { absent, type FieldReader } from './field-reader.ts';
import type { ReferenceGrants } from './reference-grants.ts';

/**
 * A reference from an HTTPRoute to a backend (a backendRef, or a
 * RequestMirror's backendRef): checked for its syntax when the route is
 * read, resolved (kind, grant, existence) against the cluster afterwards,
 * since a reference that does not resolve leaves the route served, with
 * 500s where the backend would have answered.
 */
export interface BackendReference extends GroupKind {
  readonly namespace: string;
  readonly name: string;
  /** Required for a Service; undefined only for other kinds, which are refused when resolved. */
  readonly port: number | undefined;
  readonly field: string;
}

/** Reads a BackendObjectReference; undefined, with the problems recorded, when its syntax is wrong. */
export function readBackendReference(reader: FieldReader, entry: Fields, field: string, ownNamespace: string): BackendReference | undefined {
  const groupKind = reader.groupKind(entry, field, SERVICE);
  const namespace = reader.namespace(entry['namespace'], `${field}.namespace`, ownNamespace);
  const name = reader.name(entry['name'], `${field}.name`, 'backend');
  let port: number | undefined;
  if (entry['port'] !== undefined && entry['port'] !== null) {
    if (isPortNumber(entry['port'])) port = entry['port'];
    else reader.problem(`${field}.port`, `${quote(entry['port'])} is not a port number (1-65535)`);
  } else if (groupKind && sameGroupKind(groupKind, SERVICE)) {
    reader.problem(`${field}.port`, 'is required for a Service');
  }
  if (!groupKind || !namespace || !name || (!absent(entry['port']) && port === undefined)) return undefined;
  if (sameGroupKind(groupKind, SERVICE) && port === undefined) return undefined;
  return { ...groupKind, namespace, name, port, field };
}

/** Why a reference does not resolve, as the ResolvedRefs condition names it. */
export interface Unresolved {
  readonly reason: 'InvalidKind' | 'RefNotPermitted' | 'BackendNotFound';
  readonly message: string;
}

export interface BackendLookup {
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  readonly grants: ReferenceGrants;
}

/** The route a reference is resolved for: a ReferenceGrant names the kind and namespace it allows. */
export interface Referrer {
  readonly kind: string;
  readonly namespace: string;
}

/** Undefined when the reference resolves to a Service this route may use. */
export function resolveBackend(reference: BackendReference, route: Referrer, lookup: BackendLookup): Unresolved | undefined {
  const target = describeObject(groupKindText(reference), reference.namespace, reference.name);
  if (!sameGroupKind(reference, SERVICE)) {
    return { reason: 'InvalidKind', message: `${reference.field}: ${target}: only Services (group "", kind Service) can be backends` };
  }
  if (!lookup.grants.permits({ group: GATEWAY_GROUP, kind: route.kind, namespace: route.namespace }, { ...reference, name: reference.name })) {
    return { reason: 'RefNotPermitted', message: `${reference.field}: ${target} is in another namespace, and no ReferenceGrant there allows ${route.kind}s of ${route.namespace} to use it` };
  }
  if (lookup.service(reference.namespace, reference.name) === undefined) {
    return { reason: 'BackendNotFound', message: `${reference.field}: ${target} does not exist` };
  }
  return undefined;
}
