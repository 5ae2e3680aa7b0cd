import type { KubeObject, Problem } from '../pipeline/model.ts';
import { describeObject } from '../object-fields/names.ts';
import { isFields } from '../object-fields/fields.ts';
import { KINDS, sameGroupKind, type GroupKind } from './api.ts';
import { FieldReader } from './field-reader.ts';

/**
 * ReferenceGrants: a namespace's owner trusting kinds in other namespaces
 * to reference some of its objects (apis/v1/referencegrant_types.go).
 * Every cross-namespace reference but a route's to its Gateway needs one;
 * without a grant the reference is refused, and removing the grant revokes it.
 * `from` and `to` entries each combine with OR.
 */

interface Grant {
  readonly namespace: string;
  readonly from: readonly (GroupKind & { readonly namespace: string })[];
  readonly to: readonly (GroupKind & { readonly name: string | undefined })[];
}

/** Who references: an object of a kind in a namespace. */
export interface ReferenceFrom extends GroupKind {
  readonly namespace: string;
}

/** What is referenced: an object of a kind, by namespace and name. */
export interface ReferenceTo extends GroupKind {
  readonly namespace: string;
  readonly name: string;
}

export interface ReferenceGrants {
  /** Whether the reference may be made: same namespace, or a grant in the target's namespace allows it. */
  permits(from: ReferenceFrom, to: ReferenceTo): boolean;
  /** Grants left out, with why. */
  readonly problems: readonly Problem[];
}

/** Reads every grant; a grant with a fault is left out whole (it grants nothing), named. */
export function readReferenceGrants(objects: readonly KubeObject[]): ReferenceGrants {
  const grants = new Map<string, Grant[]>();
  const problems: Problem[] = [];
  for (const object of objects) {
    const grant = readGrant(object, problems);
    if (grant === undefined) continue;
    const list = grants.get(grant.namespace) ?? [];
    list.push(grant);
    grants.set(grant.namespace, list);
  }
  return {
    problems,
    permits(from, to) {
      if (from.namespace === to.namespace) return true;
      return (grants.get(to.namespace) ?? []).some(
        (grant) =>
          grant.from.some((entry) => entry.namespace === from.namespace && sameGroupKind(entry, from)) &&
          grant.to.some((entry) => sameGroupKind(entry, to) && (entry.name === undefined || entry.name === to.name)),
      );
    },
  };
}

function readGrant(object: KubeObject, problems: Problem[]): Grant | undefined {
  const namespace = object.metadata.namespace;
  const reader = new FieldReader(describeObject(KINDS.referenceGrant, namespace, object.metadata.name));
  const spec = isFields(object['spec']) ? object['spec'] : undefined;
  if (spec === undefined) reader.problem('spec', 'is missing');
  const from: Grant['from'][number][] = [];
  reader.list(spec?.['from'], 'spec.from').forEach((entry, index) => {
    const field = `spec.from[${index}]`;
    if (!isFields(entry)) return reader.problem(field, 'is not an object');
    const groupKind = reader.groupKind(entry, field, { group: '', kind: '' });
    const trusted = reader.namespace(entry['namespace'], `${field}.namespace`, '');
    if (trusted === '') reader.problem(`${field}.namespace`, 'is missing');
    if (groupKind && trusted) from.push({ ...groupKind, namespace: trusted });
  });
  const to: Grant['to'][number][] = [];
  reader.list(spec?.['to'], 'spec.to').forEach((entry, index) => {
    const field = `spec.to[${index}]`;
    if (!isFields(entry)) return reader.problem(field, 'is not an object');
    const groupKind = reader.groupKind(entry, field, { group: '', kind: '' });
    const name = entry['name'] === undefined || entry['name'] === null ? undefined : reader.name(entry['name'], `${field}.name`, 'object');
    if (groupKind && (name !== undefined || entry['name'] === undefined || entry['name'] === null)) to.push({ ...groupKind, name });
  });
  problems.push(...reader.problems);
  if (reader.problems.length > 0 || typeof namespace !== 'string') return undefined;
  return { namespace, from, to };
}
