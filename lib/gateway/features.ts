/**
 * The Gateway API features this controller claims, in the words of the
 * conformance suite: the names of pkg/features (sigs.k8s.io/gateway-api
 * v1.6.1) and the profiles of conformance/utils/suite/profiles.go. The
 * GatewayClass status lists SUPPORTED_FEATURES (`status.supportedFeatures`)
 * and the conformance report (docs/conformance/report.yaml) is compiled
 * against them, so a feature is named here only once a translated scenario
 * in spec/e2e proves it (spec/e2e/gateway-api-conformance.ts tags each
 * scenario with its features; spec/lib/gateway/features.spec.ts holds every
 * claim to one).
 */

/** The Gateway API release whose feature names and profiles these are. */
export const GATEWAY_API_VERSION = 'v1.6.1';

/** A conformance profile: a test belongs to it when every feature the test names is among its core or extended ones. */
export interface ConformanceProfile {
  readonly name: string;
  readonly core: readonly string[];
  readonly extended: readonly string[];
}

/** GatewayExtendedFeatures (pkg/features/gateway.go): in every Gateway profile's extended set. */
const GATEWAY_EXTENDED = [
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructurePropagation',
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'ListenerSet',
];

/** HTTPRouteExtendedFeatures (pkg/features/httproute.go). */
const HTTP_ROUTE_EXTENDED = [
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteMethodMatching',
  'HTTPRouteResponseHeaderModification',
  'HTTPRoutePortRedirect',
  'HTTPRouteSchemeRedirect',
  'HTTPRoutePathRedirect',
  'HTTPRouteHostRewrite',
  'HTTPRoutePathRewrite',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteBackendTimeout',
  'HTTPRouteParentRefPort',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteCORS',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteRetry',
  'HTTPRouteRetryBackendTimeout',
  'HTTPRouteRetryConnectionError',
];

/** The Gateway profiles of conformance/utils/suite/profiles.go, the mesh ones left out: this controller is no mesh. */
export const CONFORMANCE_PROFILES: readonly ConformanceProfile[] = Object.freeze([
  {
    name: 'GATEWAY-HTTP',
    core: ['Gateway', 'ReferenceGrant', 'HTTPRoute'],
    extended: [...GATEWAY_EXTENDED, ...HTTP_ROUTE_EXTENDED, 'BackendTLSPolicy', 'BackendTLSPolicySANValidation'],
  },
  { name: 'GATEWAY-TLS', core: ['Gateway', 'ReferenceGrant', 'TLSRoute'], extended: [...GATEWAY_EXTENDED, 'TLSRouteModeTerminate', 'TLSRouteModeMixed'] },
  { name: 'GATEWAY-TCP', core: ['Gateway', 'TCPRoute', 'ReferenceGrant'], extended: [...GATEWAY_EXTENDED, 'TCPRoute'] },
  // UDPRoute: community HAProxy has no UDP load balancing (a UDP listener is refused), so GATEWAY-UDP is not claimed at all.
  { name: 'GATEWAY-UDP', core: ['Gateway', 'UDPRoute', 'ReferenceGrant'], extended: [...GATEWAY_EXTENDED, 'UDPRoute'] },
  { name: 'GATEWAY-GRPC', core: ['Gateway', 'ReferenceGrant', 'GRPCRoute'], extended: GATEWAY_EXTENDED },
]);

/**
 * What this controller supports, sorted as GatewayClass
 * `status.supportedFeatures` must be (ascending by name). Not claimed
 * although named upstream: what no translated scenario proves yet (h2c
 * HTTPRoute backends, which needs Service appProtocol read; retries; port
 * 8080; listener isolation; misdirected requests; static or empty
 * addresses; infrastructure propagation; backend client certificates;
 * BackendTLSPolicy's subjectAltNames beyond one Hostname; TLSRoute mixed
 * mode), and UDPRoute, which
 * HAProxy cannot serve.
 */
export const SUPPORTED_FEATURES: readonly string[] = Object.freeze(
  [
    'Gateway',
    'ReferenceGrant',
    'HTTPRoute',
    'HTTPRoute303RedirectStatusCode',
    'HTTPRoute307RedirectStatusCode',
    'HTTPRoute308RedirectStatusCode',
    'HTTPRouteBackendProtocolWebSocket',
    'HTTPRouteBackendRequestHeaderModification',
    'HTTPRouteBackendTimeout',
    'HTTPRouteCORS',
    'HTTPRouteHostRewrite',
    'HTTPRouteMethodMatching',
    'HTTPRouteNamedRouteRule',
    'HTTPRouteParentRefPort',
    'HTTPRoutePathRedirect',
    'HTTPRoutePathRewrite',
    'HTTPRoutePortRedirect',
    'HTTPRouteQueryParamMatching',
    'HTTPRouteRequestMirror',
    'HTTPRouteRequestMultipleMirrors',
    'HTTPRouteRequestPercentageMirror',
    'HTTPRouteRequestTimeout',
    'HTTPRouteResponseHeaderModification',
    'HTTPRouteSchemeRedirect',
    'GatewayFrontendClientCertificateValidation',
    'GatewayFrontendClientCertificateValidationInsecureFallback',
    'GRPCRoute',
    'TLSRoute',
    'TLSRouteModeTerminate',
    'TCPRoute',
    'ListenerSet',
    'BackendTLSPolicy',
  ].sort(),
);
