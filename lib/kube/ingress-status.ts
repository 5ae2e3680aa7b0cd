import type { KubeObject } from '../pipeline/model.ts';

/** One entry of `status.loadBalancer.ingress`. */
export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
}

interface ServiceShape {
  readonly spec?: { readonly type?: string; readonly clusterIP?: string; readonly externalIPs?: readonly string[] };
  readonly status?: { readonly loadBalancer?: { readonly ingress?: readonly LoadBalancerIngress[] } };
}

/**
 * The addresses Ingresses should publish, from the HAProxy Service: its
 * load balancer's addresses once the cloud assigned them, else its external
 * IPs, else its cluster IP (a headless Service has none to publish).
 */
export function publishedAddresses(service: KubeObject | undefined): readonly LoadBalancerIngress[] {
  if (service === undefined) return [];
  const { spec, status } = service as unknown as ServiceShape;
  const balancer = (status?.loadBalancer?.ingress ?? [])
    .map((entry) => ({ ...(entry.ip ? { ip: entry.ip } : {}), ...(entry.hostname ? { hostname: entry.hostname } : {}) }))
    .filter((entry) => entry.ip !== undefined || entry.hostname !== undefined);
  if (balancer.length > 0) return sorted(balancer);
  if (spec?.externalIPs && spec.externalIPs.length > 0) return sorted(spec.externalIPs.map((ip) => ({ ip })));
  if (spec?.clusterIP && spec.clusterIP !== 'None') return [{ ip: spec.clusterIP }];
  return [];
}

function sorted(entries: readonly LoadBalancerIngress[]): readonly LoadBalancerIngress[] {
  const key = (entry: LoadBalancerIngress) => `${entry.ip ?? ''}/${entry.hostname ?? ''}`;
  return entries.toSorted((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Whether the Ingress already publishes exactly these addresses (ports and errors aside), so no write is needed. */
export function publishes(ingress: KubeObject, addresses: readonly LoadBalancerIngress[]): boolean {
  const current = ((ingress['status'] as ServiceShape['status'])?.loadBalancer?.ingress ?? []).map((entry) => ({
    ...(entry.ip ? { ip: entry.ip } : {}),
    ...(entry.hostname ? { hostname: entry.hostname } : {}),
  }));
  return JSON.stringify(sorted(current)) === JSON.stringify(addresses);
}
