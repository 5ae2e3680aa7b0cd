/**
 * metav1.MicroTime as the server decodes it: RFC 3339 with exactly six
 * fractional digits (Go's layout 2006-01-02T15:04:05.000000Z07:00), or
 * null. Anything else fails decoding with 400 before validation runs, so
 * a client sending `Date.toISOString()` (three digits) for an Event's
 * eventTime or a Lease's renewTime is refused, as a cluster refuses it.
 */
import type { KubeObject, ResourceType } from './resource-types.ts';
import { badRequest } from './status.ts';
import type { StatusError } from './status.ts';

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

function present(object: KubeObject, path: string): { found: boolean; value: unknown } {
  let value: unknown = object;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !(part in value)) return { found: false, value: undefined };
    value = (value as Record<string, unknown>)[part];
  }
  return { found: true, value };
}

/** The 400 a real server answers for the first badly formatted MicroTime field, or undefined. */
export function microTimeProblem(type: ResourceType, object: KubeObject): StatusError | undefined {
  for (const path of type.microTimeFields) {
    const { found, value } = present(object, path);
    if (!found || value === null) continue;
    if (typeof value === 'string' && MICRO_TIME.test(value)) continue;
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    return badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ` +
        `${path}: parsing time ${JSON.stringify(shown)} as "2006-01-02T15:04:05.000000Z07:00": ` +
        'a MicroTime needs exactly six fractional digits',
    );
  }
  return undefined;
}
