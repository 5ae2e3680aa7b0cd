import type { KubeConfig } from '@kubernetes/client-node';
import type { WatchedResource } from '../config/types.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { publishedAddresses, publishes } from './ingress-status.ts';
import { kubeRequest } from './kube-request.ts';
import { objectPath } from './resource-path.ts';

/** Status writes in flight at once: enough to publish thousands of Ingresses in seconds, few enough not to flood the API. */
const PARALLEL_WRITES = 8;

/** An Ingress the controller serves, and the watched resource it came from (its status path). */
export interface ServedIngress {
  readonly resource: Pick<WatchedResource, 'apiVersion' | 'resource'>;
  readonly ingress: KubeObject;
}

/**
 * Keeps `status.loadBalancer` of the Ingresses the controller serves equal
 * to the HAProxy Service's published addresses, writing only those that
 * differ (each Ingress as last seen, status included).
 */
export class IngressStatusWriter {
  readonly #kubeConfig: KubeConfig;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  /** Resolves to the number of Ingresses written. */
  async sync(served: readonly ServedIngress[], service: KubeObject | undefined): Promise<number> {
    const addresses = publishedAddresses(service);
    const stale = served.filter(({ ingress }) => !publishes(ingress, addresses));
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
