import type { KubeObject } from '../lib/pipeline/model.ts';

/**
 * The benchmarks' cluster: Ingress i routes app-i.example.com to its own
 * Service svc-i, whose EndpointSlice has 3 ready endpoints, spread over 20
 * namespaces. Endpoint addresses are loopback (127.x.y.z): a benchmark that
 * deploys to a real HAProxy makes it health-check them, and such checks
 * must never leave the machine.
 */
export const NAMESPACES = 20;

/** One Ingress in this many carries settings (both kinds) when a world asks for them: 20%. */
export const SETTINGS_EVERY = 5;

/**
 * The annotations of Ingress i in a world with settings: every
 * SETTINGS_EVERY-th Ingress asks for backend settings (timeouts and
 * leastconn, maxconn with a health check, h2c, or cookie affinity) and
 * route settings (an allow-list, a rate limit, a request header, or CORS),
 * a few of each kind, so many routes share a policy as they would in a
 * real cluster, and their backends each have their own.
 */
export function settingsAnnotations(i: number): Record<string, string> | undefined {
  if (i % SETTINGS_EVERY !== 0) return undefined;
  const k = i / SETTINGS_EVERY;
  const backend: readonly Record<string, string>[] = [
    { 'haproxy.org/timeout-server': '45s', 'haproxy.org/timeout-connect': '3s', 'haproxy.org/load-balance': 'leastconn' },
    { 'haproxy.org/pod-maxconn': '100', 'haproxy.org/check-http': '/healthz', 'haproxy.org/check-interval': '5s' },
    { 'haproxy.org/server-proto': 'h2' },
    { 'haproxy.org/cookie-persistence': 'SRVID', 'haproxy.org/load-balance': 'source' },
  ];
  const route: readonly Record<string, string>[] = [
    { 'haproxy.org/allow-list': '10.0.0.0/8, 192.168.0.0/16' },
    { 'haproxy.org/rate-limit-requests': '100' },
    { 'haproxy.org/request-set-header': `X-Tenant tenant-${k % 7}` },
    { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-origin': 'https://app.example.com' },
  ];
  return { ...backend[k % backend.length], ...route[(k >> 2) % route.length] };
}

export function ingressObject(i: number, version = 1, settings = false): KubeObject {
  // Even versions add a second path, so alternating versions really change the routes.
  const paths = [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { name: 'http' } } } }];
  if (version % 2 === 0) paths.push({ path: '/v2', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { name: 'http' } } } });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: `app-${i}`,
      namespace: `ns-${i % NAMESPACES}`,
      uid: `uid-ingress-${i}`,
      resourceVersion: String(version),
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      ...(settings && settingsAnnotations(i) ? { annotations: settingsAnnotations(i) } : {}),
    },
    spec: {
      ingressClassName: 'haproxy',
      rules: [{ host: `app-${i}.example.com`, http: { paths } }],
    },
  };
}

export function serviceObject(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: `ns-${i % NAMESPACES}`, uid: `uid-service-${i}`, resourceVersion: '1' },
    spec: { type: 'ClusterIP', selector: { app: `app-${i}` }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

/** `version` changes the slice as an endpoint update would: a new resourceVersion and one address. */
export function endpointSliceObject(i: number, version = 1, endpoints = 3): KubeObject {
  const address = (j: number) => `127.${(i >> 8) & 255}.${i & 255}.${j + (version % 2 === 0 ? 100 : 1)}`;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `svc-${i}-abcde`,
      namespace: `ns-${i % NAMESPACES}`,
      uid: `uid-slice-${i}`,
      resourceVersion: String(version),
      labels: { 'kubernetes.io/service-name': `svc-${i}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: endpoints }, (_, j) => ({
      addresses: [address(j)],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: `ns-${i % NAMESPACES}`, name: `app-${i}-pod-${j}` },
    })),
  };
}

/** The namespace of the benchmarks' Gateway; its listener lets routes from every namespace attach. */
export const GATEWAY_NAMESPACE = 'infra';

export function gatewayClassObject(): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'haproxy', uid: 'uid-gatewayclass', resourceVersion: '1', generation: 1 },
    spec: { controllerName: 'haproxy-template-ic.io/gateway-controller' },
  };
}

/** The TLS Passthrough listener of the mixed world's Gateway, which its TLSRoutes attach to. */
export const TLS_LISTENER = Object.freeze({ name: 'tls', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'All' } } });

/** The Gateway: an HTTP listener, and for the mixed world a TLS Passthrough one too. */
export function gatewayObject(tls = false): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'web', namespace: GATEWAY_NAMESPACE, uid: 'uid-gateway', resourceVersion: '1', generation: 1 },
    spec: {
      gatewayClassName: 'haproxy',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }, ...(tls ? [TLS_LISTENER] : [])],
    },
  };
}

function routeMetadata(kind: string, i: number, version: number): KubeObject['metadata'] {
  return {
    name: `${kind}-${i}`,
    namespace: `ns-${i % NAMESPACES}`,
    uid: `uid-${kind}-${i}`,
    resourceVersion: String(version),
    generation: version,
    creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
  };
}

/**
 * GRPCRoute i: grpc-i.example.com, a service and method match, to svc-i (the
 * Service of Ingress i); `version` changes the matched service's name, a
 * match change that moves map lines alone.
 */
export function grpcRouteObject(i: number, version = 1): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GRPCRoute',
    metadata: routeMetadata('grpc', i, version),
    spec: {
      parentRefs: [{ name: 'web', namespace: GATEWAY_NAMESPACE, sectionName: 'http' }],
      hostnames: [`grpc-${i}.example.com`],
      rules: [{ matches: [{ method: { service: `shop.v${version}.Cart`, method: 'Get' } }], backendRefs: [{ name: `svc-${i}`, port: 80 }] }],
    },
  };
}

/**
 * TLSRoute i: tls-i.example.com on the TLS Passthrough listener, split by
 * weight between svc-i and another Service of its namespace; `version`
 * changes the weights, a server weight change.
 */
export function tlsRouteObject(i: number, size: number, version = 1): KubeObject {
  const other = i + NAMESPACES < size ? i + NAMESPACES : i % NAMESPACES;
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'TLSRoute',
    metadata: routeMetadata('tls', i, version),
    spec: {
      parentRefs: [{ name: 'web', namespace: GATEWAY_NAMESPACE, sectionName: 'tls' }],
      hostnames: [`tls-${i}.example.com`],
      rules: [
        {
          backendRefs: [
            { name: `svc-${i}`, port: 80, weight: 90 },
            { name: `svc-${other}`, port: 80, weight: version % 2 === 0 ? 20 : 10 },
          ],
        },
      ],
    },
  };
}

/**
 * Whether HTTPRoute i has a header match, given one route in `every` (0: none) has: never one of the
 * SETTINGS_EVERY-th, so the split backends stay as many; `version` then changes the header's value to
 * that of other routes, so the change moves map lines alone (its new condition set is rendered already).
 */
export function hasConditions(i: number, every: number): boolean {
  return every > 0 && i % every === 1;
}

/**
 * HTTPRoute i: route-i.example.com to the Service of Ingress i (svc-i,
 * already served), beside that Ingress. Every SETTINGS_EVERY-th route has a
 * request header filter (one of a few values, so policies are shared, as
 * annotations' are) and splits its traffic by weight between svc-i and the
 * next Service of its namespace (svc-(i + NAMESPACES), or the namespace's
 * first past the end of `size`), the way a canary would; `version` changes that weight, so
 * alternating versions really change the routes.
 */
export function httpRouteObject(i: number, size: number, version = 1, conditionsEvery = 0): KubeObject {
  const backend = { name: `svc-${i}`, port: 80 };
  const special = i % SETTINGS_EVERY === 0;
  const canary = i + NAMESPACES < size ? i + NAMESPACES : i % NAMESPACES;
  const rule = hasConditions(i, conditionsEvery)
    ? {
        // A header match before the plain one: the host's prefix line names a candidate list (docs/adr/0012-header-query-method-matches.md).
        matches: [
          { path: { type: 'PathPrefix', value: '/' }, headers: [{ type: 'Exact', name: 'X-Canary', value: `v${(Math.floor(i / conditionsEvery) + version) % 3}` }] },
          { path: { type: 'PathPrefix', value: '/' } },
        ],
        backendRefs: [backend],
      }
    : special
      ? {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Route', value: `team-${(i / SETTINGS_EVERY) % 5}` }] } }],
          backendRefs: [
            { ...backend, weight: 90 },
            { name: `svc-${canary}`, port: 80, weight: version % 2 === 0 ? 20 : 10 },
          ],
        }
      : {
          matches: [{ path: { type: 'PathPrefix', value: version % 2 === 0 ? '/v2' : '/' } }],
          backendRefs: [backend],
        };
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: `route-${i}`,
      namespace: `ns-${i % NAMESPACES}`,
      uid: `uid-httproute-${i}`,
      resourceVersion: String(version),
      generation: version,
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    },
    spec: {
      parentRefs: [{ name: 'web', namespace: GATEWAY_NAMESPACE }],
      hostnames: [`route-${i}.example.com`],
      rules: [rule],
    },
  };
}
