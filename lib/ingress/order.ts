import { compareCodeUnits } from '../compare.ts';
import type { KubeObject } from '../pipeline/model.ts';

/**
 * The orders that make the view model deterministic: the same objects give
 * the same output whatever order they arrive in.
 */

/** Where an Ingress stands when Ingresses conflict. */
export interface IngressPlace {
  /** creationTimestamp in milliseconds; +Infinity when missing or unparsable. */
  readonly age: number;
  readonly namespace: string;
  readonly name: string;
}

export function placeOf(ingress: KubeObject): IngressPlace {
  return { age: ageOf(ingress), namespace: String(ingress.metadata.namespace ?? ''), name: String(ingress.metadata.name) };
}

function ageOf(ingress: KubeObject): number {
  // Raw API JSON holds an RFC 3339 string; @kubernetes/client-node objects hold a Date.
  const stamp = ingress.metadata['creationTimestamp'];
  const parsed = stamp instanceof Date ? stamp.getTime() : typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
  return Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
}

/**
 * Oldest first: the age order that settles conflicts. A missing or
 * unparsable creationTimestamp counts as newest; namespace/name breaks ties,
 * so the order never depends on the order of the input.
 */
export function olderFirst(a: IngressPlace, b: IngressPlace): number {
  const byTime = a.age - b.age;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime < 0 ? -1 : 1;
  return compareCodeUnits(a.namespace, b.namespace) || compareCodeUnits(a.name, b.name);
}
