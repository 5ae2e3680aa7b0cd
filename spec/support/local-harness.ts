import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import type { LogLevel } from '../../lib/telemetry/logger.ts';
import { eventually } from './eventually.ts';
import { LineLog } from './line-log.ts';
import { reservePort } from './ports.ts';
import { OutcomeLog } from './traffic.ts';
import { startLocalMode, type LocalMode } from '../../streams/local-mode.ts';

export interface Response {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface HarnessOptions {
  /** Manifest files by name. */
  readonly manifests: Record<string, string>;
  /** Number of backends to start on loopback; their ports are in `backends`. */
  readonly backends: number;
  /** Use a copy of the shipped configuration as a watched --config file. */
  readonly watchedConfig?: boolean;
  /** Changes the copy of the shipped configuration before the start. */
  readonly config?: (shipped: string) => string;
  /** Reuse the work dir (and the HAProxy in it) of an earlier harness. */
  readonly workDir?: string;
  readonly ports?: Ports;
  /** How often the manifest folder is read whatever its watch says; local mode's 10 s when absent. */
  readonly rereadMs?: number;
  /** Local mode's log level; info when absent. */
  readonly logLevel?: LogLevel;
  /** How long manifest changes settle; 50 ms when absent, so specs wait less than local mode's own DEFAULT_SETTLE_MS. */
  readonly settleMs?: number;
}

interface Ports {
  /** HAProxy's, reserved (see ports.ts). */
  readonly http: number;
  readonly https: number;
  readonly status: number;
  /** The controller's; 0 lets it take any (see LocalMode.observer). */
  readonly health: number;
  readonly metrics: number;
}

/**
 * Local mode in-process, with manifests, work dir and ports of its own and
 * real backends on loopback; records every outcome and every printed line.
 */
interface HarnessParts {
  readonly mode: LocalMode;
  readonly manifestDir: string;
  readonly workDir: string;
  readonly configPath: string;
  readonly ports: Ports;
  readonly backends: readonly number[];
  readonly stopBackends: () => Promise<void>;
  readonly output: LineLog;
}

export class LocalHarness {
  /** Every outcome, in order. */
  readonly log: OutcomeLog;
  readonly mode: LocalMode;
  readonly manifestDir: string;
  readonly workDir: string;
  readonly configPath: string;
  readonly ports: Ports;
  readonly backends: readonly number[];
  /** Everything local mode printed. */
  readonly lines: string[];
  readonly #stopBackends: () => Promise<void>;
  readonly #output: LineLog;

  private constructor(parts: HarnessParts) {
    this.mode = parts.mode;
    this.manifestDir = parts.manifestDir;
    this.workDir = parts.workDir;
    this.configPath = parts.configPath;
    this.ports = parts.ports;
    this.backends = parts.backends;
    this.lines = parts.output.lines;
    this.#stopBackends = parts.stopBackends;
    this.#output = parts.output;
    this.log = new OutcomeLog(this.mode.outcomes);
  }

  static async start(options: HarnessOptions, backends?: readonly number[]): Promise<LocalHarness> {
    const dir = await mkdtemp(join(tmpdir(), 'local-e2e-'));
    const manifestDir = join(dir, 'manifests');
    await mkdir(manifestDir, { recursive: true });
    for (const [file, text] of Object.entries(options.manifests)) await writeFile(join(manifestDir, file), text);
    const workDir = options.workDir ?? join(dir, 'work');
    const configPath = join(dir, 'config.yaml');
    const shipped = await readFile(defaultConfigPath(), 'utf8');
    await writeFile(configPath, options.config ? options.config(shipped) : shipped);
    const ports: Ports = options.ports ?? { http: await reservePort(), https: await reservePort(), status: await reservePort(), health: 0, metrics: 0 };
    const started = backends ? { ports: backends, stop: async () => undefined } : await startBackends(Array<number>(options.backends).fill(0));
    const output = new LineLog();
    const mode = await startLocalMode({
      manifests: manifestDir,
      config: { path: configPath, watch: options.watchedConfig ?? options.config !== undefined },
      workDir,
      bindAddress: '127.0.0.1',
      httpPort: ports.http,
      httpsPort: ports.https,
      statusPort: ports.status,
      healthPort: ports.health,
      metricsPort: ports.metrics,
      settleMs: options.settleMs ?? 50,
      ...(options.rereadMs === undefined ? {} : { rereadMs: options.rereadMs }),
      log: { level: options.logLevel ?? 'info', format: 'json', write: output.write },
      output: { out: output.write, err: output.write },
    });
    return new LocalHarness({ mode, manifestDir, workDir, configPath, ports, backends: started.ports, stopBackends: started.stop, output });
  }

  /** The number of outcomes so far: pass it to `next` to wait for something after this point. */
  mark(): number {
    return this.log.mark();
  }

  /**
   * Waits until the newest validated configuration is reported deployed:
   * HAProxy serves a configuration a moment before its deployment's outcome
   * is out, and a mark taken in between would take that outcome for the
   * next change's.
   */
  settled(): Promise<true> {
    return this.log.settledOn(['local']);
  }

  /**
   * The first outcome at or after `mark` of the given type, waiting for it up to `timeoutMs`. A deployment
   * that writes the files of a runtime-first configuration once it is confirmed (reason `confirmed`) serves
   * nothing new, and may come after a mark taken once the configuration served: it is not one.
   */
  next<T extends Outcome['type']>(mark: number, type: T, timeoutMs = 15_000): Promise<Extract<Outcome, { type: T }>> {
    return this.log.waitFor(
      mark,
      (outcome): outcome is Extract<Outcome, { type: T }> => outcome.type === type && !(outcome.type === 'deployed' && outcome.reason === 'confirmed'),
      `${type} outcome`,
      timeoutMs,
    );
  }

  async write(file: string, text: string): Promise<void> {
    await writeFile(join(this.manifestDir, file), text);
  }

  /** Renames a file of the manifest folder: written beside under a name no manifest has, then renamed, it changes at once, as GitOps tools and editors' atomic saves write. */
  async rename(from: string, to: string): Promise<void> {
    await rename(join(this.manifestDir, from), join(this.manifestDir, to));
  }

  async remove(file: string): Promise<void> {
    await rm(join(this.manifestDir, file));
  }

  /** HAProxy's reload counter, from the master socket. */
  async reloads(): Promise<number> {
    return (await this.mode.target!.processInfo()).reloads;
  }

  get(host: string, path: string): Promise<Response> {
    return new Promise((resolve, reject) => {
      // A fresh connection per request: a pooled one may belong to a worker a reload just retired.
      const req = request({ host: '127.0.0.1', port: this.ports.http, path, headers: { host }, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** A GET on the controller's health port: /healthz, /readyz, /debug/... */
  health(path: string): Promise<Response> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.mode.observer.healthPort, path, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** One metric's value from /metrics (the first sample whose line starts with `sample`), or undefined. */
  async metric(sample: string): Promise<number | undefined> {
    const response = await fetch(`http://127.0.0.1:${this.mode.observer.metricsPort}/metrics`);
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith(`haproxy_template_ic_${sample} `) || l.startsWith(`haproxy_template_ic_${sample}{`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  /** Resolves with the first printed line at or after index `from` that matches, waiting up to `timeoutMs`. */
  line(from: number, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    return this.#output.line(from, pattern, timeoutMs);
  }

  /** Resolves once `count` printed lines at or after index `from` match, with them. */
  lineCount(from: number, pattern: RegExp, count: number, timeoutMs = 15_000): Promise<string[]> {
    return this.#output.matching(from, pattern, count, timeoutMs);
  }

  /** The certificate HAProxy's HTTPS port shows for a server name: its SHA-256 fingerprint, or why the handshake failed. */
  handshake(servername: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: this.ports.https, servername, rejectUnauthorized: false }, () => {
        const fingerprint = socket.getPeerCertificate().fingerprint256;
        socket.destroy();
        resolve(fingerprint);
      });
      socket.on('error', (error) => resolve(`refused: ${error.message}`));
    });
  }

  /** Polls until `handshake` gives `expected`, or fails with what it last saw. */
  async untilHandshake(servername: string, expected: string | RegExp, timeoutMs = 10_000): Promise<void> {
    const matches = (seen: string) => (typeof expected === 'string' ? seen === expected : expected.test(seen));
    await eventually(() => this.handshake(servername), matches, `${servername}'s handshake to give ${String(expected)}`, timeoutMs);
  }

  /** The backend ports answering `host` + `path` over `tries` requests (each backend says its port). */
  async answering(host: string, path: string, tries = 8): Promise<number[]> {
    const ports = new Set<number>();
    for (let i = 0; i < tries; i++) {
      // Refused while HAProxy is (re)starting: nothing answered.
      const response = await this.get(host, path).catch(() => undefined);
      if (response === undefined) continue;
      const port = /^backend (\d+) /.exec(response.body)?.[1];
      if (response.status === 200 && port) ports.add(Number(port));
    }
    return [...ports].sort((a, b) => a - b);
  }

  /** Polls until `answering` gives `expected` (at least one look, however little time is left), or fails with what it last saw. */
  async until(host: string, path: string, expected: readonly number[], timeoutMs = 10_000): Promise<void> {
    const wanted = [...expected].sort((a, b) => a - b).join();
    await eventually(
      () => this.answering(host, path),
      (seen) => seen.join() === wanted,
      `${host}${path} to be answered by ${expected.join(', ')}`,
      timeoutMs,
    );
  }

  /** Stops local mode (and HAProxy, unless kept for another controller to attach) and the backends. */
  async stop(options: { keepHaproxy?: boolean; keepBackends?: boolean } = {}): Promise<void> {
    await this.mode.stop(options);
    if (!options.keepBackends) await this.#stopBackends();
  }

  stopBackends(): Promise<void> {
    return this.#stopBackends();
  }
}
