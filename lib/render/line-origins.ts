import type { LineOrigin, RenderOrigins } from '../pipeline/model.ts';

/**
 * The origins of one rendered file, recorded compactly while rendering: two
 * numbers per output line (template, template line) and object names only
 * for lines that carry values from objects. A render of tens of thousands of
 * lines records them at the cost of a few array pushes; LineOrigin objects
 * are only made when someone asks (an error to explain).
 */
export class FileOrigins {
  readonly templates: string[] = [];
  readonly #templateIndex = new Map<string, number>();
  /** Pairs: template index, template line; one pair per output line. */
  readonly lines: number[] = [];
  readonly objects = new Map<number, string[]>();

  templateIndex(name: string): number {
    let index = this.#templateIndex.get(name);
    if (index === undefined) {
      index = this.templates.length;
      this.templates.push(name);
      this.#templateIndex.set(name, index);
    }
    return index;
  }

  get count(): number {
    return this.lines.length / 2;
  }

  addObject(line: number, object: string): void {
    const list = this.objects.get(line);
    if (!list) this.objects.set(line, [object]);
    else if (!list.includes(object)) list.push(object);
  }

  materialise(): LineOrigin[] {
    const origins: LineOrigin[] = [];
    for (let i = 0; i < this.count; i++) {
      origins.push({ template: this.templates[this.lines[2 * i]!]!, line: this.lines[2 * i + 1]!, objects: this.objects.get(i) ?? [] });
    }
    return origins;
  }
}

/** The origins of every file of a render, as the ReadonlyMap consumers read, built on first use. */
export class CompactOrigins implements RenderOrigins {
  readonly #files: ReadonlyMap<string, FileOrigins>;
  #map: Map<string, readonly LineOrigin[]> | undefined;

  constructor(files: ReadonlyMap<string, FileOrigins>) {
    this.#files = files;
  }

  #materialised(): Map<string, readonly LineOrigin[]> {
    this.#map ??= new Map([...this.#files].map(([target, file]) => [target, file.materialise()]));
    return this.#map;
  }

  get size(): number {
    return this.#files.size;
  }
  get(target: string): readonly LineOrigin[] | undefined {
    return this.#materialised().get(target);
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
