/**
 * HTTPS agents built from CA / client certificate / key files that are
 * rotated under a running controller (cert-manager, mounted Secrets). Before
 * each request the files are stat'ed; when any changed, a new agent is built
 * from their new content and the old one is retired: it finishes the
 * requests it is carrying and is then destroyed, so no request is cut off by
 * a rotation and no connection keeps presenting a certificate that was
 * replaced.
 */
import { stat, readFile } from 'node:fs/promises';
import { Agent, type AgentOptions } from 'node:https';
import { checkServerIdentity, createSecureContext } from 'node:tls';
import type { AgentLease, AgentSource } from './agents.ts';

export interface DataplaneTlsOptions {
  /** CA bundle the server certificate must chain to; replaces the system roots. */
  readonly caFile?: string;
  /** Client certificate for mutual TLS (DPAPI's `tls_ca`). Needs `keyFile`. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Default true. False accepts any server certificate: for tests only. */
  readonly rejectUnauthorized?: boolean;
  /**
   * Name the server certificate is checked against (and sent as SNI) instead
   * of the URL's host: pods are addressed by IP, certificates name a Service.
   */
  readonly serverName?: string;
}

interface Slot {
  readonly agent: Agent;
  readonly signature: string;
  inflight: number;
  retired: boolean;
}

export class TlsAgentSource implements AgentSource {
  readonly #options: DataplaneTlsOptions;
  #current: Slot | undefined;
  /** Concurrent requests share one check instead of each stat'ing the files. */
  #checking: Promise<Slot> | undefined;
  #closed = false;

  constructor(options: DataplaneTlsOptions) {
    if ((options.certFile === undefined) !== (options.keyFile === undefined)) {
      throw new TypeError('tls.certFile and tls.keyFile must be given together');
    }
    this.#options = options;
  }

  async acquire(): Promise<AgentLease> {
    if (this.#closed) throw new Error('the Data Plane API client is closed');
    this.#checking ??= this.#refresh().finally(() => {
      this.#checking = undefined;
    });
    const slot = await this.#checking;
    slot.inflight += 1;
    let released = false;
    return {
      agent: slot.agent,
      release: () => {
        if (released) return;
        released = true;
        slot.inflight -= 1;
        if (slot.retired && slot.inflight === 0) slot.agent.destroy();
      },
    };
  }

  close(): void {
    this.#closed = true;
    if (this.#current !== undefined) this.#retire(this.#current, true);
    this.#current = undefined;
  }

  async #refresh(): Promise<Slot> {
    const { caFile, certFile, keyFile } = this.#options;
    const files = [caFile, certFile, keyFile];
    // Stat'ed before reading: if a file changes after this, the next check
    // sees a different signature and rebuilds, so a half-rotated pair read
    // here (new certificate, old key) cannot stick.
    const signature = (await Promise.all(files.map((file) => (file === undefined ? '-' : fileSignature(file))))).join('|');
    const current = this.#current;
    if (current !== undefined && current.signature === signature) return current;
    const [ca, cert, key] = await Promise.all(files.map((file) => (file === undefined ? undefined : readTlsFile(file))));
    const material = { ca, cert, key };
    try {
      // Fails here, naming the files, rather than at the handshake with
      // OpenSSL's bare "key values mismatch".
      createSecureContext(material);
    } catch (error) {
      throw new Error(`TLS files ${files.filter((f) => f !== undefined).join(', ')} are not usable: ${(error as Error).message}`, { cause: error });
    }
    const options: AgentOptions = { keepAlive: true, ...material, rejectUnauthorized: this.#options.rejectUnauthorized ?? true };
    const serverName = this.#options.serverName;
    if (serverName !== undefined) {
      options.servername = serverName;
      options.checkServerIdentity = (_host, certificate) => checkServerIdentity(serverName, certificate);
    }
    if (this.#closed) throw new Error('the Data Plane API client is closed');
    const slot: Slot = { agent: new Agent(options), signature, inflight: 0, retired: false };
    if (current !== undefined) this.#retire(current, false);
    this.#current = slot;
    return slot;
  }

  #retire(slot: Slot, now: boolean): void {
    slot.retired = true;
    if (now || slot.inflight === 0) slot.agent.destroy();
  }
}

/** Changes when a file is rewritten in place (mtime, ctime, size) or replaced by a rename or symlink swap (inode). */
async function fileSignature(file: string): Promise<string> {
  try {
    const info = await stat(file);
    return `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
  } catch (error) {
    throw new Error(`cannot read TLS file ${file}: ${(error as Error).message}`, { cause: error });
  }
}

async function readTlsFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new Error(`cannot read TLS file ${file}: ${(error as Error).message}`, { cause: error });
  }
}
