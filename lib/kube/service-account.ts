import { readFile } from 'node:fs/promises';

const NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace of the pod this runs in, from its service account mount; undefined outside a pod. */
export async function serviceAccountNamespace(file = NAMESPACE_FILE): Promise<string | undefined> {
  try {
    const namespace = (await readFile(file, 'utf8')).trim();
    return namespace === '' ? undefined : namespace;
  } catch {
    return undefined;
  }
}
