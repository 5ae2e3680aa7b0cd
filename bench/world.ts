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
