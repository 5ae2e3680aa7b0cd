import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../pipeline/model.ts';
import { mapConcurrently } from '../collections/map-concurrently.ts';
import { storedSecret } from './stored-secret.ts';

export interface Manifest {
  readonly object: KubeObject;
  /** File and document, e.g. `apps/web.yaml#2`, for messages. */
  readonly source: string;
}

export interface ManifestSet {
  readonly manifests: readonly Manifest[];
  /** Files or documents that could not be read, each naming the file. */
  readonly errors: readonly string[];
}

/** The files kubectl reads from a directory (`kubectl apply -R -f DIR`): editors' backups and swap files, and sed's temporary files, are not manifests. */
const MANIFEST_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The manifest files under `dir`, in name order, symlinked files and folders
 * followed. Each file and folder is read once, however many links lead to
 * it: a link back up the tree (a loop) or a second link to the same place
 * adds nothing. Entries that vanish while listed are simply gone.
 */
async function filesUnder(dir: string, realDir: string, seen: Set<string>): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort(byName)) {
    const path = join(dir, entry.name);
    let directory = entry.isDirectory();
    let file = entry.isFile();
    if (entry.isSymbolicLink()) {
      // A dangling link, or one whose target went away meanwhile, is no file.
      const target = await stat(path).catch(() => undefined);
      directory = target?.isDirectory() ?? false;
      file = target?.isFile() ?? false;
    }
    if (!directory && !(file && MANIFEST_EXTENSIONS.has(extname(entry.name).toLowerCase()))) continue;
    // Only a link can lead somewhere else: an entry's real path is its folder's, and its name, otherwise.
    const real = entry.isSymbolicLink() ? await realpath(path).catch(() => undefined) : join(realDir, entry.name);
    if (real === undefined || seen.has(real)) continue;
    seen.add(real);
    if (file) files.push(path);
    else files.push(...(await filesUnder(path, real, seen).catch(gone([]))));
  }
  return files;
}

/** A fallback for a path that disappeared between listing and reading. */
function gone<T>(fallback: T): (error: NodeJS.ErrnoException) => T {
  return (error) => {
    if (error.code === 'ENOENT') return fallback;
    throw error;
  };
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Checks the shape every Kubernetes object has; returns why not, or undefined. */
function notAnObject(value: unknown): string | undefined {
  if (!isMapping(value)) return 'is not a mapping';
  if (typeof value['apiVersion'] !== 'string' || value['apiVersion'] === '') return 'has no apiVersion';
  if (typeof value['kind'] !== 'string' || value['kind'] === '') return 'has no kind';
  const metadata = value['metadata'];
  if (!isMapping(metadata) || typeof metadata['name'] !== 'string' || metadata['name'] === '') {
    return 'has no metadata.name';
  }
  if (metadata['namespace'] !== undefined && typeof metadata['namespace'] !== 'string') {
    return 'has a metadata.namespace that is not a string';
  }
  return undefined;
}

/** Parses one file's documents (`---` separated; a `kind: List` contributes its items). */
export function parseManifests(text: string, file: string): ManifestSet {
  const manifests: Manifest[] = [];
  const errors: string[] = [];
  let documents: unknown[];
  try {
    documents = loadAll(text);
  } catch (error) {
    return { manifests, errors: [`${file}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`] };
  }
  documents.forEach((document, index) => {
    if (document === null || document === undefined) return;
    const source = `${file}#${index + 1}`;
    const items =
      isMapping(document) && document['kind'] === 'List' && Array.isArray(document['items'])
        ? document['items'].map((item, i) => ({ item, source: `${source}.items[${i}]` }))
        : [{ item: document, source }];
    for (const { item, source: where } of items) {
      const problem = notAnObject(item);
      if (problem) {
        errors.push(`${where}: ${problem}`);
        continue;
      }
      const object = item as unknown as KubeObject;
      // A Secret is taken as the API server would store it (stringData merged, wrapped base64 accepted).
      const stored = object.kind === 'Secret' && object.apiVersion === 'v1' ? storedSecret(object) : { ok: true as const, object };
      if (stored.ok) manifests.push({ object: stored.object, source: where });
      else errors.push(`${where}: ${stored.error}`);
    }
  });
  return { manifests, errors };
}

/** One read of a folder of manifests. */
export interface FolderRead {
  /** Per file (relative to the folder), what it holds. */
  readonly files: ReadonlyMap<string, ManifestSet>;
  /** A hash over every file's name and content: equal fingerprints, equal folders. */
  readonly fingerprint: string;
}

/** Files statted and read at once: enough to overlap their waits, few enough to leave Node's thread pool to others. */
const READ_CONCURRENCY = 32;

/**
 * How long before a read a file must have last changed for its stat alone to
 * vouch for its content: a timestamp's granularity (a jiffy on Linux, two
 * seconds on FAT) could hide a second write of the same size otherwise, as
 * git's "racy" index entries could.
 */
const RACY_MS = 2_000;

/** What a file's stat says of its content: the same stamp, the same content (within RACY_MS, see read). */
interface Stamp {
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

const sameStamp = (a: Stamp, b: Stamp) => a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

/** The clock the racy window is measured on (the file system's), and how a file's text is read. */
export interface FolderIo {
  readonly now: () => number;
  readonly readText: (path: string) => Promise<string>;
}

interface Parsed {
  readonly hash: string;
  readonly set: ManifestSet;
  readonly stamp: Stamp;
}

/**
 * A folder of manifests read again and again: every read lists the folder
 * and stats every file, reads a file only when its stat changed (or it
 * changed too recently for the stat to tell), and parses it only when its
 * content did, so reading an unchanged folder costs a stat per file.
 */
export class ManifestFolder {
  readonly #dir: string;
  readonly #io: FolderIo;
  #parsed = new Map<string, Parsed>();
  /** When the last read began (io.now()). */
  #lastReadAt = Number.NEGATIVE_INFINITY;

  constructor(dir: string, io: Partial<FolderIo> = {}) {
    this.#dir = dir;
    this.#io = { now: io.now ?? Date.now, readText: io.readText ?? ((path) => readFile(path, 'utf8')) };
  }

  async read(): Promise<FolderRead> {
    const startedAt = this.#io.now();
    const trustedBefore = this.#lastReadAt - RACY_MS;
    const realDir = await realpath(this.#dir);
    const paths = await filesUnder(this.#dir, realDir, new Set([realDir]));
    const entries = await mapConcurrently(paths, READ_CONCURRENCY, async (path) => {
      const name = relative(this.#dir, path) || path;
      // A stat answers from the kernel's caches: asked synchronously it costs a few microseconds, through a promise
      // twenty of the event loop's (10k files: some 30 against 200 ms).
      const stamp: Stamp | undefined = statSync(path, { bigint: true, throwIfNoEntry: false });
      if (stamp === undefined) return undefined;
      const known = this.#parsed.get(name);
      if (known && sameStamp(known.stamp, stamp) && Number(stamp.ctimeNs / 1_000_000n) < trustedBefore) return { name, entry: known };
      const text = await this.#io.readText(path).catch(gone(undefined));
      if (text === undefined) return undefined;
      const hash = createHash('sha256').update(text).digest('hex');
      return { name, entry: known?.hash === hash ? { ...known, stamp } : { hash, set: parseManifests(text, name), stamp } };
    });
    const files = new Map<string, ManifestSet>();
    const parsed = new Map<string, Parsed>();
    const fingerprint = createHash('sha256');
    for (const found of entries) {
      if (found === undefined) continue;
      const { name, entry } = found;
      parsed.set(name, entry);
      files.set(name, entry.set);
      fingerprint.update(`${Buffer.byteLength(name)}:${name}${entry.hash}`);
    }
    this.#parsed = parsed;
    this.#lastReadAt = startedAt;
    return { files, fingerprint: fingerprint.digest('hex') };
  }
}

/** Reads the manifest files under `dir` (recursively, in name order, .yaml, .yml and .json as kubectl does) as Kubernetes YAML or JSON manifests. */
export async function readManifests(dir: string): Promise<ManifestSet> {
  const manifests: Manifest[] = [];
  const errors: string[] = [];
  for (const parsed of (await new ManifestFolder(dir).read()).files.values()) {
    manifests.push(...parsed.manifests);
    errors.push(...parsed.errors);
  }
  return { manifests, errors };
}
