import type { RouteSettings } from './settings.ts';

/**
 * One routing model for every API that asks HAProxy to route HTTP: a route
 * is a host key, a path match, the extra matches a request must also pass
 * (headers, query parameters, method), and where it goes (weighted Service
 * backends) with what happens on the way (RouteSettings).
 *
 * Every string here already passed the check for where it lands (see
 * lib/object-fields/names.ts and lib/escape.ts): builders of routes refuse
 * a value, with a Problem, rather than put it here unchecked.
 */

/** The host key of routes for any host (Ingress rules without a host, HTTPRoutes without hostnames): both APIs share one host map line. */
export const CATCH_ALL_HOST = '*';

/**
 * How a `*.domain` host key covers names: Ingress wildcards cover exactly
 * one label, Gateway API wildcards any number of labels (a suffix match).
 */
export type HostWildcard = 'none' | 'one-label' | 'suffix';

export interface RouteHost {
  /** Lowercase DNS name, `*.` and a DNS name, or CATCH_ALL_HOST. */
  readonly key: string;
  readonly wildcard: HostWildcard;
}

/**
 * Exact: the path and nothing else. Prefix: the path element by element
 * (`/a` covers `/a`, `/a/` and `/a/b`, not `/ab`), stored without a
 * trailing '/' except for the root. Regex: a PCRE that HAProxy compiled,
 * matching the whole path case-sensitively (Gateway API's
 * RegularExpression); with `dialect: 'nginx'`, as ingress-nginx reads an
 * Ingress path under use-regex (`location ~*`): case-insensitively, from
 * the path's start, the rest of the path free.
 */
export type PathMatch =
  | { readonly kind: 'exact'; readonly value: string }
  | { readonly kind: 'prefix'; readonly value: string }
  | { readonly kind: 'regex'; readonly value: string; readonly dialect?: 'nginx' };

/** A header or query parameter match: the whole value, or a regular expression on it. */
export interface ValueMatch {
  /** Header names are lowercase (they are case-insensitive); query parameter names as given. */
  readonly name: string;
  readonly kind: 'exact' | 'regex';
  readonly value: string;
}

export interface WeightedBackend {
  readonly namespace: string;
  readonly service: string;
  /** The Service port's number; or its name, which an Ingress may give, resolved against the Service by the map model. */
  readonly port: number | string;
  /** Relative share of the requests (0 means none); the shares of one route need not add up to anything. */
  readonly weight: number;
  /**
   * Why requests sent here are answered 500 instead (the Service is
   * missing, or its namespace did not grant the reference): the share is
   * kept, so the other backends get no more than their weight.
   */
  readonly refused?: string;
  /** What happens to requests on their way to this backend alone. */
  readonly settings?: RouteSettings;
}

/** Where a route comes from: what precedence and messages need of its object. */
export interface RouteOrigin {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** creationTimestamp in milliseconds; +Infinity when missing. */
  readonly age: number;
  /** Index of the rule in its object, and of the match in its rule. */
  readonly rule: number;
  readonly match: number;
  /** The field the route was read from, for messages. */
  readonly field: string;
  /** The field its settings were read from, when not `field` (an Ingress's annotations). */
  readonly settingsField?: string;
}

/** A listener a route is served on: its frontend is picked by port and protocol. */
export interface RouteEntrypoint {
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
}

export interface RouteRecord {
  readonly host: RouteHost;
  readonly path: PathMatch;
  /** Every one must match; sorted by name. */
  readonly headers: readonly ValueMatch[];
  readonly query: readonly ValueMatch[];
  /** Upper-case HTTP method; undefined for any. */
  readonly method: string | undefined;
  /** Empty when the route answers by itself (a redirect) or has nowhere to go (500). */
  readonly backends: readonly WeightedBackend[];
  readonly settings: RouteSettings;
  /** Where it is served; sorted by port. */
  readonly entrypoints: readonly RouteEntrypoint[];
  /**
   * Set when the route is served over this protocol alone while listeners
   * of the other are served too: requests over the other must not reach it.
   */
  readonly onlyOver?: RouteEntrypoint['protocol'];
  readonly origin: RouteOrigin;
}
