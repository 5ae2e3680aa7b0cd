import { formatMigrationReport, ingressSettings, isIngress, migrationReport, secretKey, type FetchedSecret } from '../annotations/migration-report.ts';
import { errorMessage } from '../error-message.ts';
import { kubeConnectionFromFile, type KubeConnection } from '../kube/kube-connection.ts';
import { kubeRequest, KubeRequestError } from '../kube/kube-request.ts';
import { readManifests } from '../kube/manifests.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { migrationNotes } from './migration-notes.ts';
import { UsageError } from './arguments.ts';
import { loadConfigFile } from './load-config-file.ts';
import type { CommandOutput } from './output.ts';

export interface AnnotationsCommandOptions {
  readonly manifests?: string | undefined;
  readonly kubeconfig?: string | undefined;
  /** Cluster only: one namespace instead of all. */
  readonly namespace?: string | undefined;
  /** The controller configuration whose ingress.className and ingress.sharedHostNamespaces the report applies; the shipped one without. */
  readonly config?: string | undefined;
}

/** A cluster that does not answer fails the command rather than hanging it. */
const REQUEST_TIMEOUT_MS = 30_000;

type ReadClaims = { readonly object: KubeObject; readonly source?: string };

/**
 * `annotations`: the migration report over a folder of manifests or a
 * cluster. Exits 0 with the report, 1 when the Ingresses cannot be read
 * (a missing folder, a broken manifest, an unreachable cluster).
 */
export async function annotationsCommand(options: AnnotationsCommandOptions, output: CommandOutput): Promise<number> {
  if ((options.manifests === undefined) === (options.kubeconfig === undefined)) throw new UsageError('annotations: give exactly one of --manifests and --kubeconfig');
  if (options.namespace !== undefined && options.kubeconfig === undefined) throw new UsageError('annotations: --namespace is for --kubeconfig');
  const loaded = await loadConfigFile(options.config);
  if (!loaded.ok) {
    for (const error of loaded.errors) output.err(`error: ${error}\n`);
    return 1;
  }
  const read = options.manifests !== undefined ? await fromManifests(options.manifests) : await fromCluster(options.kubeconfig!, options.namespace);
  if ('errors' in read) {
    for (const error of read.errors) output.err(`error: ${error}\n`);
    return 1;
  }
  const notes = migrationNotes(
    read.ingresses.map((ingress) => ingress.object),
    loaded.config.ingress,
  );
  output.out(formatMigrationReport(migrationReport(read.ingresses, read.secrets, notes)));
  return 0;
}

type Read = { readonly ingresses: readonly ReadClaims[]; readonly secrets: ReadonlyMap<string, FetchedSecret> } | { readonly errors: readonly string[] };

async function fromManifests(dir: string): Promise<Read> {
  const read = await readManifests(dir).catch((error: unknown) => ({
    manifests: [],
    errors: [`${dir}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : errorMessage(error)}`],
  }));
  if (read.errors.length > 0) return { errors: read.errors };
  const secrets = new Map<string, FetchedSecret>();
  for (const { object } of read.manifests) {
    if (object.kind === 'Secret') secrets.set(`${object.metadata.namespace ?? 'default'}/${object.metadata.name}`, { data: object['data'] as Record<string, string> | undefined });
  }
  const ingresses = read.manifests.filter((manifest) => isIngress(manifest.object));
  for (const ingress of ingresses) {
    const secret = ingressSettings(ingress.object).route.basicAuth?.secret;
    if (secret !== undefined && !secrets.has(secretKey(secret))) secrets.set(secretKey(secret), { problem: `not found in ${dir}` });
  }
  return { ingresses, secrets };
}

async function fromCluster(file: string, namespace: string | undefined): Promise<Read> {
  let kubeConnection: KubeConnection;
  try {
    kubeConnection = kubeConnectionFromFile(file);
  } catch (error) {
    return { errors: [`--kubeconfig ${file}: ${errorMessage(error)}`] };
  }
  try {
    const ingresses = await listIngresses(kubeConnection, namespace);
    const secrets = new Map<string, FetchedSecret>();
    for (const { object } of ingresses) {
      const secret = ingressSettings(object).route.basicAuth?.secret;
      if (secret === undefined || secrets.has(secretKey(secret))) continue;
      secrets.set(secretKey(secret), await fetchSecret(kubeConnection, secret.namespace, secret.name));
    }
    return { ingresses, secrets };
  } catch (error) {
    return { errors: [`${kubeConnection.server}: ${errorMessage(error)}`] };
  }
}

/** Every Ingress, a page at a time as kubectl lists them. */
async function listIngresses(kubeConnection: KubeConnection, namespace: string | undefined): Promise<ReadClaims[]> {
  const path = namespace === undefined ? '/apis/networking.k8s.io/v1/ingresses' : `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/ingresses`;
  const ingresses: ReadClaims[] = [];
  let page: string | undefined;
  do {
    const list = (await kubeRequest(kubeConnection, { method: 'GET', path, query: { limit: '500', continue: page }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })) as {
      items?: KubeObject[];
      metadata?: { continue?: string };
    };
    // LIST items of built-in types carry no kind.
    ingresses.push(...(list.items ?? []).map((item) => ({ object: { ...item, kind: 'Ingress' } })));
    page = list.metadata?.continue || undefined;
  } while (page !== undefined);
  return ingresses;
}

/** A Secret's data, or why it could not be read: a missing or forbidden Secret is the report's to show, not a failure of the command. */
async function fetchSecret(kubeConnection: KubeConnection, namespace: string, name: string): Promise<FetchedSecret> {
  try {
    const secret = (await kubeRequest(kubeConnection, {
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })) as KubeObject;
    return { data: secret['data'] as Record<string, string> | undefined };
  } catch (error) {
    if (error instanceof KubeRequestError && (error.status === 404 || error.status === 403)) return { problem: error.status === 404 ? 'not found' : 'not readable (forbidden)' };
    throw error;
  }
}
