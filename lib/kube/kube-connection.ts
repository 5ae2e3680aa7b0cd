import { spawn } from 'node:child_process';
import { accessSync, readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIPv6 } from 'node:net';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { systemClock, type Clock } from '../clock.ts';
import { errorMessage } from '../error-message.ts';

/**
 * The API server and how to reach it, read from a kubeconfig or a pod's
 * service account: what @kubernetes/client-node's KubeConfig gave the
 * controller (the same files, the same fields, the same order of places to
 * look), without it. Loading client-node at all loads its generated API
 * (every API group, some 16 MiB of module source), about 80 MiB of the
 * controller's resident memory before any object.
 */

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * How often a token file is read again: a projected service account token
 * is rotated on disk, and the old one expires (client-go re-reads it every
 * minute too, as client-node's FileAuth does).
 */
const TOKEN_FILE_REREAD_MS = 60_000;

/** kubectl's idle connection keep-alive probe (client-node: 30 s, matching client-go). */
const KEEP_ALIVE_MS = 30_000;

interface Cluster {
  readonly server: string;
  readonly ca: Buffer | undefined;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName: string | undefined;
}

interface ExecConfig {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
}

interface User {
  readonly token: string | undefined;
  /** Read again every minute (the service account's projected token). */
  readonly tokenFile: string | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly impersonate: string | undefined;
  readonly exec: ExecConfig | undefined;
}

/** What one request carries: headers (credentials) and the agent (TLS, client certificate). */
export interface KubeAuthorisation {
  readonly headers: Record<string, string>;
  readonly agent: HttpAgent;
}

/** An ExecCredential's status (client.authentication.k8s.io), as a credential plugin prints it. */
interface ExecStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  readonly expirationTimestamp?: string;
}

/** One cluster and one user of a kubeconfig (its current context), or the pod's service account. */
export class KubeConnection {
  readonly server: string;
  /** The current context's namespace (the pod's own in a cluster). */
  readonly namespace: string | undefined;
  readonly #cluster: Cluster;
  readonly #user: User;
  readonly #clock: Clock;
  readonly #agents = new Map<string, HttpAgent>();
  #token: { readonly value: string; readonly readAt: number } | undefined;
  #exec: ExecStatus | undefined;

  constructor(cluster: Cluster, user: User, namespace: string | undefined, clock: Clock = systemClock) {
    if (cluster.server.startsWith('http:') && !cluster.insecureSkipTlsVerify) {
      // client-node's rule (config.js createDispatcherOptions): credentials do not go out in clear text unless the kubeconfig says so.
      throw new Error(`server ${cluster.server}: plain HTTP needs insecure-skip-tls-verify: true`);
    }
    this.server = cluster.server.replace(/\/+$/, '');
    this.namespace = namespace;
    this.#cluster = cluster;
    this.#user = user;
    this.#clock = clock;
  }

  /** Headers and agent for the next request: a rotated token file is read again, an expired exec credential fetched again. */
  async authorise(): Promise<KubeAuthorisation> {
    const user = this.#user;
    const headers: Record<string, string> = {};
    let cert = user.cert;
    let key = user.key;
    if (user.username !== undefined) headers['authorization'] = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    if (user.tokenFile !== undefined) headers['authorization'] = `Bearer ${this.#tokenFromFile(user.tokenFile)}`;
    if (user.exec !== undefined) {
      const status = await this.#execCredential(user.exec);
      if (status.clientCertificateData) cert = Buffer.from(status.clientCertificateData);
      if (status.clientKeyData) key = Buffer.from(status.clientKeyData);
      if (status.token) headers['authorization'] = `Bearer ${status.token}`;
    }
    if (user.token !== undefined) headers['authorization'] = `Bearer ${user.token}`;
    if (user.impersonate !== undefined) headers['impersonate-user'] = user.impersonate;
    return { headers, agent: this.#agent(cert, key) };
  }

  /** One keep-alive agent per client certificate (an exec plugin may hand out a new one). */
  #agent(cert: Buffer | undefined, key: Buffer | undefined): HttpAgent {
    const id = `${cert?.toString('base64') ?? ''}/${key?.toString('base64') ?? ''}`;
    let agent = this.#agents.get(id);
    if (agent !== undefined) return agent;
    const cluster = this.#cluster;
    if (this.server.startsWith('http:')) agent = new HttpAgent({ keepAlive: true, keepAliveMsecs: KEEP_ALIVE_MS });
    else {
      agent = new HttpsAgent({
        keepAlive: true,
        keepAliveMsecs: KEEP_ALIVE_MS,
        ...(cluster.ca !== undefined ? { ca: cluster.ca } : {}),
        ...(cert !== undefined ? { cert } : {}),
        ...(key !== undefined ? { key } : {}),
        // Set only when the kubeconfig says so: otherwise NODE_TLS_REJECT_UNAUTHORIZED decides, as it did with client-node.
        ...(cluster.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
        ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
      });
    }
    // Only the newest certificate's agent is kept; requests still on an older one finish there.
    this.#agents.clear();
    this.#agents.set(id, agent);
    return agent;
  }

  #tokenFromFile(file: string): string {
    const now = this.#clock.now();
    if (this.#token === undefined || now - this.#token.readAt > TOKEN_FILE_REREAD_MS) this.#token = { value: readFileSync(file, 'utf8').trim(), readAt: now };
    return this.#token.value;
  }

  /** The plugin's credential, kept until it expires (as client-node's ExecAuth keeps it). */
  async #execCredential(exec: ExecConfig): Promise<ExecStatus> {
    const kept = this.#exec;
    if (kept !== undefined && (kept.expirationTimestamp === undefined || Date.parse(kept.expirationTimestamp) > Date.now())) return kept;
    this.#exec = undefined;
    const env = exec.env === undefined ? process.env : { ...process.env, ...Object.fromEntries(exec.env.map((entry) => [entry.name, entry.value])) };
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(exec.command, [...(exec.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data));
      child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exec credential plugin ${exec.command} exited ${code}: ${stderr.trim()}`))));
    });
    let status: ExecStatus | undefined;
    try {
      status = (JSON.parse(output) as { status?: ExecStatus }).status;
    } catch (error) {
      throw new Error(`exec credential plugin ${exec.command}: not an ExecCredential: ${errorMessage(error)}`, { cause: error });
    }
    if (status === undefined) throw new Error(`exec credential plugin ${exec.command}: the ExecCredential has no status`);
    this.#exec = status;
    return status;
  }
}

type Entry = Record<string, unknown>;

function named(list: unknown, kind: string, name: string | undefined): Entry | undefined {
  if (name === undefined) return undefined;
  const found = (Array.isArray(list) ? (list as Entry[]) : []).find((entry) => entry?.['name'] === name);
  if (found === undefined) throw new Error(`the kubeconfig has no ${kind} named ${name}`);
  return (found[kind] as Entry | undefined) ?? {};
}

function text(entry: Entry | undefined, field: string): string | undefined {
  const value = entry?.[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`${field} must be a string`);
  return value;
}

function bytes(entry: Entry | undefined, fileField: string, dataField: string, directory: string): Buffer | undefined {
  const file = text(entry, fileField);
  if (file !== undefined) return readFileSync(isAbsolute(file) ? file : join(directory, file));
  const data = text(entry, dataField);
  return data === undefined ? undefined : Buffer.from(data, 'base64');
}

/** A kubeconfig as one document: several files merge as kubectl merges them (the first file naming a context, cluster or user wins). */
interface Kubeconfig {
  readonly currentContext: string | undefined;
  readonly contexts: Entry[];
  readonly clusters: Entry[];
  readonly users: Entry[];
  /** Where each cluster's and user's relative paths start. */
  readonly directories: Map<Entry, string>;
}

function readKubeconfig(file: string): Kubeconfig {
  const document = (load(readFileSync(file, 'utf8')) ?? {}) as Entry;
  const list = (field: string) => (Array.isArray(document[field]) ? (document[field] as Entry[]) : []);
  const directories = new Map<Entry, string>();
  for (const entry of [...list('clusters'), ...list('users')]) directories.set(entry, dirname(file));
  return { currentContext: text(document, 'current-context'), contexts: list('contexts'), clusters: list('clusters'), users: list('users'), directories };
}

function merged(files: readonly string[]): Kubeconfig {
  const configs = files.map(readKubeconfig);
  const first = <T extends Entry>(lists: T[][]): T[] => {
    const seen = new Set<unknown>();
    return lists.flat().filter((entry) => !seen.has(entry['name']) && seen.add(entry['name']));
  };
  return {
    currentContext: configs.find((config) => config.currentContext !== undefined)?.currentContext,
    contexts: first(configs.map((config) => config.contexts)),
    clusters: first(configs.map((config) => config.clusters)),
    users: first(configs.map((config) => config.users)),
    directories: new Map(configs.flatMap((config) => [...config.directories])),
  };
}

/** The current context's cluster and user; kubeconfig settings this client does not speak are refused by name, not ignored. */
function connectionOf(config: Kubeconfig, clock: Clock | undefined): KubeConnection {
  if (config.currentContext === undefined) throw new Error('the kubeconfig has no current-context');
  const context = named(config.contexts, 'context', config.currentContext);
  const clusterName = text(context, 'cluster');
  if (clusterName === undefined) throw new Error(`context ${config.currentContext} names no cluster`);
  const clusterEntry = config.clusters.find((entry) => entry['name'] === clusterName);
  const cluster = named(config.clusters, 'cluster', clusterName)!;
  const userName = text(context, 'user');
  const userEntry = config.users.find((entry) => entry['name'] === userName);
  const user = named(config.users, 'user', userName);
  const server = text(cluster, 'server');
  if (server === undefined) throw new Error(`cluster ${clusterName} has no server`);
  if (text(cluster, 'proxy-url') !== undefined) throw new Error(`cluster ${clusterName}: proxy-url is not supported`);
  if (user?.['auth-provider'] !== undefined) throw new Error(`user ${userName}: auth-provider is not supported (use an exec credential plugin)`);
  const clusterDirectory = (clusterEntry && config.directories.get(clusterEntry)) ?? '';
  const userDirectory = (userEntry && config.directories.get(userEntry)) ?? '';
  const exec = user?.['exec'] as ExecConfig | undefined;
  if (exec !== undefined && typeof exec.command !== 'string') throw new Error(`user ${userName}: exec has no command`);
  const tokenFile = text(user, 'token-file');
  return new KubeConnection(
    {
      server,
      ca: bytes(cluster, 'certificate-authority', 'certificate-authority-data', clusterDirectory),
      insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: text(cluster, 'tls-server-name'),
    },
    {
      // A kubeconfig's token-file is read once, as client-node reads it.
      token: text(user, 'token') ?? (tokenFile === undefined ? undefined : readFileSync(isAbsolute(tokenFile) ? tokenFile : join(userDirectory, tokenFile), 'utf8')),
      tokenFile: undefined,
      cert: bytes(user, 'client-certificate', 'client-certificate-data', userDirectory),
      key: bytes(user, 'client-key', 'client-key-data', userDirectory),
      username: text(user, 'username'),
      password: text(user, 'password'),
      impersonate: text(user, 'as'),
      exec,
    },
    text(context, 'namespace'),
    clock,
  );
}

/** One kubeconfig file (`--kubeconfig`). Errors name what is wrong; the caller names the file. */
export function kubeConnectionFromFile(file: string, clock?: Clock): KubeConnection {
  return connectionOf(merged([file]), clock);
}

/**
 * The pod's service account: the API server from KUBERNETES_SERVICE_HOST and
 * _PORT, the CA and the token (read again every minute) from its mount.
 */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, root = SERVICE_ACCOUNT, clock?: Clock): KubeConnection {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  // client-node's rule (config.js loadFromCluster): these ports are plain HTTP.
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  let namespace: string | undefined;
  try {
    namespace = readFileSync(`${root}/namespace`, 'utf8');
  } catch {
    namespace = undefined;
  }
  return new KubeConnection(
    { server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`, ca: readFileSync(`${root}/ca.crt`), insecureSkipTlsVerify: false, tlsServerName: undefined },
    { token: undefined, tokenFile: `${root}/token`, cert: undefined, key: undefined, username: undefined, password: undefined, impersonate: undefined, exec: undefined },
    namespace,
    clock,
  );
}

function exists(file: string): boolean {
  try {
    accessSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where kubectl and client-node look, in their order: the files of
 * KUBECONFIG, merged; ~/.kube/config; the pod's service account;
 * http://localhost:8080 (which then refuses plain HTTP without
 * insecure-skip-tls-verify, as client-node did).
 */
export function defaultKubeConnection(env: NodeJS.ProcessEnv = process.env, serviceAccount = SERVICE_ACCOUNT): KubeConnection {
  const files = (env['KUBECONFIG'] ?? '').split(delimiter).filter(Boolean);
  if (files.length > 0) return connectionOf(merged(files), undefined);
  const home = env['HOME'];
  if (home !== undefined && exists(join(home, '.kube', 'config'))) return kubeConnectionFromFile(join(home, '.kube', 'config'));
  if (exists(`${serviceAccount}/token`)) return inClusterConnection(env, serviceAccount);
  return new KubeConnection(
    { server: 'http://localhost:8080', ca: undefined, insecureSkipTlsVerify: false, tlsServerName: undefined },
    { token: undefined, tokenFile: undefined, cert: undefined, key: undefined, username: undefined, password: undefined, impersonate: undefined, exec: undefined },
    undefined,
  );
}
