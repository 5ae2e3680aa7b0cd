import { absent } from './field-reader.ts';
import { isFields } from '../object-fields/fields.ts';
import type { KubeObject } from '../pipeline/model.ts';

/**
 * A GatewayClass (apis/v1/gatewayclass_types.go) is this controller's when
 * its spec.controllerName is the configured name; Gateways of other classes
 * are another controller's and are neither served nor written to.
 */
export interface GatewayClassRead {
  readonly object: KubeObject;
  readonly name: string;
  /** Accepted True, or why not (Accepted False with this reason). */
  readonly refusal: { readonly reason: 'InvalidParameters'; readonly message: string } | undefined;
}

export function controllerNameOf(gatewayClass: KubeObject): unknown {
  const spec = gatewayClass['spec'];
  return isFields(spec) ? spec['controllerName'] : undefined;
}

/** The GatewayClasses of this controller, by name; others are left alone. */
export function readGatewayClasses(classes: readonly KubeObject[], controllerName: string): ReadonlyMap<string, GatewayClassRead> {
  const ours = new Map<string, GatewayClassRead>();
  for (const gatewayClass of classes) {
    if (controllerNameOf(gatewayClass) !== controllerName) continue;
    const spec = gatewayClass['spec'] as Readonly<Record<string, unknown>>;
    // This controller takes no parameters: a class asking for some would be served other than its author meant.
    const refusal = absent(spec['parametersRef']) ? undefined : { reason: 'InvalidParameters' as const, message: 'spec.parametersRef: this controller takes no parameters; remove it' };
    ours.set(gatewayClass.metadata.name, { object: gatewayClass, name: gatewayClass.metadata.name, refusal });
  }
  return ours;
}
