import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, statSync } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, sep } from 'node:path';
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
async function filesUnder(dir: string, realDir: string, seen: Set<string>, linked: { found: boolean }): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort(byName)) {
    const path = join(dir, entry.name);
    let directory = entry.isDirectory();
    let file = entry.isFile();
    if (entry.isSymbolicLink()) {
      linked.found = true;
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
    else files.push(...(await filesUnder(path, real, seen, linked).catch(gone([]))));
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
  /** Equal for two reads of one ManifestFolder that found the same files with the same content, and only then. */
  readonly fingerprint: string;
}

/**
 * The files a watch named, read instead of the whole folder. A quick read
 * comes the moment a watch names a file, before a writer may have finished
 * with it, so it takes only what looks whole (see ManifestFolder.read); the
 * settled read that follows takes what is there.
 */
export interface NamedFiles {
  readonly paths: readonly string[];
  readonly quick: boolean;
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

/** filesUnder's order for names relative to the folder: folder by folder, each in name order. */
function folderOrder(a: string, b: string): number {
  const x = a.split(sep);
  const y = b.split(sep);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return x.length - y.length;
}

/**
 * Whether a file read in a quick read looks whole: it parses, ends its last
 * line (YAML cut at any other point may still parse, as a shorter value; a
 * JSON document cut anywhere does not), and holds something if it held
 * anything (a file truncated for a write in place is empty for a moment).
 */
function looksWhole(name: string, text: string, set: ManifestSet, before: ManifestSet | undefined): boolean {
  if (set.errors.length > 0) return false;
  if (text !== '' && !text.endsWith('\n') && extname(name).toLowerCase() !== '.json') return false;
  return set.manifests.length > 0 || before === undefined || before.manifests.length === 0;
}

/**
 * A folder of manifests read again and again: every read lists the folder
 * and stats every file, reads a file only when its stat changed (or it
 * changed too recently for the stat to tell), and parses it only when its
 * content did, so reading an unchanged folder costs a stat per file. A read
 * of the files a watch named costs those files alone.
 */
export class ManifestFolder {
  readonly #dir: string;
  readonly #io: FolderIo;
  #parsed = new Map<string, Parsed>();
  /** When the last whole read began (io.now()). */
  #lastReadAt = Number.NEGATIVE_INFINITY;
  /** What the last read gave, given again by a read that changes nothing. */
  #last: FolderRead | undefined;
  /** Counts the reads that found the files or their content changed: with the id, the fingerprint. */
  readonly #id = randomUUID();
  #version = 0;
  /** The folder's real path, and whether the last whole read followed a link (then only whole reads name files as it does). */
  #real: { readonly dir: string; readonly linked: boolean } | undefined;

  constructor(dir: string, io: Partial<FolderIo> = {}) {
    this.#dir = dir;
    this.#io = { now: io.now ?? Date.now, readText: io.readText ?? ((path) => readFile(path, 'utf8')) };
  }

  /**
   * Reads the whole folder, or the files named. A named file is read whatever
   * its stat, and dropped when gone; one that is new is taken when it is a plain
   * manifest file reached without a link. A settled read that cannot take a
   * named file so (a folder, a link), and any read before the first whole
   * one, reads the whole folder instead. A quick
   * read leaves such a file, a file gone, and a file that does not look whole
   * (looksWhole) as the last read had them, for the settled read to take.
   */
  async read(named?: NamedFiles): Promise<FolderRead> {
    if (named === undefined || this.#real === undefined) return this.#readWhole();
    if (this.#real.linked) return named.quick ? this.#result(this.#parsed) : this.#readWhole();
    const taken = await this.#readNamed(named, this.#real.dir);
    if (taken === undefined) return this.#readWhole();
    return this.#result(taken);
  }

  async #readWhole(): Promise<FolderRead> {
    const startedAt = this.#io.now();
    const trustedBefore = this.#lastReadAt - RACY_MS;
    const realDir = await realpath(this.#dir);
    const linked = { found: false };
    const paths = await filesUnder(this.#dir, realDir, new Set([realDir]), linked);
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
      return { name, entry: this.#parse(name, text, stamp, known) };
    });
    const parsed = new Map<string, Parsed>();
    for (const found of entries) if (found !== undefined) parsed.set(found.name, found.entry);
    this.#lastReadAt = startedAt;
    this.#real = { dir: realDir, linked: linked.found };
    return this.#result(parsed);
  }

  /** The files after a read of those named; undefined when the whole folder must be read. */
  async #readNamed({ paths, quick }: NamedFiles, realDir: string): Promise<Map<string, Parsed> | undefined> {
    const changed = new Map<string, Parsed | undefined>();
    for (const path of new Set(paths)) {
      const name = relative(this.#dir, path);
      if (name === '' || name.startsWith('..') || isAbsolute(name)) continue;
      const known = this.#parsed.get(name);
      const link = lstatSync(path, { throwIfNoEntry: false });
      if (link === undefined) {
        if (known && !quick) changed.set(name, undefined);
        continue;
      }
      if (link.isDirectory() || link.isSymbolicLink()) {
        if (quick) continue;
        return undefined;
      }
      if (!link.isFile() || !MANIFEST_EXTENSIONS.has(extname(name).toLowerCase())) continue;
      if (known === undefined && (await realpath(dirname(path)).catch(() => undefined)) !== join(realDir, dirname(name))) {
        if (quick) continue;
        return undefined;
      }
      const stamp: Stamp | undefined = statSync(path, { bigint: true, throwIfNoEntry: false });
      const text = stamp && (await this.#io.readText(path).catch(gone(undefined)));
      if (stamp === undefined || text === undefined) {
        if (known && !quick) changed.set(name, undefined);
        continue;
      }
      const entry = this.#parse(name, text, stamp, known);
      // A quick read takes a file only as it was before and after it was read, and whole.
      const after: Stamp | undefined = quick ? statSync(path, { bigint: true, throwIfNoEntry: false }) : stamp;
      if (quick && (after === undefined || !sameStamp(stamp, after) || !looksWhole(name, text, entry.set, known?.set))) continue;
      if (entry !== known) changed.set(name, entry);
    }
    if (changed.size === 0) return this.#parsed;
    const names = [...this.#parsed.keys()];
    const added = [...changed.keys()].filter((name) => !this.#parsed.has(name));
    const ordered = added.length === 0 ? names : [...names, ...added].sort(folderOrder);
    const parsed = new Map<string, Parsed>();
    for (const name of ordered) {
      const entry = changed.has(name) ? changed.get(name) : this.#parsed.get(name);
      if (entry !== undefined) parsed.set(name, entry);
    }
    return parsed;
  }

  /** A file's entry for its text: the known one (with the new stamp) when its content is the same. */
  #parse(name: string, text: string, stamp: Stamp, known: Parsed | undefined): Parsed {
    const hash = createHash('sha256').update(text).digest('hex');
    if (known?.hash === hash) return sameStamp(known.stamp, stamp) ? known : { ...known, stamp };
    return { hash, set: parseManifests(text, name), stamp };
  }

  #result(parsed: Map<string, Parsed>): FolderRead {
    if (this.#last !== undefined && parsed === this.#parsed) return this.#last;
    const before = this.#parsed;
    const same = this.#last !== undefined && before.size === parsed.size && [...parsed].every(([name, entry]) => before.get(name)?.hash === entry.hash);
    if (!same) this.#version += 1;
    this.#parsed = parsed;
    const files = new Map<string, ManifestSet>();
    for (const [name, entry] of parsed) files.set(name, entry.set);
    this.#last = { files, fingerprint: `${this.#id}:${this.#version}` };
    return this.#last;
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
