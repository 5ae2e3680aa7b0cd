import type { KubeConnection } from './kube-connection.ts';
import { kubeRequest, KubeRequestError } from './kube-request.ts';

/**
 * Whether the API server serves a resource, from its discovery document
 * for the group version (`/api/v1` or `/apis/<group>/<version>`, an
 * APIResourceList). A group version the server does not know answers 404:
 * the CRD is not installed. Other failures are thrown, so the caller can
 * tell "not served" from "could not ask".
 */
export async function servesResource(kubeConnection: KubeConnection, apiVersion: string, resource: string): Promise<boolean> {
  const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  try {
    const list = (await kubeRequest(kubeConnection, { method: 'GET', path })) as { resources?: readonly { name?: unknown }[] } | undefined;
    return (list?.resources ?? []).some((entry) => entry.name === resource);
  } catch (error) {
    if (error instanceof KubeRequestError && error.status === 404) return false;
    throw error;
  }
}
