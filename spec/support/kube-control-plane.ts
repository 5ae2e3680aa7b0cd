import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { kubeTool } from './kube-tools.ts';
import { reservePort } from './ports.ts';

/**
 * A real Kubernetes control plane for specs, as controller-runtime's envtest
 * starts one (pkg/internal/testing/controlplane): etcd and kube-apiserver on
 * loopback ports, RBAC on, the ServiceAccount admission plugin off (no
 * controller-manager makes the default ServiceAccounts), users from a static
 * token file, and the serving certificate the API server writes itself into
 * its --cert-dir. Beyond envtest: an audit log of every request (metadata
 * only: no bodies, so no Secret data), webhooks reached through their
 * Service's EndpointSlices (--enable-aggregator-routing, as no Service
 * network exists here), and the Gateway API CRDs applied with kubectl so
 * their own CEL validation runs.
 *
 * The binaries come from .ci/build-kube-peers (pinned versions, cached):
 * a spec that needs them runs it, and fails with its error when it cannot build.
 *
 *   const plane = await startControlPlane({ serviceAccounts: [{ namespace: 'ingress', name: 'edge' }] });
 *   await plane.kubectl('apply', '-f', file);                     // as a system:masters admin
 *   plane.kubeconfigFor({ namespace: 'ingress', name: 'edge' })   // that ServiceAccount's token, RBAC applies
 *   await plane.stop();
 *
 * No kube-controller-manager and no scheduler run: Pods stay unscheduled
 * (specs write their status), namespaces are not emptied on deletion,
 * nothing is garbage collected.
 */

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const buildScript = join(projectRoot, '.ci', 'build-kube-peers');

export interface KubePeer {
  readonly version: string;
  readonly path: string;
}

export interface KubePeers {
  readonly apiserver: KubePeer;
  readonly etcd: KubePeer;
  readonly gatewayApiCrds: KubePeer;
}

let built: Promise<KubePeers> | undefined;

/** The pinned peers, built on the first call of a run when the cache lacks them (minutes, cold). */
export function kubePeers(): Promise<KubePeers> {
  built ??= new Promise((resolve, reject) => {
    execFile('bash', [buildScript], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${buildScript} failed: the real-apiserver specs need kube-apiserver and etcd\n${stderr}`));
      // Lines `NAME VERSION PATH`.
      const found = new Map(stdout.split('\n').flatMap((line) => (/^\S+ \S+ \S+$/.test(line) ? [[line.split(' ')[0]!, line.split(' ')] as const] : [])));
      const peer = (name: string): KubePeer => {
        const [, version, path] = found.get(name) ?? [];
        if (version === undefined || path === undefined) throw new Error(`${buildScript} printed no line for ${name}:\n${stdout}`);
        return { version, path };
      };
      try {
        resolve({ apiserver: peer('kube-apiserver'), etcd: peer('etcd'), gatewayApiCrds: peer('gateway-api-crds') });
      } catch (failure) {
        reject(failure);
      }
    });
  });
  return built;
}

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

export interface ControlPlaneOptions {
  /** ServiceAccounts given a token (authenticated as the ServiceAccount, with its groups). */
  readonly serviceAccounts?: readonly ServiceAccountRef[];
  /** Installs the Gateway API standard-channel CRDs and waits until they are established. */
  readonly gatewayApiCrds?: boolean;
  /**
   * The cluster network, for the API server's calls to webhooks (the egress selector's "cluster"
   * traffic): maps a pod address and port, as an EndpointSlice names them, to where on loopback it is
   * served; undefined refuses the connection. The API server refuses loopback addresses in
   * EndpointSlices, so pods have addresses of their own that only this map resolves.
   */
  readonly clusterNetwork?: (host: string, port: number) => { readonly host: string; readonly port: number } | undefined;
}

/** One request as the audit log records it at the Metadata level. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly user: { readonly username: string };
  readonly objectRef?: { readonly resource?: string; readonly subresource?: string; readonly namespace?: string; readonly name?: string; readonly apiGroup?: string };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
}

/** A ServiceAccount's own connection to the API server, which a spec can cut as a network partition would. */
export interface ApiServerLink {
  /** The ServiceAccount's kubeconfig, through this link. */
  readonly kubeconfig: string;
  /** Resets every open connection and refuses new ones until restored. */
  cut(): void;
  restore(): void;
}

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
`;

const serviceAccountUser = (account: ServiceAccountRef) => `system:serviceaccount:${account.namespace}:${account.name}`;

/** A kubeconfig verifying the API server with its CA, authenticating with a bearer token. */
function kubeconfigText(server: string, caFile: string, token: string): string {
  return `apiVersion: v1
kind: Config
clusters:
  - name: real-apiserver
    cluster: { server: ${JSON.stringify(server)}, certificate-authority: ${JSON.stringify(caFile)} }
users:
  - name: real-apiserver
    user: { token: ${JSON.stringify(token)} }
contexts:
  - name: real-apiserver
    context: { cluster: real-apiserver, user: real-apiserver, namespace: default }
current-context: real-apiserver
`;
}

/** Children still running: killed when the spec process exits however it ends, so no API server outlives its run. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A child process whose output goes to a file, and which must not end before it is stopped. */
class Peer {
  readonly #name: string;
  readonly #log: string;
  #child: ChildProcess | undefined;
  #exit: Promise<void> = Promise.resolve();
  #stopping = false;
  /** Set when the process ended by itself: specs waiting for readiness fail with it. */
  failure: Error | undefined;

  constructor(name: string, log: string) {
    this.#name = name;
    this.#log = log;
  }

  start(path: string, args: readonly string[]): void {
    this.#stopping = false;
    this.failure = undefined;
    const out = createWriteStream(this.#log, { flags: 'a' });
    const child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    this.#child = child;
    running.add(child);
    this.#exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        if (!this.#stopping) this.failure = new Error(`${this.#name} exited (${code ?? signal}) unasked; its log ${this.#log} ends:\n${this.tail()}`);
        out.end();
        resolve();
      });
    });
    child.once('error', (error) => (this.failure = new Error(`${this.#name} could not start from ${path}: ${error.message}`)));
  }

  tail(lines = 30): string {
    return existsSync(this.#log) ? readFileSync(this.#log, 'utf8').split('\n').slice(-lines).join('\n') : '';
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.#stopping = true;
    child.kill('SIGTERM');
    const ended = await Promise.race([this.#exit.then(() => true), delay(20_000).then(() => false)]);
    if (!ended) {
      child.kill('SIGKILL');
      await this.#exit;
    }
  }
}

/** Polls `ready` until it answers true; fails with the peer's own failure when it exits first. */
async function waitReady(peer: Peer, what: string, ready: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (peer.failure) throw peer.failure;
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms; its log ends:\n${peer.tail()}`);
    await delay(100);
  }
}

/**
 * An HTTP CONNECT proxy standing as the cluster network: the API server's egress selector
 * (k8s.io/apiserver pkg/server/egressselector/egress_selector.go, tunnelHTTPConnect) sends
 * `CONNECT host:port` and expects 200 before the tunnelled bytes, as konnectivity answers. On a Unix
 * socket: over TCP, 1.34 insists on TLS to the proxy (getTLSConfig dereferences the absent tlsConfig
 * of an http:// URL, which its validation lets through, and the API server panics at start).
 */
async function startClusterNetwork(resolve: NonNullable<ControlPlaneOptions['clusterNetwork']>, socket: string): Promise<{ close(): Promise<void> }> {
  const server = createServer((_request, response) => response.writeHead(405).end());
  const tunnels = new Set<Duplex>();
  server.on('connect', (tunnel: IncomingMessage, client: Duplex, head: Buffer) => {
    tunnels.add(client);
    client.once('close', () => tunnels.delete(client));
    const [host = '', portText = ''] = (tunnel.url ?? '').split(':');
    const target = resolve(host, Number(portText));
    if (target === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolveListen());
  });
  return {
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const tunnel of tunnels) tunnel.destroy();
        server.close(() => resolveClose());
      }),
  };
}

async function etcdPost(url: string, path: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`etcd ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

export class ControlPlane {
  readonly peers: KubePeers;
  readonly url: string;
  readonly dir: string;
  readonly adminKubeconfig: string;
  readonly #etcd: Peer;
  readonly #apiserver: Peer;
  readonly #etcdUrl: string;
  readonly #apiserverArgs: readonly string[];
  readonly #kubeconfigs: ReadonlyMap<string, string>;
  readonly #auditLog: string;
  readonly #caFile: string;
  readonly #adminToken: string;
  #clusterNetwork: { close(): Promise<void> } | undefined;
  readonly #links: TcpServer[] = [];

  private constructor(init: {
    peers: KubePeers;
    url: string;
    dir: string;
    etcd: Peer;
    apiserver: Peer;
    etcdUrl: string;
    apiserverArgs: readonly string[];
    kubeconfigs: ReadonlyMap<string, string>;
    adminToken: string;
  }) {
    this.peers = init.peers;
    this.url = init.url;
    this.dir = init.dir;
    this.#etcd = init.etcd;
    this.#apiserver = init.apiserver;
    this.#etcdUrl = init.etcdUrl;
    this.#apiserverArgs = init.apiserverArgs;
    this.#kubeconfigs = init.kubeconfigs;
    this.#adminToken = init.adminToken;
    this.adminKubeconfig = join(init.dir, 'admin.kubeconfig');
    this.#auditLog = join(init.dir, 'audit.log');
    this.#caFile = join(init.dir, 'certs', 'apiserver.crt');
  }

  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const peers = await kubePeers();
    const dir = await mkdtemp(join(tmpdir(), 'kube-control-plane-'));
    const etcdUrl = `http://127.0.0.1:${await reservePort()}`;
    const peerUrl = `http://127.0.0.1:${await reservePort()}`;
    const port = await reservePort();
    const url = `https://127.0.0.1:${port}`;

    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    await writeFile(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await writeFile(join(dir, 'audit-policy.yaml'), AUDIT_POLICY);

    const token = () => randomBytes(24).toString('hex');
    const adminToken = token();
    const accounts = (options.serviceAccounts ?? []).map((account) => ({ account, token: token() }));
    // The static token file: token,user,uid,"groups" (k8s.io/apiserver/pkg/authentication/token/tokenfile).
    const tokens = [
      `${adminToken},admin,admin,"system:masters"`,
      ...accounts.map(
        ({ account, token: secret }) => `${secret},${serviceAccountUser(account)},${serviceAccountUser(account)},"system:serviceaccounts,system:serviceaccounts:${account.namespace}"`,
      ),
    ];
    await writeFile(join(dir, 'tokens.csv'), `${tokens.join('\n')}\n`, { mode: 0o600 });

    const caFile = join(dir, 'certs', 'apiserver.crt');
    await writeFile(join(dir, 'admin.kubeconfig'), kubeconfigText(url, caFile, adminToken), { mode: 0o600 });
    const kubeconfigs = new Map<string, string>();
    for (const { account, token: secret } of accounts) {
      const path = join(dir, `${account.namespace}.${account.name}.kubeconfig`);
      await writeFile(path, kubeconfigText(url, caFile, secret), { mode: 0o600 });
      kubeconfigs.set(serviceAccountUser(account), path);
    }

    const etcd = new Peer('etcd', join(dir, 'etcd.log'));
    etcd.start(peers.etcd.path, [
      '--name=default',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    const apiserver = new Peer('kube-apiserver', join(dir, 'kube-apiserver.log'));
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      '--disable-admission-plugins=ServiceAccount',
      `--service-account-issuer=${url}/`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${join(dir, 'audit.log')}`,
      // Webhooks are called at their Service's endpoints: no Service network (kube-proxy) exists here.
      '--enable-aggregator-routing=true',
      // Compaction is the specs' to make (compactEtcd), not a timer's.
      '--etcd-compaction-interval=0',
    ];
    const clusterNetworkSocket = options.clusterNetwork === undefined ? undefined : join(dir, 'cluster-network.sock');
    if (clusterNetworkSocket !== undefined) {
      await writeFile(
        join(dir, 'egress-selector.yaml'),
        `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
  - name: cluster
    connection:
      proxyProtocol: HTTPConnect
      transport: { uds: { udsName: ${JSON.stringify(clusterNetworkSocket)} } }
`,
      );
      apiserverArgs.push(`--egress-selector-config-file=${join(dir, 'egress-selector.yaml')}`);
    }
    const plane = new ControlPlane({ peers, url, dir, etcd, apiserver, etcdUrl, apiserverArgs, kubeconfigs, adminToken });
    try {
      if (options.clusterNetwork !== undefined && clusterNetworkSocket !== undefined) plane.#clusterNetwork = await startClusterNetwork(options.clusterNetwork, clusterNetworkSocket);
      await waitReady(etcd, 'etcd', async () => (await fetch(`${etcdUrl}/health`)).ok);
      await plane.#startApiServer();
      if (options.gatewayApiCrds) await plane.#installGatewayApiCrds();
    } catch (error) {
      await plane.stop();
      throw error;
    }
    return plane;
  }

  async #startApiServer(): Promise<void> {
    this.#apiserver.start(this.peers.apiserver.path, this.#apiserverArgs);
    await waitReady(this.#apiserver, 'kube-apiserver', async () => existsSync(this.#caFile) && (await this.#get('/readyz')).status === 200);
  }

  /** A GET as the admin, verified with the API server's CA. */
  #get(path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { ca: readFileSync(this.#caFile), headers: { authorization: `Bearer ${this.#adminToken}` } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async #installGatewayApiCrds(): Promise<void> {
    // Server-side: the largest CRDs outgrow the last-applied annotation client-side apply writes.
    const applied = await this.kubectl('apply', '--server-side', '-f', this.peers.gatewayApiCrds.path);
    if (applied.code !== 0) throw new Error(`applying the Gateway API CRDs failed:\n${applied.stderr}`);
    const established = await this.kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all');
    if (established.code !== 0) throw new Error(`the Gateway API CRDs were not established:\n${established.stderr}`);
  }

  /** The kubeconfig of a ServiceAccount named at start. */
  kubeconfigFor(account: ServiceAccountRef): string {
    const path = this.#kubeconfigs.get(serviceAccountUser(account));
    if (path === undefined) throw new Error(`no token for ${serviceAccountUser(account)}: name it in startControlPlane's serviceAccounts`);
    return path;
  }

  /**
   * A TCP relay to the API server on a port of its own, with a kubeconfig for `account` through it: the
   * API server's certificate holds 127.0.0.1, so the relay is verified as the server itself is.
   */
  async link(account: ServiceAccountRef): Promise<ApiServerLink> {
    const target = new URL(this.url);
    const connections = new Set<Socket>();
    let cut = false;
    const relay = createTcpServer((client) => {
      if (cut) {
        client.resetAndDestroy();
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      for (const [socket, other] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        connections.add(socket);
        socket.once('close', () => {
          connections.delete(socket);
          other.destroy();
        });
        socket.on('error', () => other.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const port = await reservePort();
    await new Promise<void>((resolve, reject) => {
      relay.once('error', reject);
      relay.listen(port, '127.0.0.1', () => resolve());
    });
    this.#links.push(relay);
    const kubeconfig = join(this.dir, `link-${port}.kubeconfig`);
    const text = await readFile(this.kubeconfigFor(account), 'utf8');
    await writeFile(kubeconfig, text.replace(JSON.stringify(this.url), JSON.stringify(`https://127.0.0.1:${port}`)), { mode: 0o600 });
    return {
      kubeconfig,
      cut: () => {
        cut = true;
        for (const socket of connections) socket.resetAndDestroy();
      },
      restore: () => {
        cut = false;
      },
    };
  }

  /** The real kubectl as the admin; never throws for a non-zero exit. */
  kubectl(...args: string[]): Promise<CommandResult> {
    return new Promise((resolve) => {
      execFile(kubeTool('kubectl'), ['--kubeconfig', this.adminKubeconfig, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  /** kubectl that must succeed: its stdout, or an error with its stderr. */
  async kubectlOk(...args: string[]): Promise<string> {
    const result = await this.kubectl(...args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}`);
    return result.stdout;
  }

  /** A client-node object API as the admin, for reading back what the controller wrote. */
  objects(): KubernetesObjectApi {
    const config = new KubeConfig();
    config.loadFromFile(this.adminKubeconfig);
    return KubernetesObjectApi.makeApiClient(config);
  }

  /** The object, or undefined when the API server answers 404. */
  async read(apiVersion: string, kind: string, name: string, namespace?: string): Promise<(KubernetesObject & Record<string, unknown>) | undefined> {
    try {
      return (await this.objects().read({ apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) } })) as KubernetesObject & Record<string, unknown>;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  }

  /** Every request the audit log recorded as completed so far. */
  async audit(stages: readonly string[] = ['ResponseComplete']): Promise<AuditEvent[]> {
    const text = existsSync(this.#auditLog) ? await readFile(this.#auditLog, 'utf8') : '';
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((event) => stages.includes(event.stage));
  }

  /** etcd's current revision (the API server's resourceVersion). */
  async etcdRevision(): Promise<number> {
    const answer = await etcdPost(this.#etcdUrl, '/v3/kv/range', { key: Buffer.from('/registry/').toString('base64') });
    return Number((answer['header'] as { revision: string }).revision);
  }

  /** Compacts etcd's history up to its current revision, as the API server's own timer does every five minutes. */
  async compactEtcd(): Promise<number> {
    const revision = await this.etcdRevision();
    await etcdPost(this.#etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  /**
   * Stops kube-apiserver, runs `whileDown` (etcd stays up), and starts it
   * again on the same port with the same certificate: every client's watch
   * ends, and the new server's watch cache begins at etcd's revision then.
   */
  async restartApiServer(whileDown: () => Promise<void> = async () => undefined): Promise<void> {
    await this.#apiserver.stop();
    await whileDown();
    await this.#startApiServer();
  }

  async stop(): Promise<void> {
    await this.#apiserver.stop();
    await this.#etcd.stop();
    await this.#clusterNetwork?.close();
    for (const relay of this.#links) {
      relay.close();
      relay.unref();
    }
    if (!process.env['KEEP_CONTROL_PLANE']) await rm(this.dir, { recursive: true, force: true });
  }
}

export const startControlPlane = (options: ControlPlaneOptions = {}): Promise<ControlPlane> => ControlPlane.start(options);
