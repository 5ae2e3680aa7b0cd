import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../pipeline/model.ts';

/** An object without what a status write changes: the status, and the version and field managers it bumps. */
function withoutStatusWrite(object: KubeObject): unknown {
  const { status: _status, metadata, ...rest } = object as KubeObject & { status?: unknown };
  const { resourceVersion: _version, managedFields: _managers, ...identity } = metadata as KubeObject['metadata'] & { managedFields?: unknown };
  return { ...rest, metadata: identity };
}

/**
 * Whether an update changed an object's status and nothing else: a write to
 * the status subresource (the controller's own Ingress or Gateway API status
 * comes back this way) bumps resourceVersion and records a field manager,
 * but leaves the spec, the labels, the annotations and the generation alone.
 */
export function onlyStatusChanged(stored: KubeObject, incoming: KubeObject): boolean {
  return isDeepStrictEqual(withoutStatusWrite(stored), withoutStatusWrite(incoming));
}
