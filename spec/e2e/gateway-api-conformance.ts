/**
 * The translated Gateway API conformance scenarios: each end-to-end test of
 * spec/e2e/gateway-api-*.spec.ts that proves a feature, by its spec file
 * and its own title, with the features it proves in the conformance
 * suite's names (lib/gateway/features.ts). Every test names its route
 * kind's core features too, as the upstream tests do, so the profile it
 * counts in is the one whose features hold all of them
 * (conformance/utils/suite/profiles.go getConformanceProfilesForTest).
 *
 * Read by `npm run conformance:report` (.ci/conformance-report.ts), which
 * runs the specs and records each scenario's outcome under its features, and
 * by spec/lib/gateway/features.spec.ts, which holds every claimed feature to
 * a scenario here and every scenario to a test that exists. Tests not
 * listed (the ExternalAuth filter, an experimental filter with no feature
 * name of its own) are run but not counted.
 */

export interface Scenario {
  /** The spec file under spec/e2e. */
  readonly spec: string;
  /** The test's own title (its `it`), as mocha reports it. */
  readonly title: string;
  readonly features: readonly string[];
}

const HTTP = ['Gateway', 'HTTPRoute'];
const GRPC = ['Gateway', 'GRPCRoute'];
const TLS = ['Gateway', 'TLSRoute'];
const TCP = ['Gateway', 'TCPRoute'];

function of(spec: string, features: readonly string[], titles: readonly string[]): Scenario[] {
  return titles.map((title) => Object.freeze({ spec, title, features: Object.freeze([...features]) }));
}

const CLIENT_CERTIFICATES = 'gateway-api-client-certificates.spec.ts';
const CORE = 'gateway-api-http-core.spec.ts';
const ROUTING = 'gateway-api-routing.spec.ts';
const L4 = 'gateway-api-l4.spec.ts';
const STATUS = 'gateway-api-status.spec.ts';
const GRPC_SPEC = 'gateway-api-grpc.spec.ts';

export const SCENARIOS: readonly Scenario[] = Object.freeze([
  ...of(
    CLIENT_CERTIFICATES,
    [...HTTP, 'GatewayFrontendClientCertificateValidation'],
    [
      'serves a client whose certificate the CA of a ConfigMap signed, and refuses in the handshake one from another CA and one without a certificate (AllowValidOnly)',
      'refuses a request through a bind that lets failed certificates by for an Ingress, or whose SNI named another host',
      'serves nothing over the HTTPS listener whose only CA reference does not resolve, and still serves HTTP (GatewayFrontendInvalidDefaultClientCertificateValidation)',
    ],
  ),
  ...of(
    CLIENT_CERTIFICATES,
    [...HTTP, 'GatewayFrontendClientCertificateValidation', 'GatewayFrontendClientCertificateValidationInsecureFallback'],
    ["takes the port's own validation over the default: the other CA, from a Secret, in AllowInsecureFallback, serves every client"],
  ),
  ...of(
    'gateway-api-cors.spec.ts',
    [...HTTP, 'HTTPRouteCORS'],
    [
      'answers a preflight from an exact or a wildcard origin itself, with every allow header, the expose headers, the max age and the credentials',
      'sends no allow headers to an origin not allowed, for a preflight or an actual request',
      'adds the allow origin, the credentials and the expose headers to the answer of an actual request from an allowed origin',
      'answers "*" methods without credentials with "*", the max age defaulting to 5 seconds and no credentials header',
      'answers any origin without credentials with "*", a port in the origin included',
      'never answers a wildcard with "*" when credentials are allowed: the origin, method and headers asked for, and the answer\'s own header names',
      'answers wildcards without credentials with "*" and no credentials header',
    ],
  ),
  ...of(GRPC_SPEC, GRPC, [
    'routes by service and method, an exact service and method to its rule, a service alone to its own, and answers UNIMPLEMENTED where nothing matches',
    'routes by a header match before the same method without one, and applies a rule’s RequestHeaderModifier to its calls alone',
    'splits calls between backendRefs by weight',
    'serves a new GRPCRoute to a served Service without a reload',
    'answers UNAVAILABLE for a rule without backendRefs and for one whose backendRef does not resolve, as the GRPCRoute specification asks',
    'serves gRPC over TLS on an HTTPS listener: HAProxy offers h2 by ALPN on its HTTPS bind',
  ]),
  ...of(
    CORE,
    [...HTTP, 'HTTPRouteSchemeRedirect', 'HTTPRoutePortRedirect'],
    [
      "answers a RequestRedirect with the scheme's well-known port when it sets a scheme and no port, the listener's when it sets neither, and leaves a scheme's default port out of Location",
    ],
  ),
  ...of(
    CORE,
    [...HTTP, 'HTTPRoute303RedirectStatusCode', 'HTTPRoute307RedirectStatusCode', 'HTTPRoute308RedirectStatusCode'],
    ['answers a RequestRedirect with the statusCode 303, 307 or 308 it sets, to a POST as to a GET, the path kept'],
  ),
  ...of(CORE, [...HTTP, 'HTTPRouteBackendProtocolWebSocket'], ['passes a WebSocket upgrade to a Service port of appProtocol kubernetes.io/ws, then the bytes both ways']),
  ...of(CORE, [...HTTP, 'HTTPRouteNamedRouteRule'], ['serves a named rule and an unnamed one of one route, each to its backend']),
  ...of(CORE, HTTP, [
    'answers 500 for a rule whose backendRefs are omitted or empty, where a shorter match would otherwise answer, and serves a second one without a reload',
    "serves every name over an HTTPS listener without a hostname, with its certificate, and a hostname listener's routes for its name",
  ]),
  ...of(CORE, [...HTTP, 'ReferenceGrant'], ['serves a backendRef to another namespace that a v1 ReferenceGrant allows, and only the Service it names']),
  ...of(CORE, [...HTTP, 'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors'], ['copies each request to every RequestMirror of its rule and answers from the backend alone']),
  ...of(L4, TLS, [
    'passes TLS through by SNI name: curl sees the backend’s own certificate and answer',
    'refuses a connection for an SNI name no route lists',
    'serves a new TLSRoute on the passthrough listener without a reload',
  ]),
  ...of(L4, [...TLS, 'TLSRouteModeTerminate'], ['ends TLS with the listener’s certificate, then sends the stream in clear text to the backend']),
  ...of(L4, TCP, ['splits TCP connections by weight, and takes a weight change without a reload', 'takes a new endpoint of a weighted Service without a reload']),
  ...of(
    'gateway-api-listener-sets.spec.ts',
    [...HTTP, 'ListenerSet'],
    [
      "serves an HTTPRoute of another namespace on the ListenerSet listener its Gateway admits, for the listener's hostname alone",
      'serves nothing of a ListenerSet whose namespace the Gateway does not admit (allowedListeners)',
      "serves the certificate of the ListenerSet's HTTPS listener, from its own namespace, and the route over it (curl --resolve)",
    ],
  ),
  ...of(
    'gateway-api-backend-tls.spec.ts',
    [...HTTP, 'BackendTLSPolicy'],
    [
      'speaks TLS to the Service port, with the policy hostname as SNI, verified against the CA of the ConfigMap',
      'refuses a server whose certificate does not carry the policy hostname: 503, never served unverified',
      'follows the ConfigMap: another CA in its ca.crt refuses the server (503), the signing CA back serves it again',
      'speaks plain HTTP to the Service port again once its policy is removed',
    ],
  ),
  ...of('gateway-api-late-crds.spec.ts', ['Gateway'], ['deploys without the kinds, then watches them once their CRDs exist and accepts its GatewayClass']),
  ...of(ROUTING, HTTP, [
    'prefers an Exact match over a prefix, the longest prefix over shorter ones, matches prefixes element by element and regular expressions whole',
    'matches headers exactly (names in any case) or by regular expression, the most header matches first',
    'ranks the matches of several routes for one host together: Exact path, longest prefix, then header matches',
    'serves a route with conditions some served route has without a reload',
    'serves a wildcard hostname for names any number of labels below its domain, the nearest wildcard first, not for the domain itself',
    'serves a new wildcard hostname whose domain has as many labels as a served one without a reload, at any depth',
    "terminates TLS for an HTTPS listener's hostname with its certificateRefs' Secret, and refuses other names",
    'serves a route on an HTTPS listener alone over HTTPS, 404 over plain HTTP, and a new one there without a reload',
    "never lets an HTTPS listener's wildcard certificate answer for a host an Ingress namespace holds",
    'splits 1,000 requests by backendRef weight within 10%, and changes the split without a reload',
    'answers 500 for a rule whose backendRefs all have weight 0, and serves a second one without a reload',
    'serves the first of two matches with the same host, path and conditions, and warns that the other is never reached',
    "answers 500 for an unresolved backendRef's share of a split, within 4.5 standard deviations over 1,000 requests",
    'serves a new HTTPRoute to a served Service, then a changed path, without a reload',
  ]),
  ...of(ROUTING, [...HTTP, 'HTTPRouteQueryParamMatching'], ['matches query parameters by name and whole value, case-sensitive, the most query matches first']),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteMethodMatching'],
    ['matches the method', "serves header and method conditions on RegularExpression paths in the specification's order, falling through to the next expression and to prefixes"],
  ),
  ...of(ROUTING, [...HTTP, 'HTTPRouteParentRefPort'], ['serves a route on the listeners it attached to alone: by sectionName or port, the next match answering elsewhere']),
  ...of(ROUTING, [...HTTP, 'HTTPRouteResponseHeaderModification'], ['sets, adds and removes request headers the backend sees, and response headers the client sees']),
  ...of(ROUTING, [...HTTP, 'HTTPRouteSchemeRedirect', 'HTTPRoutePortRedirect'], ['answers a RequestRedirect with its status and Location, keeping what it does not replace']),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRoutePathRedirect'],
    ['answers a RequestRedirect with a path: the matched prefix or the whole path replaced, the query kept (conformance HTTPRouteRedirectPath)'],
  ),
  ...of(ROUTING, [...HTTP, 'HTTPRouteHostRewrite', 'HTTPRoutePathRewrite'], ['replaces the matched prefix and the Host the backend sees with URLRewrite']),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteBackendRequestHeaderModification'],
    ["applies a backendRef's own filters to its share of a split alone, splits 1,000 requests within 10%, and changes the weights without a reload"],
  ),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteBackendRequestHeaderModification', 'HTTPRoutePathRewrite', 'HTTPRoutePathRedirect'],
    [
      "serves a backendRef's URLRewrite, RequestRedirect and RequestHeaderModifier (conformance HTTPRouteBackendURLRewrite, HTTPRouteBackendRequestRedirect, HTTPRouteRequestHeaderModifierBackendWeights)",
    ],
  ),
  ...of(ROUTING, [...HTTP, 'ReferenceGrant'], ['answers 500 for a backendRef to another namespace until a ReferenceGrant there allows it, and for one to a missing Service']),
  ...of(ROUTING, [...HTTP, 'HTTPRouteBackendTimeout'], ["answers 504 when a backend takes longer than the rule's timeouts.backendRequest, for that rule alone"]),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteBackendTimeout', 'HTTPRouteRequestTimeout'],
    ["waits the longest HAProxy can (past the backend's own server timeout) for a rule whose timeouts.backendRequest is 0, and as long as timeouts.request for a rule with that alone"],
  ),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteRequestMirror'],
    [
      "sends a copy of each request to a RequestMirror's Service and answers the client from the backend alone; a second route to that mirror and its endpoint changes need no reload",
      'copies only the requests sent to the backendRef whose own filters hold a RequestMirror',
    ],
  ),
  ...of(
    ROUTING,
    [...HTTP, 'HTTPRouteRequestMirror', 'HTTPRouteRequestPercentageMirror'],
    ['mirrors about the share of requests percent asks for, and answers clients alike whether the mirror holds its answer, is down or answers an error'],
  ),
  ...of(STATUS, ['Gateway'], ['accepts its GatewayClass and programs the Gateway once deployed, with the published address']),
  ...of(STATUS, [...HTTP, 'ReferenceGrant'], ['follows routes as they come: accepted, refused by hostname, and unresolved until the ReferenceGrant']),
  ...of(STATUS, GRPC, ['writes GRPCRoutes their status: accepted, or not where an older HTTPRoute shares a hostname on the listener']),
  ...of(STATUS, HTTP, [
    'renders nothing for its own status writes: the HTTPRoute status it wrote comes back as a watch event and is only stored',
    'says PartiallyInvalid while a match of an accepted route is left out as not routed yet',
    'refuses a listener on a port the template does not serve (PortUnavailable), and the routes that select it by port',
  ]),
]);
