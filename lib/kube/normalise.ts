import type { KubeObject } from '../pipeline/model.ts';

/**
 * Dates turned into the wire's RFC 3339 strings, copying only the objects
 * and arrays on the way to a Date: an object without one comes back as is,
 * so normalising costs no memory for the common case (objects from WATCH).
 */
function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const inner = plain(item);
      if (inner !== item) (copy ??= [...value])[i] = inner;
    });
    return copy ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let copy: Record<string, unknown> | undefined;
    for (const [key, inner] of Object.entries(value)) {
      const shaped = plain(inner);
      if (shaped !== inner) (copy ??= { ...(value as Record<string, unknown>) })[key] = shaped;
    }
    return copy ?? value;
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
  if (typeof shaped.apiVersion === 'string' && typeof shaped.kind === 'string') return shaped;
  return {
    ...shaped,
    apiVersion: typeof shaped.apiVersion === 'string' ? shaped.apiVersion : apiVersion,
    kind: typeof shaped.kind === 'string' ? shaped.kind : kind,
  };
}
