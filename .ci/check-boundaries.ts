/**
 * The boundaries of lib/ and streams/ that CONTRIBUTING.md states, checked on
 * every `npm test` rather than kept by convention:
 * - no import cycle between files, type-only imports included (a cycle of
 *   types still ties the files into one unit that must change together);
 * - no cycle between the folders of lib/ (a folder's files count as one,
 *   lib/'s own top-level files one by one);
 * - lib/'s folders in layers, each importing only from the layers below
 *   it: the direction of every import between folders is data here
 *   (`projectRules.layers`), and the imports that still go the wrong way
 *   are listed by name and count (`projectRules.wrongWay`), each with why,
 *   so the list can only shrink;
 * - lib/ imports neither rxjs nor streams/: its libraries are plain and
 *   tested directly, streams/ composes them;
 * - no file above a hard cap of lines, and none above a lower budget
 *   unless listed with its size, which it may not outgrow.
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

/** Modules of lib/ (a folder, or a file at lib/'s top) that may import one another's layer only downwards. */
export interface Layer {
  readonly name: string;
  readonly modules: readonly string[];
}

/** Imports between two modules that go against the layers today: a debt, named so it is paid rather than hidden. */
export interface WrongWayImports {
  readonly from: string;
  readonly to: string;
  /** How many file-to-file imports make the edge: it may not grow, and is lowered as it shrinks. */
  readonly imports: number;
  readonly why: string;
}

/** A file above the line budget, with its size when listed: it may not grow past it. */
export interface LargeFile {
  readonly path: string;
  readonly lines: number;
  readonly why: string;
}

export interface BoundaryRules {
  /** Folders whose .ts files are checked, relative to the root. */
  readonly roots: readonly string[];
  /** Folders whose subfolders must not import one another in a cycle. */
  readonly layeredFolders: readonly string[];
  /** Imports a folder must not make: package names (and their subpaths) or folders of the project. */
  readonly forbidden: readonly { readonly from: string; readonly packages: readonly string[]; readonly folders: readonly string[] }[];
  /** The modules of the layered folders, bottom layer first; every module is in exactly one. */
  readonly layers: readonly Layer[];
  /** The imports between modules that go against the layers today, by module pair. */
  readonly wrongWay: readonly WrongWayImports[];
  /** No file above this, listed or not. */
  readonly maxLines: number;
  /** No file above this unless listed in largeFiles. */
  readonly budgetLines: number;
  /** The files above budgetLines, each with why it is still one job. */
  readonly largeFiles: readonly LargeFile[];
}

/**
 * lib/ as it stands, bottom layer first. The directions of issue 27: the
 * translators (ingress, gateway) and the HAProxy map model (map-model) sit
 * above the representation of routes (routing) and beside one another, so
 * none imports another: a translator produces the representation, the map
 * model reads it alone. The routing view (routing-view) composes them over
 * the stores. The template renderer (render) sits below every domain model,
 * so it takes its views injected. The imports that break those directions
 * would be listed in `wrongWay`, to be removed: none does today.
 */
export const projectRules: BoundaryRules = {
  roots: ['lib', 'streams'],
  layeredFolders: ['lib'],
  forbidden: [{ from: 'lib', packages: ['rxjs'], folders: ['streams'] }],
  layers: [
    { name: 'helpers', modules: ['lib/clock.ts', 'lib/collections', 'lib/compare.ts', 'lib/container', 'lib/error-message.ts', 'lib/escape.ts', 'lib/lua'] },
    { name: 'pipeline values and the Data Plane API client', modules: ['lib/dataplane', 'lib/pipeline'] },
    { name: 'Kubernetes syntax, and the checks of object fields for where their values land', modules: ['lib/kube-syntax', 'lib/object-fields'] },
    { name: 'controller configuration', modules: ['lib/config'] },
    { name: 'template renderer and retry delays', modules: ['lib/backoff.ts', 'lib/render'] },
    { name: 'Kubernetes and HAProxy adapters', modules: ['lib/haproxy', 'lib/kube'] },
    { name: 'object store', modules: ['lib/store'] },
    { name: 'representation of routes', modules: ['lib/routing'] },
    { name: 'annotation readers', modules: ['lib/annotations'] },
    // Beside one another: a translator produces the representation, the map model reads it, neither knows the others.
    { name: 'translators and the HAProxy map model', modules: ['lib/gateway', 'lib/ingress', 'lib/map-model'] },
    // Stores in, through the translators, the map model out: the view templates render as `routes`.
    { name: 'routing view', modules: ['lib/routing-view'] },
    { name: 'deployment, validation and admission', modules: ['lib/deploy', 'lib/validation', 'lib/webhook'] },
    { name: 'command line and telemetry', modules: ['lib/cli', 'lib/telemetry'] },
  ],
  wrongWay: [],
  // 400 lines is where a file usually starts doing a second job; 600 is where it certainly does. Between
  // the two a file is listed with its reason and may not grow, so growth is a reviewed change, not a split
  // into files of a few lines made to pass a count.
  maxLines: 600,
  budgetLines: 400,
  largeFiles: [
    {
      path: 'lib/map-model/types.ts',
      lines: 406,
      why: 'the map model templates read, one type after another: one description, the source of docs/reference/template-view.md, which a split would scatter',
    },
  ],
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

/** Imports between modules: from, then to, then every `file imports file` that makes the edge, in order. */
type ModuleGraph = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

/** Breaches of the layers: modules in no layer or in two, layers naming no module, and imports that do not go down. */
function layerBreaches(modules: ReadonlySet<string>, graph: ModuleGraph, rules: BoundaryRules): string[] {
  const breaches: string[] = [];
  const layerOf = new Map<string, number>();
  rules.layers.forEach((layer, index) => {
    for (const module of layer.modules) {
      const earlier = layerOf.get(module);
      if (earlier !== undefined) breaches.push(`${module} is in two layers, "${rules.layers[earlier]!.name}" and "${layer.name}"`);
      else layerOf.set(module, index);
      if (!modules.has(module)) breaches.push(`layer "${layer.name}" lists ${module}, which holds no source file`);
    }
  });
  for (const module of [...modules].sort()) if (!layerOf.has(module)) breaches.push(`${module} is in no layer: add it to the layers in .ci/check-boundaries.ts`);
  const counted = new Set<WrongWayImports>();
  for (const [from, targets] of [...graph].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [to, imports] of [...targets].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const [fromLayer, toLayer] = [layerOf.get(from), layerOf.get(to)];
      if (fromLayer === undefined || toLayer === undefined || toLayer < fromLayer) continue;
      const where = `${to} (layer "${rules.layers[toLayer]!.name}") is ${toLayer === fromLayer ? 'beside' : 'above'} ${from} (layer "${rules.layers[fromLayer]!.name}")`;
      const listed = rules.wrongWay.find((entry) => entry.from === from && entry.to === to);
      if (listed === undefined) {
        for (const one of imports) breaches.push(`${one}: ${where}; a module imports only from the layers below its own`);
        continue;
      }
      counted.add(listed);
      if (imports.length > listed.imports)
        breaches.push(`${from} -> ${to}: ${imports.length} imports go the wrong way, above the ${listed.imports} listed: ${where}, and the list only shrinks`);
      if (imports.length < listed.imports)
        breaches.push(`${from} -> ${to}: ${imports.length} imports go the wrong way, fewer than the ${listed.imports} listed: lower the entry to ${imports.length}`);
    }
  }
  for (const entry of rules.wrongWay) if (!counted.has(entry)) breaches.push(`${entry.from} -> ${entry.to} is listed as going the wrong way, but no import does: remove the entry`);
  return breaches;
}

/** Breaches of the line cap, of the budget below it, and entries of largeFiles that no longer hold. */
function sizeBreaches(files: ReadonlyMap<string, SourceFile>, rules: BoundaryRules): string[] {
  const breaches: string[] = [];
  for (const file of files.values()) {
    const listed = rules.largeFiles.find((entry) => entry.path === file.path);
    if (file.lines > rules.maxLines) breaches.push(`${file.path}: ${file.lines} lines, above the cap of ${rules.maxLines}: split it by concern`);
    else if (file.lines > rules.budgetLines && listed === undefined)
      breaches.push(`${file.path}: ${file.lines} lines, above the budget of ${rules.budgetLines}: split it by concern, or list it in largeFiles with why it is one job`);
    else if (listed !== undefined && file.lines > listed.lines) breaches.push(`${file.path}: ${file.lines} lines, grown past the ${listed.lines} listed in largeFiles: split it by concern`);
  }
  for (const entry of rules.largeFiles) {
    const file = files.get(entry.path);
    if (file === undefined) breaches.push(`${entry.path} is listed in largeFiles but is no checked file: remove the entry`);
    else if (file.lines <= rules.budgetLines) breaches.push(`${entry.path} is listed in largeFiles but has ${file.lines} lines, within the budget of ${rules.budgetLines}: remove the entry`);
  }
  return breaches;
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
  const modules = new Set<string>();
  const moduleGraph = new Map<string, Map<string, string[]>>();
  for (const file of files.values()) {
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
      if (files.has(target)) {
        if (!targets.includes(target)) targets.push(target);
      } else if (!existsSync(join(root, target))) breaches.push(`${file.path}: imports ${specifier}, which is no file`);
    }
    fileGraph.set(file.path, targets);
    const from = folderOf(file.path, rules.layeredFolders);
    if (from === undefined) continue;
    modules.add(from);
    for (const target of targets) {
      const to = folderOf(target, rules.layeredFolders);
      if (to === undefined || to === from) continue;
      if (!moduleGraph.has(from)) moduleGraph.set(from, new Map());
      const edge = moduleGraph.get(from)!;
      edge.set(to, [...(edge.get(to) ?? []), `${file.path} imports ${target}`]);
    }
  }
  breaches.push(...sizeBreaches(files, rules));
  for (const cycle of cyclesOf(fileGraph)) breaches.push(`import cycle between files: ${cycle.join(', ')}`);
  const folders = new Map([...moduleGraph].map(([folder, targets]) => [folder, [...targets.keys()].sort()]));
  for (const cycle of cyclesOf(folders)) {
    const edges = cycle.flatMap((from) => (folders.get(from) ?? []).filter((to) => cycle.includes(to)).map((to) => `${from} -> ${to}: ${moduleGraph.get(from)!.get(to)![0]!}`));
    breaches.push(`import cycle between folders: ${cycle.join(', ')} (${edges.join('; ')})`);
  }
  breaches.push(...layerBreaches(modules, moduleGraph, rules));
  return breaches;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const breaches = await checkBoundaries(root);
  for (const breach of breaches) process.stderr.write(`${breach}\n`);
  process.stdout.write(`boundaries: ${breaches.length === 0 ? 'kept' : `${breaches.length} breaches`} (${projectRules.roots.join(', ')})\n`);
  process.exitCode = breaches.length === 0 ? 0 : 1;
}
