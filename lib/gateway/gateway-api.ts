import type { KubeObject, Problem } from '../pipeline/model.ts';
import { inPrecedenceOrder } from '../routing/precedence.ts';
import type { RouteRecord } from '../routing/route.ts';
import { attach, gatewayOf, type Acceptance, type AttachedListener, type ServedGateway } from './attachment.ts';
import type { Unresolved } from './backend-refs.ts';
import { readGateway } from './gateway.ts';
import { readGatewayClasses, type GatewayClassRead } from './gateway-class.ts';
import { readHttpRoute, type ParentRef } from './http-route.ts';
import { resolveListeners, type Frontend, type ListenerState } from './listeners.ts';
import { readReferenceGrants } from './reference-grants.ts';
import { translateRoute } from './route-records.ts';

/**
 * The Gateway API objects of this controller, read and judged together:
 * which GatewayClasses are its own, which Gateways of those classes it
 * serves and how each listener fares, which HTTPRoutes attach where, the
 * route records they become, and everything status needs. Pure: the same
 * objects give the same model, whatever order they come in.
 */

export interface GatewayApiSources {
  /** spec.controllerName of the GatewayClasses this controller takes. */
  readonly controllerName: string;
  readonly gatewayClasses: readonly KubeObject[];
  readonly gateways: readonly KubeObject[];
  readonly httpRoutes: readonly KubeObject[];
  readonly referenceGrants: readonly KubeObject[];
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  readonly namespace: (name: string) => KubeObject | undefined;
  /** The frontends the template declares; undefined admits every listener port. */
  readonly frontends?: readonly Frontend[];
}

/** A Gateway of one of this controller's classes: served, or left out with its problems. */
export interface GatewayOutcome {
  readonly object: KubeObject;
  readonly served: ServedGateway | undefined;
  readonly problems: readonly Problem[];
  /** Routes attached, by listener name. */
  readonly attachedRoutes: ReadonlyMap<string, number>;
  /** The hostnames routes are served for, by listener name ('*': any). */
  readonly attachedHostnames: ReadonlyMap<string, ReadonlySet<string>>;
}

/** An HTTPRoute's standing with one of its parentRefs to a served Gateway. */
export interface ParentOutcome {
  readonly parent: ParentRef;
  readonly acceptance: Acceptance;
}

export interface RouteOutcome {
  readonly object: KubeObject;
  readonly parents: readonly ParentOutcome[];
  readonly unresolved: readonly Unresolved[];
}

export interface GatewayApiModel {
  readonly classes: ReadonlyMap<string, GatewayClassRead>;
  /** By namespace/name. */
  readonly gateways: ReadonlyMap<string, GatewayOutcome>;
  /**
   * By namespace/name: every HTTPRoute naming at least one served Gateway,
   * and every other one whose status still carries this controller's entries
   * (it named a served Gateway once): with no parents, so they are removed.
   */
  readonly routes: ReadonlyMap<string, RouteOutcome>;
  /** In precedence order (lib/routing/precedence.ts). */
  readonly records: readonly RouteRecord[];
  /** Objects and listeners left out, with why. */
  readonly excluded: readonly Problem[];
}

const keyOf = (object: { readonly metadata: { readonly namespace?: string; readonly name: string } }) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

function carriesEntryOf(route: KubeObject, controllerName: string): boolean {
  const parents = (route['status'] as { parents?: unknown } | undefined)?.parents;
  return Array.isArray(parents) && parents.some((entry) => (entry as { controllerName?: unknown } | null)?.controllerName === controllerName);
}

export function readGatewayApi(sources: GatewayApiSources): GatewayApiModel {
  const classes = readGatewayClasses(sources.gatewayClasses, sources.controllerName);
  const grants = readReferenceGrants(sources.referenceGrants);
  const excluded: Problem[] = [...grants.problems];
  const gateways = new Map<string, GatewayOutcome>();
  const served = new Map<string, ServedGateway>();
  const attachedCounts = new Map<string, Map<string, number>>();
  const attachedHostnames = new Map<string, Map<string, Set<string>>>();
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
      servedGateway = { gateway: read.gateway, listeners: resolveListeners(read.gateway, { secret: sources.secret, grants, frontends: sources.frontends }) };
      served.set(keyOf(object), servedGateway);
      for (const state of servedGateway.listeners) {
        for (const fault of state.faults) excluded.push({ object: read.label, field: `spec.listeners[${state.listener.index}]`, message: `${fault.reason}: ${fault.message}` });
      }
    }
    const counts = new Map<string, number>((read.gateway?.listeners ?? []).map((listener) => [listener.name, 0]));
    const hostnames = new Map<string, Set<string>>((read.gateway?.listeners ?? []).map((listener) => [listener.name, new Set<string>()]));
    attachedCounts.set(keyOf(object), counts);
    attachedHostnames.set(keyOf(object), hostnames);
    gateways.set(keyOf(object), { object, served: servedGateway, problems, attachedRoutes: counts, attachedHostnames: hostnames });
  }
  const routes = new Map<string, RouteOutcome>();
  const records: RouteRecord[] = [];
  const lookup = { service: sources.service, grants };
  for (const object of sources.httpRoutes) {
    const read = readHttpRoute(object);
    const ours = read.parents.flatMap((parent) => {
      const gateway = gatewayOf(parent, served);
      return gateway ? [{ parent, gateway }] : [];
    });
    if (ours.length === 0) {
      if (carriesEntryOf(object, sources.controllerName)) routes.set(keyOf(object), { object, parents: [], unresolved: [] });
      continue;
    }
    excluded.push(...read.problems);
    const route = read.route;
    const parents: ParentOutcome[] = [];
    const attached: AttachedListener[] = [];
    const counted = new Set<ListenerState>();
    for (const { parent, gateway } of ours) {
      const acceptance: Acceptance = route
        ? attach(route, parent, gateway, sources.namespace)
        : { accepted: false, reason: 'UnsupportedValue', message: read.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ') };
      parents.push({ parent, acceptance });
      if (!acceptance.accepted) continue;
      const counts = attachedCounts.get(`${gateway.gateway.namespace}/${gateway.gateway.name}`)!;
      const hostnames = attachedHostnames.get(`${gateway.gateway.namespace}/${gateway.gateway.name}`)!;
      for (const listener of acceptance.listeners) {
        attached.push(listener);
        for (const hostname of listener.hostnames) hostnames.get(listener.state.listener.name)?.add(hostname);
        if (counted.has(listener.state)) continue;
        counted.add(listener.state);
        counts.set(listener.state.listener.name, (counts.get(listener.state.listener.name) ?? 0) + 1);
      }
    }
    const translated = route ? translateRoute(route, attached, lookup) : { records: [], unresolved: [] };
    records.push(...translated.records);
    routes.set(keyOf(object), { object, parents, unresolved: translated.unresolved });
  }
  return { classes, gateways: gateways as ReadonlyMap<string, GatewayOutcome>, routes, records: inPrecedenceOrder(records), excluded };
}
