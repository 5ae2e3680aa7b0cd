/**
 * The boundaries of lib/ and streams/ that the README states, checked on
 * every `npm test` rather than kept by convention:
 * - no import cycle between files, type-only imports included (a cycle of
 *   types still ties the files into one unit that must change together);
 * - no cycle between the folders of lib/ (a folder's files count as one,
 *   lib/'s own top-level files one by one): `config` below `kube`, `render`
 *   and `haproxy`, not beside them;
 * - lib/ imports neither rxjs nor streams/: its libraries are plain and
 *   tested directly, streams/ composes them;
 * - no file above a size budget: one that grows past it does several jobs.
 *
 * Imports are read from the source text. The project's import forms are
 * few (static `import ... from`, `export ... from` and `import('...')`,
 * always with the file's own extension), and a form this misses would show
 * as a failed resolution of the specifier rather than pass unseen.
 * Run: `node .ci/check-boundaries.ts` (exits 1 and lists every breach).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BoundaryRules {
  /** Folders whose .ts files are checked, relative to the root. */
  readonly roots: readonly string[];
  /** Folders whose subfolders must not import one another in a cycle. */
  readonly layeredFolders: readonly string[];
  /** Imports a folder must not make: package names (and their subpaths) or folders of the project. */
  readonly forbidden: readonly { readonly from: string; readonly packages: readonly string[]; readonly folders: readonly string[] }[];
  readonly maxLines: number;
}

export const projectRules: BoundaryRules = {
  roots: ['lib', 'streams'],
  layeredFolders: ['lib'],
  forbidden: [{ from: 'lib', packages: ['rxjs'], folders: ['streams'] }],
  maxLines: 400,
};

interface SourceFile {
  readonly path: string;
  readonly lines: number;
  /** Specifiers in the order they appear. */
  readonly specifiers: readonly string[];
}

const clause = String.raw`(?:type\s+)?(?:[\w$]+\s*,?\s*)?(?:\*\s*as\s+[\w$]+|\{[^}]*\})?`;
const importForms = [
  new RegExp(String.raw`^\s*import\s+${clause}\s*from\s*(['"])([^'"\n]+)\1`, 'gm'),
  /^\s*import\s*(['"])([^'"\n]+)\1/gm,
  /^\s*export\s+(?:type\s+)?(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])([^'"\n]+)\1/gm,
  /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
];

export function importSpecifiers(source: string): string[] {
  const found: { at: number; specifier: string }[] = [];
  for (const form of importForms) for (const match of source.matchAll(form)) found.push({ at: match.index, specifier: match[2]! });
  return found.sort((a, b) => a.at - b.at).map(({ specifier }) => specifier);
}

async function sourceFiles(root: string, folder: string): Promise<string[]> {
  const start = join(root, folder);
  if (!existsSync(start)) return [];
  const entries = await readdir(start, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

function lineCount(text: string): number {
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const under = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

/** Cycles of a graph, as strongly connected components of more than one node, each from its first node in order. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** The module a file belongs to in the folder graph: its folder under a layered root, or the file itself at the root's top. */
function folderOf(path: string, layered: readonly string[]): string | undefined {
  const root = layered.find((folder) => path.startsWith(`${folder}/`));
  if (root === undefined) return undefined;
  const rest = path.slice(root.length + 1).split('/');
  return rest.length === 1 ? path : `${root}/${rest[0]}`;
}

/** Every breach of the rules under `root`, one line each; none when the tree keeps them. */
export async function checkBoundaries(root: string, rules: BoundaryRules = projectRules): Promise<string[]> {
  const files = new Map<string, SourceFile>();
  for (const folder of rules.roots) {
    for (const path of await sourceFiles(root, folder)) {
      const text = await readFile(join(root, path), 'utf8');
      files.set(path, { path, lines: lineCount(text), specifiers: importSpecifiers(text) });
    }
  }
  const breaches: string[] = [];
  const fileGraph = new Map<string, string[]>();
  /** Folder to folder, with the first file import that makes the edge. */
  const folderGraph = new Map<string, Map<string, string>>();
  for (const file of files.values()) {
    if (file.lines > rules.maxLines) breaches.push(`${file.path}: ${file.lines} lines, above the budget of ${rules.maxLines}: split it by concern`);
    const targets: string[] = [];
    for (const specifier of file.specifiers) {
      const rule = rules.forbidden.find(({ from }) => under(file.path, from));
      if (!specifier.startsWith('.')) {
        const banned = rule?.packages.find((name) => specifier === name || specifier.startsWith(`${name}/`));
        if (banned !== undefined) breaches.push(`${file.path}: imports ${specifier}, which ${rule!.from}/ must not use`);
        continue;
      }
      const target = relative(root, resolve(root, dirname(file.path), specifier))
        .split(sep)
        .join('/');
      const folder = rule?.folders.find((name) => under(target, name));
      if (folder !== undefined) breaches.push(`${file.path}: imports ${specifier}, from ${folder}/, which ${rule!.from}/ must not use`);
      if (files.has(target)) targets.push(target);
      else if (!existsSync(join(root, target))) breaches.push(`${file.path}: imports ${specifier}, which is no file`);
    }
    fileGraph.set(file.path, targets);
    const from = folderOf(file.path, rules.layeredFolders);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = folderOf(target, rules.layeredFolders);
      if (to === undefined || to === from) continue;
      if (!folderGraph.has(from)) folderGraph.set(from, new Map());
      if (!folderGraph.get(from)!.has(to)) folderGraph.get(from)!.set(to, `${file.path} imports ${target}`);
    }
  }
  for (const cycle of cyclesOf(fileGraph)) breaches.push(`import cycle between files: ${cycle.join(', ')}`);
  const folders = new Map([...folderGraph].map(([folder, targets]) => [folder, [...targets.keys()].sort()]));
  for (const cycle of cyclesOf(folders)) {
    const edges = cycle.flatMap((from) => (folders.get(from) ?? []).filter((to) => cycle.includes(to)).map((to) => `${from} -> ${to}: ${folderGraph.get(from)!.get(to)!}`));
    breaches.push(`import cycle between folders: ${cycle.join(', ')} (${edges.join('; ')})`);
  }
  return breaches;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const breaches = await checkBoundaries(root);
  for (const breach of breaches) process.stderr.write(`${breach}\n`);
  process.stdout.write(`boundaries: ${breaches.length === 0 ? 'kept' : `${breaches.length} breaches`} (${projectRules.roots.join(', ')})\n`);
  process.exitCode = breaches.length === 0 ? 0 : 1;
}
