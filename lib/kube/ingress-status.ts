import type { WatchedResource } from '../config/types.ts';
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
  const stored = (ingress['status'] as ServiceShape['status'])?.loadBalancer?.ingress ?? [];
  // Most Ingresses publish what they should: told apart without a copy when the entries are the same, in order.
  if (stored.length !== addresses.length) return false;
  if (stored.every((entry, i) => (entry.ip || undefined) === addresses[i]!.ip && (entry.hostname || undefined) === addresses[i]!.hostname)) return true;
  const current = stored.map((entry) => ({ ...(entry.ip ? { ip: entry.ip } : {}), ...(entry.hostname ? { hostname: entry.hostname } : {}) }));
  return JSON.stringify(sorted(current)) === JSON.stringify(addresses);
}

/** An Ingress of the served class, as stored now, with the watched resource it came from (its status path). */
export interface IngressOfClass {
  readonly resource: Pick<WatchedResource, 'apiVersion' | 'resource'>;
  readonly ingress: KubeObject;
  /** Whether the render served it: one the map model left out whole (lib/map-model/aggregate.ts unserved) publishes no address. */
  readonly served: boolean;
}

/** One Ingress's status.loadBalancer.ingress to write: the object as stored when it was found to differ. */
export interface IngressStatusWrite {
  readonly resource: IngressOfClass['resource'];
  readonly ingress: KubeObject;
  readonly addresses: readonly LoadBalancerIngress[];
}

const NO_ADDRESSES: readonly LoadBalancerIngress[] = Object.freeze([]);

/**
 * The writes that bring each Ingress's published addresses to what the
 * render decided: the HAProxy Service's for one served, none for one left
 * out (the addresses it published while served are taken back). Only those
 * whose stored status differs: after a render that changed one Ingress, at
 * most that one; after the addresses changed, every one served.
 */
export function loadBalancerWrites(ingresses: readonly IngressOfClass[], addresses: readonly LoadBalancerIngress[], written?: WrittenStatus): IngressStatusWrite[] {
  const writes: IngressStatusWrite[] = [];
  for (const { resource, ingress, served } of ingresses) {
    const wanted = served ? addresses : NO_ADDRESSES;
    if (!publishes(ingress, wanted) && !written?.wrote(ingress, wanted)) writes.push({ resource, ingress, addresses: wanted });
  }
  return writes;
}

/**
 * The addresses written on Ingresses whose write has yet to come back: the
 * store holds an Ingress as it was until the watch brings the written one,
 * and a round of writes in between would write it again. Keyed by the
 * object as stored when written, weakly: the stored one replaced, its
 * entry goes with it.
 */
export class WrittenStatus {
  readonly #written = new WeakMap<KubeObject, readonly LoadBalancerIngress[]>();

  /** A write of these addresses on this object, as stored, succeeded. */
  add({ ingress, addresses }: IngressStatusWrite): void {
    this.#written.set(ingress, addresses);
  }

  /** Whether these very addresses were written on this object as stored. */
  wrote(ingress: KubeObject, addresses: readonly LoadBalancerIngress[]): boolean {
    const written = this.#written.get(ingress);
    return written !== undefined && JSON.stringify(written) === JSON.stringify(addresses);
  }
}
