import type { KubeObject } from '../pipeline/model.ts';

/**
 * One shape for every object, whichever way it arrived: the API server
 * leaves `kind` and `apiVersion` off LIST items but puts them on WATCH
 * objects. Templates and content hashes must not see the difference, or a
 * relist would look like a change to every object. An object that has both
 * comes back as is, so normalising costs no memory for the common case
 * (objects from WATCH). Objects are the API server's JSON, parsed: no Date
 * reaches here since the controller reads the API through its own client
 * (client-node's typed objects held Dates).
 */
export function normaliseObject(object: KubeObject, apiVersion: string, kind: string | undefined): KubeObject {
  if (typeof object.apiVersion === 'string' && typeof object.kind === 'string') return object;
  return {
    ...object,
    apiVersion: typeof object.apiVersion === 'string' ? object.apiVersion : apiVersion,
    kind: typeof object.kind === 'string' ? object.kind : kind,
  };
}
