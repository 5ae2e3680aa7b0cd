import type { KubeConnection } from './kube-connection.ts';
import { KubeRequestError, kubeRequest } from './kube-request.ts';
import { objectPath } from './resource-path.ts';

/**
 * Keeps the caBundle of every webhook of a ValidatingWebhookConfiguration
 * equal to the CA the webhook's certificate is signed by, so the API server
 * can verify it (for cert-manager's certificates its CA injector does this
 * instead). Written with the resourceVersion read: a conflict with another
 * writer (another replica, a Helm upgrade) reads again and retries.
 */

const apiVersion = 'admissionregistration.k8s.io/v1';
const resource = 'validatingwebhookconfigurations';
const attempts = 3;

export type CaBundleSync = 'patched' | 'unchanged' | 'missing';

interface Configuration {
  readonly metadata: { readonly resourceVersion?: string };
  readonly webhooks?: readonly { readonly clientConfig?: { readonly caBundle?: string } }[];
}

export async function syncCaBundle(kubeConnection: KubeConnection, name: string, caPem: string): Promise<CaBundleSync> {
  const caBundle = Buffer.from(caPem, 'utf8').toString('base64');
  const path = objectPath(apiVersion, resource, undefined, name);
  for (let attempt = 1; ; attempt++) {
    let current: Configuration;
    try {
      current = (await kubeRequest(kubeConnection, { method: 'GET', path })) as Configuration;
    } catch (error) {
      if (error instanceof KubeRequestError && error.status === 404) return 'missing';
      throw error;
    }
    const webhooks = current.webhooks ?? [];
    if (webhooks.every((webhook) => webhook.clientConfig?.caBundle === caBundle)) return 'unchanged';
    const body = { ...current, webhooks: webhooks.map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } })) };
    try {
      await kubeRequest(kubeConnection, { method: 'PUT', path, body });
      return 'patched';
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 409) || attempt >= attempts) throw error;
    }
  }
}
