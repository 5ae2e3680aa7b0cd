import type { KubeObject } from '../pipeline/model.ts';

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  }
  return value;
}

/**
 * One shape for every object, whichever way it arrived: the API server
 * leaves `kind` and `apiVersion` off LIST items but puts them on WATCH
 * objects, and client code may hand over Dates where the wire has RFC 3339
 * strings. Templates and content hashes must not see the difference, or a
 * relist would look like a change to every object.
 */
export function normaliseObject(object: KubeObject, apiVersion: string, kind: string | undefined): KubeObject {
  const shaped = plain(object) as KubeObject;
  return {
    ...shaped,
    apiVersion: typeof shaped.apiVersion === 'string' ? shaped.apiVersion : apiVersion,
    kind: typeof shaped.kind === 'string' ? shaped.kind : kind,
  };
}
