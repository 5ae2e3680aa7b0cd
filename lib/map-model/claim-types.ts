import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { Ranked, Standing } from '../routing/precedence.ts';
import type { ObjectSettings, TlsClaim } from '../routing/translated.ts';
import type { RouteConditions } from './route-conditions.ts';
import type { RoutePolicy } from './route-policies.ts';
import type { BackendShare, HostEntry, Route } from './types.ts';

/** What the map model makes of a translated object before conflicts between objects are settled (claims.ts makes them). */

export interface BackendRef {
  /** `<namespace>_<service>_<port>`: no part can hold '_', so one name is one (namespace, service, port); see backend-names.ts. */
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: { readonly name: string } | { readonly number: number };
  /**
   * A backend of several Services' servers, each Service's share of the
   * requests by weight (an HTTPRoute rule's weighted backendRefs): the name
   * is the rule's, so a weight change is a server weight change, not
   * another backend.
   */
  readonly split?: readonly BackendShare[];
  /**
   * A choice made per request between Service backends, each with the
   * policy of its backendRef's own filters (see backend-choice.ts): the
   * name is the choice's map value, which carries the weights, so a weight
   * change is a map change.
   */
  readonly choice?: readonly ChoiceShare[];
}

/** One backendRef of a choice: its Service backend, share of the requests and policy (its rule's filters, then its own). */
export interface ChoiceShare {
  readonly backend: BackendRef;
  readonly weight: number;
  readonly policy: RoutePolicy | undefined;
}

/** One map line an object asks for, before conflicts are settled. */
export interface RouteClaim {
  /** exact: path-exact.map; prefix: path-prefix.map; regex: path-regex.map (a path read as a regular expression). */
  readonly map: 'exact' | 'prefix' | 'regex';
  readonly key: string;
  /** The host key it is under (CATCH_ALL_HOST for any host): served only while the object may serve that host. */
  readonly host: string;
  /** The backend as the object names it. */
  readonly asked: BackendRef;
  /**
   * The backend it resolves to, which the aggregate keeps in line with the
   * Service: a port named by an Ingress becomes the Service port's number
   * (see backend-names.ts). `asked` until the aggregate resolves it.
   */
  backend: BackendRef;
  /** An Exact path outranks the exact line a Prefix path adds for itself, as Kubernetes ranks Exact over Prefix. */
  readonly fromExactPath: boolean;
  /** The rule set its requests get (see route-policies.ts); undefined when its route asks for no route setting. */
  readonly policy: RoutePolicy | undefined;
  /**
   * What a request must pass besides host and path (header, query
   * parameter and method matches): such a claim never wins its key alone,
   * it is a candidate of the key's list (route-lists.ts).
   */
  readonly conditions?: RouteConditions | undefined;
  readonly field: string;
  /** The key of the object asking (TranslatedObject.key), and its label for messages. */
  readonly ingress: KubeObject;
  readonly label: string;
  /** Where the object stands in conflicts. */
  readonly place: Standing;
  /** What precedence reads of it (lib/routing/precedence.ts): its route record. */
  readonly rank: Ranked;
  /** The map line, made again only when `backend` changes: an unchanged route is the same object in every model. */
  line: Route;
}

/** An object that passed every check, as the lines it asks for. */
export interface ServedClaims {
  readonly label: string;
  readonly namespace: string;
  /** Its group in host ownership when not its namespace's (see host-ownership.ts): HTTPRoutes share one. */
  readonly hostGroup?: string;
  readonly hosts: readonly HostEntry[];
  /** Every host key it claims, by rules (CATCH_ALL_HOST for rules without a host) or TLS entries, each once. */
  readonly hostKeys: readonly string[];
  readonly routes: readonly RouteClaim[];
  /** `backend` as for a RouteClaim: resolved by the aggregate. */
  readonly defaultBackend: { readonly asked: BackendRef; backend: BackendRef; readonly field: string } | undefined;
  readonly tls: readonly TlsClaim[];
  /** What it asks of its backends and routes. */
  readonly settings: ObjectSettings;
}

/** What one object contributes, and its problems. */
export interface ObjectClaims {
  /** Undefined when a problem leaves the whole object out. */
  readonly served: ServedClaims | undefined;
  readonly problems: readonly Problem[];
  readonly place: Standing;
}

/** A translated object's claims, and the routes that could not become map lines, each with a warning naming it. */
export interface ClaimsOutcome {
  readonly read: ObjectClaims;
  readonly warnings: readonly Problem[];
}

export function portText(port: BackendRef['port']): string {
  return 'name' in port ? port.name : String(port.number);
}
