import type { KubeObject } from '../pipeline/model.ts';
import type { Standing } from './precedence.ts';

/** Where an object stands when objects conflict: the order is compareStanding's (lib/routing/precedence.ts). */
export function placeOf(ingress: KubeObject): Standing {
  return { age: ageOf(ingress), namespace: String(ingress.metadata.namespace ?? ''), name: String(ingress.metadata.name) };
}

function ageOf(ingress: KubeObject): number {
  // Raw API JSON holds an RFC 3339 string; a manifest file's unquoted timestamp reads (js-yaml) as a Date.
  const stamp = ingress.metadata['creationTimestamp'];
  const parsed = stamp instanceof Date ? stamp.getTime() : typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
  return Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
}
