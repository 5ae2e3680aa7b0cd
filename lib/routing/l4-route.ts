import type { RouteOrigin, WeightedBackend } from './route.ts';

/**
 * The layer-4 part of the routing model: connections, not requests. A TCP
 * listener's port sends every connection to its route's backends; a TLS
 * listener's port picks the route by the SNI name of the ClientHello,
 * either passing the TLS stream through untouched (Passthrough) or ending
 * TLS with the listener's certificates first (Terminate). Backends are
 * weighted Service ports, as for HTTP routes (route.ts).
 *
 * Every string here already passed the check for where it lands, as in
 * route.ts.
 */

/** How a listener port handles connections: one HAProxy frontend in tcp mode each. */
export type L4Mode = 'tcp' | 'tls-passthrough' | 'tls-terminate';

/** A TLS Secret a Terminate listener serves (already resolved: a TLS Secret its Gateway may use). */
export interface L4Certificate {
  readonly namespace: string;
  readonly name: string;
  /** The Gateway and certificateRefs field that asked for it, for messages. */
  readonly object: string;
  readonly field: string;
}

/** A listener port served at layer 4: what its frontend is. */
export interface L4Listener {
  readonly port: number;
  readonly mode: L4Mode;
  /** For tls-terminate: every certificate its listeners name, in Gateway then listener order. */
  readonly certificates: readonly L4Certificate[];
  /** The Gateway listener it was read from, for messages. */
  readonly object: string;
  readonly field: string;
}

export interface L4Route {
  readonly port: number;
  readonly mode: L4Mode;
  /**
   * For TLS: the SNI name (lowercase), `*.` and a domain (any number of
   * labels below it), or CATCH_ALL_HOST for any name and none. For TCP:
   * undefined (the port alone picks the route).
   */
  readonly sni: string | undefined;
  /** Empty when no backendRef resolves: connections are refused. */
  readonly backends: readonly WeightedBackend[];
  readonly origin: RouteOrigin;
}

/** What the L4 translations give the map model. */
export interface L4Routing {
  /** By port. */
  readonly listeners: readonly L4Listener[];
  /** In precedence order: the oldest route first (then by namespace/name), which wins a port or an SNI name. */
  readonly routes: readonly L4Route[];
}

export const NO_L4_ROUTING: L4Routing = Object.freeze({ listeners: Object.freeze([]), routes: Object.freeze([]) });
