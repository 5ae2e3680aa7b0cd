import type { KubeConnection } from '../kube/kube-connection.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { generateCertificate, needsRenewal, unusableReason, type ServingCertificate } from './serving-certificate.ts';
import { KubeRequestError, kubeRequest } from '../kube/kube-request.ts';
import { collectionPath, objectPath } from '../kube/resource-path.ts';

/**
 * The webhook's serving certificate in a kubernetes.io/tls Secret
 * (`tls.crt`, `tls.key`, `ca.crt`), which every replica reads, so they all
 * serve under the one CA the API server trusts: cert-manager's, one the
 * user made, or one the controller generated into it. The controller
 * writes only a Secret that does not exist yet, and afterwards only one it
 * generated itself (marked with an annotation), to renew it.
 */

export const generatedAnnotation = 'haproxy-template-ic.io/generated-certificate';

const decode = (value: unknown) => (typeof value === 'string' && value !== '' ? Buffer.from(value, 'base64').toString('utf8') : undefined);
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The certificate a Secret holds, or why it holds none the webhook can serve with. */
export function certificateFromSecret(secret: KubeObject): ServingCertificate | { readonly problem: string } {
  const data = (secret['data'] ?? {}) as Record<string, unknown>;
  const cert = decode(data['tls.crt']);
  const key = decode(data['tls.key']);
  if (cert === undefined || key === undefined) return { problem: 'has no tls.crt and tls.key' };
  const reason = unusableReason({ cert, key });
  if (reason !== undefined) return { problem: `tls.crt and tls.key cannot serve: ${reason}` };
  return { cert, key, ca: decode(data['ca.crt']) };
}

function isGenerated(secret: KubeObject): boolean {
  return secret.metadata.annotations?.[generatedAnnotation] === 'true';
}

function secretBody(namespace: string, name: string, dnsNames: readonly string[], previous: KubeObject | undefined): KubeObject {
  const data = (previous?.['data'] ?? {}) as Record<string, unknown>;
  const caCert = decode(data['ca.crt']);
  const caKey = decode(data['ca.key']);
  const generated = generateCertificate({ dnsNames, ...(caCert && caKey ? { ca: { cert: caCert, key: caKey } } : {}) });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name,
      namespace,
      annotations: { [generatedAnnotation]: 'true' },
      ...(previous?.metadata.resourceVersion === undefined ? {} : { resourceVersion: previous.metadata.resourceVersion }),
    },
    data: { 'tls.crt': encode(generated.cert), 'tls.key': encode(generated.key), 'ca.crt': encode(generated.ca), 'ca.key': encode(generated.caKey) },
  };
}

export type CertificateWrite = 'created' | 'renewed' | 'none';

/**
 * Generates the certificate into the Secret when it does not exist, and
 * renews one this controller generated when a third of its life is left
 * (under the same CA, so the caBundle stands). Another replica doing the
 * same at the same moment makes the write fail with a conflict: its
 * certificate is then the one everybody reads.
 */
export async function provideGeneratedCertificate(
  kubeConnection: KubeConnection,
  secret: { readonly namespace: string; readonly name: string },
  stored: KubeObject | undefined,
  dnsNames: readonly string[],
  now: Date = new Date(),
): Promise<CertificateWrite> {
  const held = stored === undefined ? undefined : certificateFromSecret(stored);
  const due = stored !== undefined && isGenerated(stored) && (held === undefined || 'problem' in held || needsRenewal(held.cert, now));
  if (stored !== undefined && !due) return 'none';
  const body = secretBody(secret.namespace, secret.name, dnsNames, stored);
  try {
    if (stored === undefined) await kubeRequest(kubeConnection, { method: 'POST', path: collectionPath('v1', 'secrets', secret.namespace), body });
    else await kubeRequest(kubeConnection, { method: 'PUT', path: objectPath('v1', 'secrets', secret.namespace, secret.name), body });
  } catch (error) {
    if (error instanceof KubeRequestError && (error.status === 409 || (stored === undefined && error.reason === 'AlreadyExists'))) return 'none';
    throw error;
  }
  return stored === undefined ? 'created' : 'renewed';
}
