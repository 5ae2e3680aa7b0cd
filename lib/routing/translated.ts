import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { Standing } from './precedence.ts';
import type { RouteHost, RouteRecord, WeightedBackend } from './route.ts';
import type { BackendSettings, RouteSettings } from './settings.ts';

/**
 * What a translator makes of one object of an API (lib/ingress for
 * Ingresses, lib/gateway for HTTPRoutes), in one pass: the routes it asks
 * for, in this folder's terms, with its problems and what its status says.
 * The HAProxy map model (lib/map-model) reads these alone, never an API's
 * objects, so both APIs share the host map, the path maps, the backends
 * and the route policies.
 */
export interface TranslatedObject {
  /**
   * What the map model knows the object by: the object itself, or a
   * stand-in kept while what it is translated to is the same (an HTTPRoute
   * whose Gateway, Services or grants changed is translated again).
   */
  readonly key: KubeObject;
  /** The object the values came from: line origins name it. */
  readonly object: KubeObject;
  readonly kind: string;
  /** `<Kind> <namespace>/<name>`, as messages name it. */
  readonly label: string;
  readonly place: Standing;
  /** Undefined when a problem leaves the whole object out. */
  readonly served: ServedRoutes | undefined;
  /** Why the object, or a part of it (a TLS entry), is left out. */
  readonly problems: readonly Problem[];
  /** Served but degraded: routes left out, backends answered 500. */
  readonly warnings: readonly Problem[];
  /** The matches left out as not routed yet, for the object's status. */
  readonly leftOut: readonly LeftOutMatch[];
}

/** What an object that passed every check asks to be served. */
export interface ServedRoutes {
  readonly namespace: string;
  /** Its group in host ownership when not its namespace's: HTTPRoutes share one (HTTP_ROUTE_HOST_GROUP). */
  readonly hostGroup?: string;
  /** One per host its rules name, in order, a host named twice twice. */
  readonly hosts: readonly TranslatedHost[];
  /** In the object's order: origin.rule counts its paths, which is how an object's own routes rank among themselves. */
  readonly routes: readonly RouteRecord[];
  readonly defaultBackend: { readonly backend: WeightedBackend; readonly field: string } | undefined;
  readonly tls: readonly TlsClaim[];
  readonly settings: ObjectSettings;
}

/** What an object asks of every backend it routes to, and of all its routes (an Ingress's annotations). */
export interface ObjectSettings {
  readonly backend: BackendSettings;
  readonly route: RouteSettings;
  /** The field they were read from (an Ingress's annotations). */
  readonly field?: string;
}

export interface TranslatedHost extends RouteHost {
  /** Undefined for the catch-all host of a rule without one: its line is nobody's. */
  readonly field?: string;
}

/** A TLS entry: a Secret served for these SNI names. */
export interface TlsClaim {
  readonly secretName: string;
  /** SNI names: the entry's hosts, or, when it names none, the hosts of the object's rules. */
  readonly hosts: readonly string[];
  /** The field each host came from. */
  readonly hostFields: readonly string[];
  /** `spec.tls[i].secretName`. */
  readonly field: string;
}

/** The host ownership group of every HTTPRoute: not a namespace name (those have no upper case). */
export const HTTP_ROUTE_HOST_GROUP = 'Gateway API HTTPRoutes';

/**
 * A match left out as not routed yet (as against one that cannot be served
 * at all): its warning and its route's status (PartiallyInvalid) say so.
 */
export interface LeftOutMatch {
  /** The object, as messages name it. */
  readonly object: string;
  readonly field: string;
  readonly host: string;
  /** What of it is not routed yet (capabilities.ts). */
  readonly reason: string;
}

/** How a left-out match is named: in its warning, and in its route's status. */
export function leftOutMessage(match: LeftOutMatch): string {
  return `not served for host ${match.host}: ${match.reason} not routed yet`;
}
