/**
 * A kubeconfig for the controller (or kubectl) under test. Plain HTTP
 * needs `insecure-skip-tls-verify: true` on the cluster: client-node
 * refuses an http:// server without it.
 */
import { writeFile } from 'node:fs/promises';

export interface KubeconfigOptions {
  readonly server: string;
  readonly token: string;
  /** The context's default namespace. */
  readonly namespace: string;
}

const KUBECONFIG_CONTEXT = 'fake-apiserver';

function kubeconfigText(options: KubeconfigOptions): string {
  return `apiVersion: v1
kind: Config
clusters:
  - name: ${KUBECONFIG_CONTEXT}
    cluster:
      server: ${JSON.stringify(options.server)}
      insecure-skip-tls-verify: true
users:
  - name: ${KUBECONFIG_CONTEXT}
    user:
      token: ${JSON.stringify(options.token)}
contexts:
  - name: ${KUBECONFIG_CONTEXT}
    context:
      cluster: ${KUBECONFIG_CONTEXT}
      user: ${KUBECONFIG_CONTEXT}
      namespace: ${JSON.stringify(options.namespace)}
current-context: ${KUBECONFIG_CONTEXT}
`;
}

/** Written owner-only: it holds the token. */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<void> {
  await writeFile(path, kubeconfigText(options), { mode: 0o600 });
}
