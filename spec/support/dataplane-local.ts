import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { startLocalMode, type LocalMode, type LocalModeOptions } from '../../streams/local-mode.ts';
import { emulatorPeer, type DataplanePeer, type PeerKind } from './dataplane-peer.ts';
import { reservePort } from './ports.ts';
import { OutcomeLog, servedBy, type Deployed } from './traffic.ts';

/** The HAProxy pod the emulator stands for: its files, its stats socket, the address it serves on. */
export const DATAPLANE_POD = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: '127.0.0.2' } as const;

/**
 * Local mode deploying through the Data Plane API, as a HAProxy pod is
 * deployed to: the emulator of spec/support/dataplane-emulator in front of a
 * real HAProxy on the pod's address, a copy of the shipped configuration
 * with HAProxy's ports reserved there, manifests in a folder of their own
 * (written before the start), and real backends on loopback.
 */
/** Quiet local mode on loopback reading `manifests`, deploying through the emulator's Data Plane API. */
export function throughEmulator(options: {
  readonly emulator: Pick<DataplanePeer, 'url' | 'credentials'>;
  readonly manifests: string;
  readonly configPath: string;
  readonly workDir: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly statusPort: number;
}): LocalModeOptions {
  const { emulator } = options;
  return {
    manifests: options.manifests,
    config: { path: options.configPath, watch: false },
    workDir: options.workDir,
    bindAddress: '127.0.0.1',
    httpPort: options.httpPort,
    httpsPort: options.httpsPort,
    statusPort: options.statusPort,
    healthPort: 0,
    metricsPort: 0,
    settleMs: 50,
    dataplane: { urls: [emulator.url], username: emulator.credentials.user, password: emulator.credentials.password },
    output: { out: () => undefined, err: () => undefined },
  };
}

export class DataplaneLocal {
  /** The Data Plane API standing for the pod: the emulator unless `start` was given another kind. */
  readonly emulator: DataplanePeer;
  readonly mode: LocalMode;
  readonly log: OutcomeLog;
  readonly httpPort: number;
  readonly backends: readonly number[];
  readonly #manifests: string;
  readonly #stopBackends: () => Promise<void>;

  private constructor(parts: { emulator: DataplanePeer; mode: LocalMode; httpPort: number; backends: readonly number[]; manifests: string; stopBackends: () => Promise<void> }) {
    this.emulator = parts.emulator;
    this.mode = parts.mode;
    this.httpPort = parts.httpPort;
    this.backends = parts.backends;
    this.#manifests = parts.manifests;
    this.#stopBackends = parts.stopBackends;
    this.log = new OutcomeLog(this.mode.outcomes);
  }

  /** `manifests(backends)`: the manifest files by name, given the backends' ports; `kind`: the Data Plane API (default the emulator). */
  static async start(
    backendCount: number,
    manifests: (backends: readonly number[]) => Record<string, string>,
    name = 'dataplane-local-',
    kind: PeerKind = emulatorPeer(),
  ): Promise<DataplaneLocal> {
    const emulator = await kind.start(DATAPLANE_POD);
    const [httpPort, httpsPort, statusPort] = [await reservePort(DATAPLANE_POD.address), await reservePort(DATAPLANE_POD.address), await reservePort(DATAPLANE_POD.address)];
    const backends = await startBackends(Array<number>(backendCount).fill(0));
    const dir = await mkdtemp(join(tmpdir(), name));
    const manifestDir = join(dir, 'manifests');
    await mkdir(manifestDir);
    for (const [file, text] of Object.entries(manifests(backends.ports))) await writeFile(join(manifestDir, file), text);
    const configPath = join(dir, 'config.yaml');
    const shipped = await readFile(defaultConfigPath(), 'utf8');
    await writeFile(
      configPath,
      shipped
        .replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`)
        .replace('  httpsPort: 443\n', `  httpsPort: ${httpsPort}\n`)
        .replace('  statusPort: 8404\n', `  statusPort: ${statusPort}\n`),
    );
    const mode = await startLocalMode(throughEmulator({ emulator, manifests: manifestDir, configPath, workDir: join(dir, 'work'), httpPort, httpsPort, statusPort }));
    return new DataplaneLocal({ emulator, mode, httpPort, backends: backends.ports, manifests: manifestDir, stopBackends: backends.stop });
  }

  write(file: string, text: string): Promise<void> {
    return writeFile(join(this.#manifests, file), text);
  }

  /** HAProxy's reload counter, from its master socket. */
  async reloads(): Promise<number> {
    return (await this.emulator.processInfo()).reloads;
  }

  /** The first deployment of a change after `from` (a mark of `log`). */
  async deployed(from: number): Promise<Deployed> {
    const endpoint = this.mode.fleet.endpoints[0]!.id;
    return (await this.log.deployedOn(from, [endpoint])).get(endpoint)!;
  }

  /** Waits until `host` is answered by exactly the backends on `ports`. */
  served(host: string, ports: readonly number[]): Promise<void> {
    return servedBy(host, ports, [DATAPLANE_POD.address], this.httpPort);
  }

  async stop(): Promise<void> {
    try {
      await this.mode.stop();
    } finally {
      await this.emulator.stop();
      await this.#stopBackends();
    }
  }
}
