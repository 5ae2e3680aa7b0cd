import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { RouteEntrypoint } from '../routing/route.ts';
import type { ServedGateway } from './attachment.ts';
import { readGateway } from './gateway.ts';
import { readGatewayClasses, type GatewayClassRead } from './gateway-class.ts';
import { resolveListeners, type Frontend } from './listeners.ts';
import { readReferenceGrants } from './reference-grants.ts';

/**
 * The Gateway side of the Gateway API model (gateway-api.ts): this
 * controller's GatewayClasses, the ReferenceGrants, and the Gateways of
 * those classes with each listener judged. Every route kind is judged
 * against what this reads.
 */

/** What the Gateways are read from. */
export interface GatewaySources {
  /** spec.controllerName of the GatewayClasses this controller takes. */
  readonly controllerName: string;
  readonly gatewayClasses: readonly KubeObject[];
  readonly gateways: readonly KubeObject[];
  readonly referenceGrants: readonly KubeObject[];
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  /** ConfigMaps holding CA certificates (caCertificateRefs); none when not watched. */
  readonly configMap?: (namespace: string, name: string) => KubeObject | undefined;
  /** The frontends the template declares; undefined admits every listener port. */
  readonly frontends?: readonly Frontend[];
}

/** namespace/name: how the model keys Gateways, and routes of the first kind (gateway-api.ts routeKey). */
export const keyOf = (object: { readonly metadata: { readonly namespace?: string; readonly name: string } }) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** The GatewayClasses, grants and Gateways, judged: everything a route is judged against. */
export interface GatewaysRead {
  readonly classes: ReadonlyMap<string, GatewayClassRead>;
  readonly grants: ReturnType<typeof readReferenceGrants>;
  readonly excluded: readonly Problem[];
  readonly served: ReadonlyMap<string, ServedGateway>;
  /** The protocols of every listener served: a route on listeners of one of them alone is kept from the other's requests. */
  readonly protocols: ReadonlySet<RouteEntrypoint['protocol']>;
  readonly gateways: readonly { readonly object: KubeObject; readonly served: ServedGateway | undefined; readonly problems: readonly Problem[]; readonly listeners: readonly string[] }[];
}

/** The GatewayClasses and grants read, and the Gateways of this controller's classes with their listeners judged against the frontends. */
export function readGateways(sources: GatewaySources): GatewaysRead {
  const classes = readGatewayClasses(sources.gatewayClasses, sources.controllerName);
  const grants = readReferenceGrants(sources.referenceGrants);
  const excluded: Problem[] = [...grants.problems];
  const served = new Map<string, ServedGateway>();
  const protocols = new Set<RouteEntrypoint['protocol']>();
  const gateways: GatewaysRead['gateways'][number][] = [];
  for (const object of sources.gateways) {
    const className = (object['spec'] as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
    const gatewayClass = typeof className === 'string' ? classes.get(className) : undefined;
    if (gatewayClass === undefined) continue;
    const read = readGateway(object);
    const refusal = gatewayClass.refusal && {
      object: read.label,
      field: 'spec.gatewayClassName',
      message: `GatewayClass ${gatewayClass.name} is not accepted: ${gatewayClass.refusal.message}`,
    };
    const problems = refusal ? [...read.problems, refusal] : read.problems;
    excluded.push(...problems);
    let servedGateway: ServedGateway | undefined;
    if (read.gateway && gatewayClass.refusal === undefined) {
      servedGateway = {
        gateway: read.gateway,
        listeners: resolveListeners(read.gateway, { secret: sources.secret, ...(sources.configMap ? { configMap: sources.configMap } : {}), grants, frontends: sources.frontends }),
      };
      served.set(keyOf(object), servedGateway);
      for (const state of servedGateway.listeners) {
        const { protocol } = state.listener;
        if (state.serving && (protocol === 'HTTP' || protocol === 'HTTPS')) protocols.add(protocol);
        for (const fault of state.faults) excluded.push({ object: read.label, field: `spec.listeners[${state.listener.index}]`, message: `${fault.reason}: ${fault.message}` });
      }
    }
    gateways.push({ object, served: servedGateway, problems, listeners: (read.gateway?.listeners ?? []).map((listener) => listener.name) });
  }
  return { classes, grants, excluded, served, protocols, gateways };
}
