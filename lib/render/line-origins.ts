import type { LineOrigin, RenderOrigins, ValueSource } from '../pipeline/model.ts';

/**
 * Every (template, template line) a writer can emit, numbered once when the
 * templates are compiled: an output line's origin is then one number, and a
 * reused section's origins are a list of numbers to copy, valid in any file
 * the same writer renders.
 */
export class OriginTable {
  readonly #templates: string[] = [];
  readonly #lines: number[] = [];
  readonly #ids = new Map<string, Map<number, number>>();

  id(template: string, line: number): number {
    let byLine = this.#ids.get(template);
    if (!byLine) {
      byLine = new Map();
      this.#ids.set(template, byLine);
    }
    let id = byLine.get(line);
    if (id === undefined) {
      id = this.#templates.length;
      this.#templates.push(template);
      this.#lines.push(line);
      byLine.set(line, id);
    }
    return id;
  }

  template(id: number): string {
    return this.#templates[id]!;
  }

  line(id: number): number {
    return this.#lines[id]!;
  }
}

const NONE: readonly ValueSource[] = Object.freeze([]);

/** One line's origin; the objects' names are made only when asked (an error to explain asks for a few). */
class Origin implements LineOrigin {
  readonly template: string;
  readonly line: number;
  readonly sources: readonly ValueSource[];

  constructor(template: string, line: number, sources: readonly ValueSource[]) {
    this.template = template;
    this.line = line;
    this.sources = sources;
  }

  get objects(): readonly string[] {
    return this.sources.length === 0 ? NO_NAMES : this.sources.map((source) => source.label);
  }
}

const NO_NAMES: readonly string[] = Object.freeze([]);

/** The objects on one line: one, or several. */
export type SourceEntry = ValueSource | readonly ValueSource[];

/**
 * The origins of one rendered file, recorded compactly while rendering: one
 * origin number per output line, and object names only for the lines that
 * carry values from objects. A render of tens of thousands of lines records
 * them at the cost of array pushes; LineOrigin objects are only made when
 * someone asks (an error to explain).
 */
export class FileOrigins {
  readonly table: OriginTable;
  /** One OriginTable id per output line. */
  readonly ids: number[] = [];
  /**
   * Lines that carry objects, ascending, with their object names. Lines are
   * only ever added at the end of a file, so objects arrive in line order
   * and a line's list is always the last one.
   */
  readonly objectLines: number[] = [];
  /** One object per line mostly: kept as is, a list only for a line with several. Never changed once made. */
  readonly objectLists: SourceEntry[] = [];

  constructor(table: OriginTable) {
    this.table = table;
  }

  get count(): number {
    return this.ids.length;
  }

  /** Notes a value of `source`'s object on `line`; each object once per line, with the first field seen. */
  addObject(line: number, source: ValueSource): void {
    const last = this.objectLines.length - 1;
    if (last >= 0 && this.objectLines[last] === line) {
      const entry = this.objectLists[last]!;
      // A new list rather than a changed one: entries are shared with kept fragments.
      if (!Array.isArray(entry)) {
        if ((entry as ValueSource).object !== source.object) this.objectLists[last] = [entry as ValueSource, source];
      } else if (!entry.some((known) => known.object === source.object)) this.objectLists[last] = [...entry, source];
    } else {
      this.objectLines.push(line);
      this.objectLists.push(source);
    }
  }

  /** Appends the objects of whole lines copied from an earlier render: `lines` relative to `first`, which nothing is on yet. */
  addLines(first: number, lines: readonly number[], entries: readonly SourceEntry[]): void {
    for (let i = 0; i < lines.length; i++) {
      this.objectLines.push(first + lines[i]!);
      this.objectLists.push(entries[i]!);
    }
  }

  materialise(): LineOrigin[] {
    const origins: LineOrigin[] = [];
    let next = 0;
    for (let line = 0; line < this.ids.length; line++) {
      const id = this.ids[line]!;
      let sources: readonly ValueSource[] = NONE;
      if (this.objectLines[next] === line) {
        const entry = this.objectLists[next++]!;
        sources = Array.isArray(entry) ? entry : [entry as ValueSource];
      }
      origins.push(new Origin(this.table.template(id), this.table.line(id), sources));
    }
    return origins;
  }
}

/** The origins of every file of a render, as the ReadonlyMap consumers read, built on first use. */
export class CompactOrigins implements RenderOrigins {
  readonly #files: ReadonlyMap<string, FileOrigins>;
  /** Each file's origins, made the first time that file is asked for. */
  readonly #made = new Map<string, readonly LineOrigin[]>();

  constructor(files: ReadonlyMap<string, FileOrigins>) {
    this.#files = files;
  }

  #materialised(): Map<string, readonly LineOrigin[]> {
    return new Map([...this.#files.keys()].map((target) => [target, this.get(target)!]));
  }

  get size(): number {
    return this.#files.size;
  }
  get(target: string): readonly LineOrigin[] | undefined {
    let made = this.#made.get(target);
    if (made === undefined) {
      const file = this.#files.get(target);
      if (!file) return undefined;
      made = file.materialise();
      this.#made.set(target, made);
    }
    return made;
  }
  has(target: string): boolean {
    return this.#files.has(target);
  }
  keys(): MapIterator<string> {
    return this.#files.keys();
  }
  entries(): MapIterator<[string, readonly LineOrigin[]]> {
    return this.#materialised().entries();
  }
  values(): MapIterator<readonly LineOrigin[]> {
    return this.#materialised().values();
  }
  forEach(callback: (value: readonly LineOrigin[], key: string, map: ReadonlyMap<string, readonly LineOrigin[]>) => void): void {
    this.#materialised().forEach((value, key) => callback(value, key, this));
  }
  [Symbol.iterator](): MapIterator<[string, readonly LineOrigin[]]> {
    return this.entries();
  }
}
