import type { KubeObject } from '../pipeline/model.ts';

/** The annotation that named an Ingress's class before spec.ingressClassName. */
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/**
 * An Ingress's class: spec.ingressClassName, or the older annotation when
 * the field is absent (the field wins, as in ingress-nginx and haproxytech).
 * Undefined for an Ingress without a class, which this controller never
 * takes (it has no default IngressClass of its own).
 */
export function ingressClassOf(ingress: KubeObject): unknown {
  const spec = ingress['spec'];
  const field = spec !== null && typeof spec === 'object' ? (spec as Record<string, unknown>)['ingressClassName'] : undefined;
  return field ?? ingress.metadata.annotations?.[CLASS_ANNOTATION];
}
