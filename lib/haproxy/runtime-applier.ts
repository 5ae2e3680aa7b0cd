/**
 * Applies the planner's runtime operations to a running HAProxy 2.6 over its
 * stats socket (level admin): `add server`/`del server`/`set server`, a map
 * replaced whole through a new map version (`prepare map`, `add map @v`,
 * `commit map @v`: lookups never see a half-written map, file order is
 * kept), and `set ssl cert` + `commit ssl cert`. Each command's answer is
 * checked against the text 2.6 gives on success.
 */
import { posix } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { namesMap } from './plan-maps.ts';
import type { MapEntry, RuntimeOperation, ServerSpec } from './plan-types.ts';
import { runtimeCommand } from './runtime-socket.ts';

export interface RuntimeApplierOptions {
  readonly statsSocket: string;
  /** Where the configuration keeps maps and certificates, relative to its base directory. */
  readonly dirs: { readonly mapsDir: string; readonly certificatesDir: string };
  readonly log: (message: string) => void;
}

/**
 * HAProxy reads CLI input into one buffer (tune.bufsize, 16 kB by default)
 * and refuses a longer request, so map payloads go in chunks well below it.
 */
const MAX_PAYLOAD_BYTES = 8_000;
/** An `add server` answers this when the server exists (checked on 2.6.12). */
const SERVER_ADDED = /^New server registered\./;
/** `set server addr` answers what it changed, or that nothing needed to; anything else is an error. */
const ADDRESS_SET = /^(IP changed from '[^']*' to '[^']*'|no need to change the addr)(, (port changed from '[^']*' to '[^']*'|no need to change the port))? by '[^']*'$/;
const DELETE_ATTEMPTS = 10;
const DELETE_RETRY_MS = 50;

/** A command's answer that is not the expected success text. */
class CommandError extends Error {
  constructor(command: string, answer: string) {
    const first = answer.trim().split('\n')[0];
    super(`"${command}" ${answer === '' ? 'got no answer' : `answered: ${first === '' ? '(an empty line)' : first}`}`);
    this.name = 'CommandError';
  }
}

export class RuntimeApplier {
  readonly #options: RuntimeApplierOptions;

  constructor(options: RuntimeApplierOptions) {
    this.#options = options;
  }

  apply(operation: RuntimeOperation): Promise<void> {
    switch (operation.type) {
      case 'addServer':
        return this.#addServer(operation.backend, operation.server);
      case 'deleteServer':
        return this.#deleteServer(operation.backend, operation.server);
      case 'updateServer':
        return this.#updateServer(operation);
      case 'updateMap':
        return this.#updateMap(operation.map, operation.entries);
      case 'updateCertificate':
        return this.#updateCertificate(operation.certificate, operation.pem);
    }
  }

  /** Sends a command and returns the answer if `ok` accepts it. */
  async #command(command: string, ok: (answer: string) => boolean, payload?: string): Promise<string> {
    const answer = await runtimeCommand(this.#options.statsSocket, command, payload === undefined ? {} : { payload });
    // Even an "empty" success ends with a line break; no byte at all means
    // HAProxy dropped the request (2.6 does so silently for one over tune.bufsize).
    if (answer === '' || !ok(answer.trim())) throw new CommandError(command, answer);
    return answer;
  }

  async #addServer(backend: string, server: ServerSpec): Promise<void> {
    const id = `${backend}/${server.name}`;
    // `enabled` is what `state ready` below does: 3.0+ refuses the keyword for a dynamic server
    // (lib/haproxy/capabilities.ts), and a 2.6 server added with it takes no traffic.
    const options = server.options.filter((option) => option !== 'enabled');
    const words = ['add server', id, serverAddress(server.address, server.port), ...options];
    await this.#command(words.join(' '), (answer) => SERVER_ADDED.test(answer));
    // Every version creates dynamic servers in maintenance with health checks off.
    if (!server.disabled) await this.#command(`set server ${id} state ready`, isEmpty);
    if (server.options.includes('check')) await this.#command(`enable health ${id}`, isEmpty);
  }

  async #deleteServer(backend: string, server: string): Promise<void> {
    const id = `${backend}/${server}`;
    // Only a server in maintenance can be deleted; maintenance also moves new traffic away.
    await this.#command(`set server ${id} state maint`, isEmpty);
    await this.#command(`shutdown sessions server ${id}`, isEmpty);
    // Sessions close asynchronously: a refusal right after the shutdown is retried a few times.
    let answer = '';
    for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt++) {
      answer = (await runtimeCommand(this.#options.statsSocket, `del server ${id}`)).trim();
      if (answer === 'Server deleted.') return;
      await delay(DELETE_RETRY_MS);
    }
    // Traffic has moved already; the server stays in maintenance until the next reload drops it.
    this.#options.log(`del server ${id} refused, left in maintenance: ${answer}`);
  }

  async #updateServer(operation: Extract<RuntimeOperation, { type: 'updateServer' }>): Promise<void> {
    const id = `${operation.backend}/${operation.server}`;
    if (operation.address !== undefined || operation.port !== undefined) {
      // `set server addr` needs the address even when only the port changes.
      const address = operation.address ?? (await this.#currentAddress(operation.backend, operation.server));
      const port = operation.port === undefined ? '' : ` port ${operation.port}`;
      await this.#command(`set server ${id} addr ${address}${port}`, (answer) => ADDRESS_SET.test(answer));
    }
    if (operation.weight !== undefined) await this.#command(`set server ${id} weight ${operation.weight}`, isEmpty);
    if (operation.disabled !== undefined) {
      await this.#command(`set server ${id} state ${operation.disabled ? 'maint' : 'ready'}`, isEmpty);
    }
  }

  async #currentAddress(backend: string, server: string): Promise<string> {
    const answer = await runtimeCommand(this.#options.statsSocket, `show servers state ${backend}`);
    // Columns: be_id be_name srv_id srv_name srv_addr ...
    for (const line of answer.split('\n')) {
      const words = line.trim().split(/\s+/);
      if (words[1] === backend && words[3] === server && words[4] !== undefined) return words[4];
    }
    throw new CommandError(`show servers state ${backend}`, `no server ${server}: ${answer}`);
  }

  async #updateMap(map: string, entries: readonly MapEntry[]): Promise<void> {
    const file = posix.normalize(`${this.#options.dirs.mapsDir}/${map}`);
    const listing = await runtimeCommand(this.#options.statsSocket, 'show map');
    // Lines: `<id> (<file as the configuration names it>) pattern loaded from file ...`.
    const ids = listing
      .split('\n')
      .map((line) => /^(\d+) \((.*?)\) /.exec(line))
      .filter((match) => match !== null && namesMap(match[2] ?? '', file))
      .map((match) => match![1]!);
    if (ids.length === 0) throw new Error(`map ${file} is not loaded by the running HAProxy`);
    const lines = entries.map(([key, value]) => `${key} ${value}`);
    for (const id of ids) {
      const prepared = await this.#command(`prepare map #${id}`, (answer) => /^New version created: \d+$/.test(answer));
      const version = /(\d+)/.exec(prepared)![1]!;
      for (const chunk of chunkLines(lines)) {
        await this.#command(`add map @${version} #${id}`, isEmpty, chunk);
      }
      await this.#command(`commit map @${version} #${id}`, isEmpty);
    }
  }

  async #updateCertificate(certificate: string, pem: string): Promise<void> {
    const file = posix.normalize(`${this.#options.dirs.certificatesDir}/${certificate}`);
    const listing = await runtimeCommand(this.#options.statsSocket, 'show ssl cert');
    // Names under `# filename`, and under `# transaction` with a leading `*`.
    const name = listing
      .split('\n')
      .map((line) => line.trim().replace(/^\*/, ''))
      .find((line) => line !== '' && !line.startsWith('#') && namesMap(line, file));
    if (name === undefined) throw new Error(`certificate ${file} is not loaded by the running HAProxy`);
    // An empty line would end the payload early; PEM does not need any.
    const payload = pem
      .split('\n')
      .filter((line) => line.trim() !== '')
      .join('\n');
    const transaction = /^Transaction (created|updated) for certificate /;
    await this.#command(`set ssl cert ${name}`, (answer) => transaction.test(answer), payload);
    try {
      const committed = (answer: string): boolean => /\bSuccess!$/.test(answer) && !answer.includes("Can't");
      await this.#command(`commit ssl cert ${name}`, committed);
    } catch (error) {
      // A failed commit leaves the transaction open; the next `set ssl cert` would build on it.
      await runtimeCommand(this.#options.statsSocket, `abort ssl cert ${name}`).catch(() => undefined);
      throw error;
    }
  }
}

function isEmpty(answer: string): boolean {
  return answer === '';
}

/** An address as `add server` takes it; port 0 means none (the client's destination port). */
function serverAddress(address: string, port: number): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === 0 ? host : `${host}:${port}`;
}

/** Payload chunks of whole lines, each below MAX_PAYLOAD_BYTES. */
function chunkLines(lines: readonly string[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (current.length > 0 && size + bytes > MAX_PAYLOAD_BYTES) {
      chunks.push(current.join('\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current.join('\n'));
  return chunks;
}
