import type { KubeConfig } from '@kubernetes/client-node';
import type { IngressStatusWrite } from './ingress-status.ts';
import { kubeRequest } from './kube-request.ts';
import { objectPath } from './resource-path.ts';

/**
 * Writes one Ingress's `status.loadBalancer` through the status
 * subresource, as a merge patch: the list given replaces the one stored
 * (an empty one takes back the addresses published before).
 */
export class IngressStatusWriter {
  readonly #kubeConfig: KubeConfig;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  async write({ resource, ingress, addresses }: IngressStatusWrite): Promise<void> {
    await kubeRequest(this.#kubeConfig, {
      method: 'PATCH',
      path: objectPath(resource.apiVersion, resource.resource, ingress.metadata.namespace, ingress.metadata.name, 'status'),
      body: { status: { loadBalancer: { ingress: addresses } } },
    });
  }
}
