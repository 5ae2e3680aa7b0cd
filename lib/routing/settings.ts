/**
 * Typed per-backend and per-route settings: what an Ingress's annotations
 * (haproxy.org/* or nginx.ingress.kubernetes.io/*) and an HTTPRoute's
 * filters and timeouts ask of HAProxy, in one vocabulary, so both spellings
 * and both APIs render the same configuration.
 *
 * Every field is optional: absent means HAProxy's behaviour under the
 * shipped defaults. Every value is already checked: numbers are in range,
 * names and paths are safe words (lib/escape.ts), header values
 * cannot end their line. Nothing here is raw annotation text.
 *
 * Backend settings belong to a backend, which several routes may share
 * (the oldest asking route's settings win); route settings belong to one
 * route (host key and path) and are served through a policy key in the path
 * maps, so a new route with settings another route already has needs no
 * reload.
 */

/** Milliseconds. */
export type Milliseconds = number;

/** A reference to a Secret, resolved in the namespace of the object asking unless it says otherwise. */
export interface SecretRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Where client certificates' CAs are read from: a Secret's `ca.crt`
 * (base64, as Secrets hold data), or with `configMap` a ConfigMap's (the
 * PEM itself; Gateway API caCertificateRefs).
 */
export interface CaRef extends SecretRef {
  readonly configMap?: true;
}

export type RedirectCode = 301 | 302 | 303 | 307 | 308;

/** What a Gateway API rule answers by itself with: 500 for an HTTPRoute, 503 (gRPC's UNAVAILABLE) for a GRPCRoute. */
export type UnresolvedStatus = 500 | 503;

export interface BackendSettings {
  readonly timeouts?: {
    readonly connect?: Milliseconds;
    readonly server?: Milliseconds;
    readonly tunnel?: Milliseconds;
  };
  /** How HAProxy speaks to the servers. */
  readonly protocol?: {
    /** h1 by default; h2 over TLS (alpn h2), h2c in clear text (proto h2): gRPC is either. */
    readonly version: 'h1' | 'h2' | 'h2c';
    readonly tls: boolean;
    /**
     * Verify the servers' certificates against this CA (a Secret's or a
     * ConfigMap's `ca.crt`), or with `system` the system's CA bundle; TLS
     * without it is `verify none`.
     */
    readonly verifyCa?: CaRef | 'system';
    /** SNI sent to the servers. */
    readonly sni?: string;
    /** The name the servers' certificates must carry (verified with verifyCa); without it, the SNI's. */
    readonly verifyHost?: string;
  };
  readonly balance?:
    | { readonly algorithm: 'roundrobin' | 'leastconn' | 'source' | 'uri' | 'first' }
    | { readonly algorithm: 'hdr'; readonly header: string }
    | { readonly algorithm: 'url_param'; readonly parameter: string };
  /** Per-server maxconn. */
  readonly serverMaxconn?: number;
  /**
   * Cookie affinity: the cookie HAProxy inserts to keep a client on one
   * server; it lasts `maxAge` seconds when set (its Max-Age attribute),
   * the browser session otherwise.
   */
  readonly affinity?: { readonly cookie: string; readonly maxAge?: number };
  readonly healthCheck?: { readonly path?: string; readonly interval?: Milliseconds };
}

export interface HeaderAction {
  readonly name: string;
  /** Written as a quoted log-format string; `%` doubled. */
  readonly value: string;
}

export interface RouteSettings {
  /** Plain HTTP answered with a redirect to HTTPS. */
  readonly sslRedirect?: { readonly code: RedirectCode };
  /** Strict-Transport-Security on HTTPS responses. */
  readonly hsts?: { readonly maxAge: number; readonly includeSubdomains: boolean; readonly preload: boolean };
  /** Source CIDRs (IPv4 or IPv6): outside `allow` (when set) or inside `deny`, 403. */
  readonly allow?: readonly string[];
  readonly deny?: readonly string[];
  /**
   * `allow` and `deny` judge the address in this request header (its last
   * occurrence, as a load balancer in front appends it) instead of the
   * connection's; a request without it is outside every list. A header name.
   */
  readonly sourceHeader?: string;
  /** Basic auth against the users of a Secret: 401 without valid credentials. */
  readonly basicAuth?: { readonly secret: SecretRef; readonly realm: string };
  /** Client certificates asked for over TLS and checked against the CA of a Secret's ca.crt (see ClientCertificate). */
  readonly clientCertificate?: ClientCertificate;
  /**
   * External authentication (ingress-nginx's auth-url): each request's
   * headers are first sent to `url`; a 2xx lets it through with the auth
   * answer's `responseHeaders`, 401 is answered 401 (or a redirect to
   * `signin`), 403 is 403, anything else 500. `signin` and `requestRedirect`
   * may hold the nginx variables of lib/lua/external-auth.ts, expanded per
   * request; `signin` already carries its redirect parameter.
   */
  readonly externalAuth?: {
    readonly url: string;
    /** The auth request's method; the request's own when absent. */
    readonly method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
    readonly signin?: string;
    /** Sent to the auth service as X-Auth-Request-Redirect. */
    readonly requestRedirect: string;
    readonly responseHeaders: readonly string[];
    /** The auth answer's Set-Cookie on every answer to the client, not only on success (auth-always-set-cookie). */
    readonly alwaysSetCookie: boolean;
  };
  /**
   * Gateway API's HTTPRoute ExternalAuth filter (protocol HTTP): each
   * request's method, `path` followed by its own path, and its headers
   * named in `allowedHeaders` (with Host, Authorization and Content-Length
   * always) are sent to a Service port; its 200 lets the request through
   * with the auth answer's `allowedResponseHeaders` (every header of the
   * answer when empty), any other answer is returned to the client, no
   * answer is 500. `refused` names why the Service cannot be used (every
   * request then answered 500: the filter fails closed).
   */
  readonly gatewayExternalAuth?: {
    readonly namespace: string;
    readonly service: string;
    readonly port: number;
    readonly path: string;
    readonly allowedHeaders: readonly string[];
    readonly allowedResponseHeaders: readonly string[];
    readonly refused?: string;
  };
  /** Per source address: above `requests` per `period`, answered `status`. */
  readonly rateLimit?: { readonly requests: number; readonly period: Milliseconds; readonly status: number };
  /** Concurrent connections per source address. */
  readonly connectionLimit?: number;
  /**
   * Neither X-Forwarded-For nor X-Real-IP is sent to the backend
   * (haproxy.org's forwarded-for: "false"); absent, the template's
   * forwarded headers apply.
   */
  readonly withoutForwardedFor?: true;
  /** The X-Forwarded-Prefix header sent to the backend (nginx x-forwarded-prefix). */
  readonly forwardedPrefix?: string;
  /** Request bodies above this many bytes answered 413. */
  readonly bodySizeLimit?: number;
  /**
   * The path the backend sees: the matched prefix replaced (`prefix`), the
   * whole path replaced (`full`), regular expressions with captures
   * applied in turn (`regex`, haproxy.org's path-rewrite lines), or the route's own path read as
   * that regular expression (`route-path`, nginx's rewrite-target with
   * captures, which makes the path a regex: see `regexPath`).
   * A pattern or replacement is printable ASCII without space, `'`, `"`,
   * `` ` `` or `%`, so a template writes it inside single quotes, where
   * HAProxy interprets nothing; captures are written `\1`..`\9`.
   */
  readonly rewrite?:
    | { readonly kind: 'prefix'; readonly replacement: string }
    | { readonly kind: 'full'; readonly path: string }
    | { readonly kind: 'regex'; readonly rules: readonly { readonly pattern: string; readonly replacement: string }[] }
    | { readonly kind: 'route-path'; readonly replacement: string };
  /**
   * The route's path is a case-insensitive regular expression matched
   * against the request's path from its start (nginx's use-regex, and
   * rewrite-target with captures), not a prefix or exact path.
   */
  readonly regexPath?: boolean;
  /** Requests for exactly "/" redirected here (nginx app-root). */
  readonly appRoot?: string;
  /** Every request answered with a redirect: to a full URL, or parts of the request's URL replaced (Gateway API RequestRedirect). */
  readonly redirect?: {
    readonly code: RedirectCode;
    readonly location?: string;
    readonly scheme?: 'http' | 'https';
    readonly host?: string;
    readonly port?: number;
    readonly path?: { readonly kind: 'full'; readonly path: string } | { readonly kind: 'prefix'; readonly replacement: string };
  };
  /** The Host header the backend sees. */
  readonly upstreamHost?: string;
  readonly requestHeaders?: { readonly set?: readonly HeaderAction[]; readonly add?: readonly HeaderAction[]; readonly remove?: readonly string[] };
  readonly responseHeaders?: { readonly set?: readonly HeaderAction[]; readonly add?: readonly HeaderAction[]; readonly remove?: readonly string[] };
  /**
   * Copies of every request sent to other Services as well, their answers
   * dropped (Gateway API RequestMirror, one per filter); `percent` of
   * requests when set.
   */
  readonly mirrors?: readonly { readonly namespace: string; readonly service: string; readonly port: number; readonly percent?: number }[];
  /**
   * Time limits of one route (Gateway API HTTPRoute timeouts): `request`
   * for the whole exchange with the client, `backendRequest` for each
   * request to a backend.
   */
  readonly timeouts?: { readonly request?: Milliseconds; readonly backendRequest?: Milliseconds };
  /**
   * `share` of every `of` requests answered `status` at random (Gateway API
   * backendRefs that do not resolve keep their share of the requests, so
   * the other backends get no more than their weight); in lowest terms, so
   * equal shares are one setting. Every request when `share` is `of`.
   */
  readonly unresolvedShare?: { readonly share: number; readonly of: number; readonly status: UnresolvedStatus };
  /**
   * The route is served over TLS alone (`tls` true) or over plain HTTP
   * alone (Gateway API: attached to listeners of one protocol): a request
   * over the other is answered as if no route matched (404).
   */
  readonly servedOver?: { readonly tls: boolean };
  readonly cors?: {
    readonly allowOrigins: readonly string[];
    /** Regular expressions an allowed origin matches (haproxy.org's cors-allow-origin written as one), beside `allowOrigins`. */
    readonly allowOriginPatterns?: readonly string[];
    readonly allowMethods: readonly string[];
    readonly allowHeaders: readonly string[];
    /** Response headers scripts may read (Access-Control-Expose-Headers); none when absent. */
    readonly exposeHeaders?: readonly string[];
    readonly allowCredentials: boolean;
    /**
     * With `allowCredentials`, a `*` in `allowOrigins`, `allowMethods`,
     * `allowHeaders` or `exposeHeaders` is answered with the request's own
     * origin, method or headers, or the response's header names, never `*`
     * (Gateway API's CORS filter, apis/v1/httproute_types.go HTTPCORSFilter,
     * as the Fetch standard reads `*` literally for credentialed requests);
     * absent, `*` is sent as it is (ingress-nginx and haproxy.org do).
     */
    readonly echoWildcards?: true;
    readonly maxAge?: number;
    /**
     * A preflight from an allowed origin answered 204 by HAProxy; when
     * false it goes to the backend, whose answer gets the allow headers
     * (haproxy.org without cors-respond-to-options: "true").
     */
    readonly respondToPreflight: boolean;
  };
}

/**
 * Client certificate authentication, as ingress-nginx's auth-tls-* (and
 * a Gateway listener's AllowValidOnly validation asks of its routes): over
 * TLS, the hosts of the routes ask for a client certificate checked
 * against `ca`. `on`: a request without a valid one is refused (400, or a
 * redirect to `errorPage`); `optional`: one without a certificate is
 * served, one with an invalid certificate refused; `optional_no_ca`:
 * nothing is refused, the backend is told the outcome.
 */
export interface ClientCertificate {
  readonly ca: CaRef;
  readonly verify: 'on' | 'optional' | 'optional_no_ca';
  /** The certificate sent to the backend in `ssl-client-cert` (URL-encoded PEM). */
  readonly passCertificate: boolean;
  /** Where a refused request is redirected (302) instead of answered 400. */
  readonly errorPage?: string;
  /**
   * Only requests over TLS are asked for a certificate (a Gateway listener's
   * validation: the route may be served on an HTTP listener too).
   */
  readonly overTlsOnly?: true;
}

/**
 * How a Service port's servers are spoken to whoever routes to them (a
 * Gateway API BackendTLSPolicy): TLS as `protocol` says (its `tls`,
 * `verifyCa`, `sni` and `verifyHost`; the HTTP version stays the
 * backend's own), or, with `refused`, no request reaches them and this says
 * why (a policy that cannot be served as written is never served weaker).
 * `by` names what asked, as messages name it.
 */
export type ServicePortTls = ({ readonly protocol: NonNullable<BackendSettings['protocol']> } | { readonly refused: string }) & { readonly by: string };

/** How a Service port is named among ServicePortTls entries: `<namespace>/<service>/<port number>`. */
export function servicePortKey(namespace: string, service: string, port: number): string {
  return `${namespace}/${service}/${port}`;
}
