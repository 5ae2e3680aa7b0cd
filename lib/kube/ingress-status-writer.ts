import type { KubeConnection } from './kube-connection.ts';
import type { IngressStatusWrite } from './ingress-status.ts';
import { kubeRequest } from './kube-request.ts';
import { objectPath } from './resource-path.ts';

/**
 * Writes one Ingress's `status.loadBalancer` through the status
 * subresource, as a merge patch: the list given replaces the one stored
 * (an empty one takes back the addresses published before).
 */
export class IngressStatusWriter {
  readonly #kubeConnection: KubeConnection;

  constructor(kubeConnection: KubeConnection) {
    this.#kubeConnection = kubeConnection;
  }

  async write({ resource, ingress, addresses }: IngressStatusWrite): Promise<void> {
    await kubeRequest(this.#kubeConnection, {
      method: 'PATCH',
      path: objectPath(resource.apiVersion, resource.resource, ingress.metadata.namespace, ingress.metadata.name, 'status'),
      body: { status: { loadBalancer: { ingress: addresses } } },
    });
  }
}
