import type { KubeConfig } from '@kubernetes/client-node';
import type { WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { publishedAddresses, publishes } from './ingress-status.ts';
import { kubeRequest } from './kube-request.ts';
import { ingressClassOf } from '../kube-syntax/ingress-class.ts';
import { objectPath } from './resource-path.ts';

/** Status writes in flight at once: enough to publish thousands of Ingresses in seconds, few enough not to flood the API. */
const PARALLEL_WRITES = 8;

/**
 * Keeps `status.loadBalancer` of the Ingresses the controller serves equal
 * to the HAProxy Service's published addresses, writing only those that
 * differ (the store holds each Ingress as last seen, status included).
 */
export class IngressStatusWriter {
  readonly #kubeConfig: KubeConfig;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  /** Resolves to the number of Ingresses written. */
  async sync(stores: ReadonlyMap<string, StoreReader>, resources: readonly WatchedResource[], className: string, service: KubeObject | undefined): Promise<number> {
    const addresses = publishedAddresses(service);
    const stale: { readonly resource: WatchedResource; readonly ingress: KubeObject }[] = [];
    for (const resource of resources) {
      if (resource.kind !== 'Ingress') continue;
      for (const ingress of stores.get(resource.name)?.list() ?? []) {
        if (ingressClassOf(ingress) === className && !publishes(ingress, addresses)) stale.push({ resource, ingress });
      }
    }
    let next = 0;
    const worker = async () => {
      while (next < stale.length) {
        const { resource, ingress } = stale[next++]!;
        await kubeRequest(this.#kubeConfig, {
          method: 'PATCH',
          path: objectPath(resource.apiVersion, resource.resource, ingress.metadata.namespace, ingress.metadata.name, 'status'),
          body: { status: { loadBalancer: { ingress: addresses } } },
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_WRITES, stale.length) }, worker));
    return stale.length;
  }
}
