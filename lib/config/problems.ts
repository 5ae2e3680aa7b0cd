/**
 * What is wrong with a configuration, each problem at the path of the field
 * at fault, listed in the order of the document so the author reads them
 * top to bottom; and the words the readers describe values with.
 */

export type Path = readonly (string | number)[];

export type Mapping = Readonly<Record<string, unknown>>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isMapping(value)) return 'a mapping';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

export function formatPath(path: Path): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`)).join('');
}

function pathKey(path: Path): string {
  return JSON.stringify(path);
}

/** Every path of the document in document order (js-yaml keeps mapping keys in source order). */
function documentOrder(document: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const seen = new Set<object>();
  const visit = (value: unknown, path: Path): void => {
    order.set(pathKey(path), order.size);
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, [...path, i]));
    else for (const [key, item] of Object.entries(value)) visit(item, [...path, key]);
  };
  visit(document, []);
  return order;
}

/** A missing field sorts at its closest present ancestor. */
function rank(order: ReadonlyMap<string, number>, path: Path): number {
  for (let length = path.length; length > 0; length--) {
    const found = order.get(pathKey(path.slice(0, length)));
    if (found !== undefined) return found;
  }
  return 0;
}

export class Problems {
  readonly #found: { readonly path: Path; readonly message: string }[] = [];

  add(path: Path, message: string): void {
    this.#found.push({ path, message });
  }

  get none(): boolean {
    return this.#found.length === 0;
  }

  /**
   * Whether nothing was reported at or under any of the paths. Checks that
   * combine several fields run only on fields that loaded cleanly, so that
   * one mistake is not reported twice.
   */
  clean(...paths: Path[]): boolean {
    return !this.#found.some((problem) => paths.some((path) => path.every((segment, i) => problem.path[i] === segment)));
  }

  /** Problems are found section by section; the author reads them top to bottom. */
  messages(document: unknown): string[] {
    const order = documentOrder(document);
    return this.#found
      .map((problem) => ({ problem, rank: rank(order, problem.path) }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ problem }) => (problem.path.length === 0 ? problem.message : `${formatPath(problem.path)}: ${problem.message}`));
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** `owner` names what the field belongs to when the known fields depend on it. */
export function unknownField(key: string, known: readonly string[], owner: string | undefined): string {
  const field = owner === undefined ? 'unknown field' : `unknown field for ${owner}`;
  const distance = (name: string): number => editDistance(key.toLowerCase(), name.toLowerCase());
  const closest = known.toSorted((a, b) => distance(a) - distance(b))[0];
  if (closest !== undefined && distance(closest) <= 2) return `${field} (did you mean ${closest}?)`;
  return `${field} (expected ${known.length === 1 ? '' : 'one of '}${known.join(', ')})`;
}
