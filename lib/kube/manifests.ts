import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../pipeline/model.ts';
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

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
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

/** Reads every file under `dir` (recursively, in name order), each parsed on its own. */
export async function readManifestFiles(dir: string): Promise<Map<string, ManifestSet>> {
  const files = new Map<string, ManifestSet>();
  for (const path of await filesUnder(dir)) {
    const name = relative(dir, path) || path;
    // A file deleted between listing and reading is simply gone.
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text !== undefined) files.set(name, parseManifests(text, name));
  }
  return files;
}

/** Reads every file under `dir` (recursively, in name order) as Kubernetes YAML or JSON manifests. */
export async function readManifests(dir: string): Promise<ManifestSet> {
  const manifests: Manifest[] = [];
  const errors: string[] = [];
  for (const parsed of (await readManifestFiles(dir)).values()) {
    manifests.push(...parsed.manifests);
    errors.push(...parsed.errors);
  }
  return { manifests, errors };
}
