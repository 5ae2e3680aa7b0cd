/**
 * The managed haproxy.cfg and its version (§2, §3): the version lives in the
 * file's comment header, every successful write is validated with
 * `haproxy -c` in a transaction directory, then written with version + 1.
 *
 * Two versions exist, as in DPAPI: the one in the file header, and the one
 * of DPAPI's in-memory parser, which checks `version` parameters and fills
 * the Configuration-Version header. They only differ after a failed reload,
 * when the reload agent copies the last-known-good file back: the file then
 * carries the older header while the parser keeps the newer version (§2, §10.2).
 *
 * In pod mode (pod.ts) the text a client posts and the file HAProxy loads
 * differ: the file has the pod's paths and binds turned into the instance's.
 * The store keeps the posted text (with the same header) as what the API
 * shows (raw GET, raw POST bodies, Configuration-Checksum, the reference
 * check of storage deletes), beside the file, and the last-known-good of
 * both. Without a pod the two are the same text and the file is the truth.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeBack } from './config-writer.ts';
import { ApiError } from './http-kit.ts';
import type { PathView } from './pod.ts';
import type { LastKnownGood } from './reload-agent.ts';
import { checkCandidate } from './validation.ts';

/**
 * Comment lines DPAPI v2 wrote under the metadata lines. 3.x writes none (no
 * such text in client-native v6; the files dataplaneapi v3.2.15 and v3.4.2
 * wrote, checked): a file that has them came from an older release, and they
 * are dropped like the metadata.
 */
const MANAGED_COMMENTS: readonly string[] = ['# Dataplaneapi managed File', '# changing file directly can cause a conflict if dataplaneapi is running'];

const METADATA = /^# _(md5hash|version|cluster_version)=/;

/**
 * The file as DPAPI writes it: `# _md5hash=` (md5 of everything after that
 * line, config-parser's StringWithHash), `# _version=N`, then the
 * configuration.
 */
export function withHeader(body: string, version: number): string {
  const content = `# _version=${version}\n${body}`;
  return `# _md5hash=${md5(content)}\n${content}`;
}

/**
 * The configuration without DPAPI's header: metadata lines anywhere (DPAPI
 * drops posted `# _version=` lines, dropVersionFromRaw) and the managed
 * comments of the leading comment block, so a GET-edit-POST cycle keeps one
 * header instead of stacking them.
 */
export function stripHeader(text: string): string {
  const lines = text.split('\n');
  const kept: string[] = [];
  let leading = true;
  for (const line of lines) {
    if (METADATA.test(line)) continue;
    if (leading && MANAGED_COMMENTS.includes(line.trimEnd())) continue;
    if (!line.startsWith('#')) leading = false;
    kept.push(line);
  }
  return kept.join('\n');
}

/** The `# _version=` of a file, undefined when it has none. */
export function fileVersion(text: string): number | undefined {
  const match = /^# _version=(\d+)\s*$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The `# _md5hash=` of a file ('' when it has none): the Configuration-Checksum header (§3). */
export function fileChecksum(text: string): string {
  return /^# _md5hash=(\S+)\s*$/m.exec(text)?.[1] ?? '';
}

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

export interface WriteOptions {
  /** The `version` query parameter; 0 and undefined mean "not given" (Go's zero value). */
  readonly version: number | undefined;
  readonly skipVersion: boolean;
}

export interface ConfigStoreOptions {
  readonly configFile: string;
  /** Where candidates are validated: never the directory of the live file (§3, DPAPI's transaction_dir). */
  readonly transactionDir: string;
  readonly binary: string;
  /** Pod mode: how a posted text becomes the file HAProxy loads (pod.ts). Absent: the same text. */
  readonly pod?: PathView;
}

export class ConfigStore implements LastKnownGood {
  readonly configFile: string;
  readonly lkgFile: string;
  readonly #transactionDir: string;
  readonly #binary: string;
  readonly #pod: PathView | undefined;
  #version = 1;
  /** What DPAPI's parser holds: the last text written through the API, header included (the posted text in pod mode). */
  #parsed = '';
  /** Pod mode: the posted text of the file on disk (they differ from #parsed after a failed reload, §2). */
  #shown = '';
  /** Pod mode: the posted text of the last-known-good file. */
  #lkgShown = '';
  /** Writes run one at a time, like DPAPI's commit mutex. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ConfigStoreOptions) {
    this.configFile = options.configFile;
    this.lkgFile = `${options.configFile}.lkg`;
    this.#transactionDir = options.transactionDir;
    this.#binary = options.binary;
    this.#pod = options.pod;
  }

  /** The parser's version: Configuration-Version, GET /configuration/version, the reference of `version` checks. */
  get version(): number {
    return this.#version;
  }

  /** The configuration DPAPI's parser holds, without the md5 line (what storage DELETE scans for references, §7). */
  get parsedText(): string {
    return this.#parsed.replace(/^# _md5hash=.*\n/, '');
  }

  /**
   * The emulated DPAPI (re)starting on a bootstrap file it never wrote: shown
   * as it is, without header or checksum, as version 1, until the first write
   * (what dataplaneapi v3.2.15 and v3.4.2 answer to a raw GET then, checked).
   */
  reset(body: string): Promise<void> {
    return this.#serialize(async () => {
      const text = stripHeader(body);
      await this.#replaceFile(this.#pod === undefined ? text : this.#pod.toHAProxy(text));
      this.#version = 1;
      this.#parsed = text;
      this.#shown = text;
    });
  }

  /** The configuration as the API shows it, header included: the file on disk (in pod mode, as it was posted). */
  read(): Promise<string> {
    return this.#pod === undefined ? readFile(this.configFile, 'utf8') : Promise.resolve(this.#shown);
  }

  /**
   * `only_validate` (§3): the posted text, as posted (in pod mode, as this
   * instance's HAProxy would load it), checked in a temporary file; 400
   * `validation error: ...` when HAProxy refuses it.
   */
  async validateOnly(body: string): Promise<void> {
    const file = join(this.#transactionDir, `onlyvalidate${randomUUID().replaceAll('-', '').slice(0, 10)}`);
    await this.#check(file, this.#pod === undefined ? body : this.#pod.toHAProxy(body));
  }

  /**
   * An implicit transaction (§2, §3): version check (400 when missing, 409
   * when stale) unless skipVersion, then the text as config-parser writes it
   * back (config-writer.ts; client-native transaction.go commitTransaction
   * saves the parsed transaction "in order to validate the exact same
   * configuration that will be deployed"), `haproxy -c` on that in the
   * transaction directory (400), then the file is replaced with version + 1
   * (skip_version: neither checked nor incremented; a posted `# _version=`
   * line is kept, which sets the version).
   */
  write(body: string, options: WriteOptions): Promise<void> {
    return this.#serialize(async () => {
      if (!options.skipVersion) {
        if (options.version === undefined || options.version === 0) {
          throw new ApiError(400, 'version or transaction not specified: version or transaction not specified, specify only one');
        }
        if (options.version !== this.#version) {
          throw new ApiError(409, `version mismatch: version in configuration file is ${this.#version}, given version is ${options.version}`);
        }
      }
      const version = options.skipVersion ? (fileVersion(body) ?? this.#version) : this.#version + 1;
      const text = writeBack(stripHeader(body));
      const transaction = randomUUID();
      await this.#check(
        join(this.#transactionDir, `${basename(this.configFile)}.${transaction}`),
        withHeader(this.#pod === undefined ? text : this.#pod.toHAProxy(text), version),
        transaction,
      );
      await this.#commit(text, version);
    });
  }

  /** Another writer: version + 1 in the file header and the parser, the configuration unchanged. */
  bump(): Promise<number> {
    return this.#serialize(async () => {
      const version = this.#version + 1;
      await this.#commit(stripHeader(await this.read()), version);
      return version;
    });
  }

  // --- LastKnownGood, for the reload agent (§2) ---------------------------------

  /** DPAPI's start: the file on disk is assumed valid and becomes the last-known-good. */
  initialise(): Promise<void> {
    return this.#serialize(async () => {
      await writeFile(this.lkgFile, await readFile(this.configFile));
      this.#lkgShown = this.#shown;
    });
  }

  /**
   * What the reload about to run loads, read between two writes so that the
   * file and its posted text belong together; the function returned records
   * it as last-known-good once HAProxy loaded it.
   */
  capture(): Promise<() => Promise<void>> {
    return this.#serialize(async () => {
      const loading = await readFile(this.configFile).catch(() => undefined);
      const shown = this.#shown;
      return async () => {
        if (loading === undefined) return;
        await writeFile(this.lkgFile, loading);
        this.#lkgShown = shown;
      };
    });
  }

  /** A failed reload: the last-known-good file is copied back over the config file; the parser keeps its version (§2, §10.2). */
  restore(): Promise<void> {
    return this.#serialize(async () => {
      const content = await readFile(this.lkgFile).catch(() => undefined);
      if (content === undefined) return;
      await this.#replaceFile(content);
      this.#shown = this.#lkgShown;
    });
  }

  /** `transaction`: the implicit transaction's id, which a refusal names (only_validate runs without one). */
  async #check(file: string, content: string, transaction?: string): Promise<void> {
    await writeFile(file, content);
    try {
      const problem = await checkCandidate(this.#binary, file, transaction);
      if (problem !== undefined) throw new ApiError(400, `validation error: ${problem}`);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** `text` (without header) as `version`: the file for HAProxy (pod paths mapped), the posted text for the API. */
  async #commit(text: string, version: number): Promise<void> {
    const shown = withHeader(text, version);
    await this.#replaceFile(this.#pod === undefined ? shown : withHeader(this.#pod.toHAProxy(text), version));
    this.#version = version;
    this.#parsed = shown;
    this.#shown = shown;
  }

  async #replaceFile(content: string | Buffer): Promise<void> {
    // Written aside and renamed: a reload running meanwhile reads the old or the new file, never half of one.
    const temporary = join(dirname(this.configFile), `.${basename(this.configFile)}.${randomUUID()}`);
    await writeFile(temporary, content);
    await rename(temporary, this.configFile);
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
