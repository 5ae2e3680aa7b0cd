import type { LookupTag } from './compiled-template.ts';
import type { RootNameWatch } from './safe-writer.ts';

/**
 * The old names of views templates still read, told once per template or
 * partial and name for as long as the renderer lives (one configuration):
 * not at every render, which would repeat the same line for as long as the
 * configuration runs.
 */
export class DeprecatedNames implements RootNameWatch {
  readonly names: ReadonlySet<string>;
  readonly #current: ReadonlyMap<string, string>;
  readonly #told = new Set<string>();
  #untold: string[] = [];

  /** `current`: each old name to the name to read instead. */
  constructor(current: ReadonlyMap<string, string>) {
    this.#current = current;
    this.names = new Set(current.keys());
  }

  read(name: string, tag: LookupTag): void {
    const key = `${tag.template}\u0000${name}`;
    if (this.#told.has(key)) return;
    this.#told.add(key);
    const current = this.#current.get(name)!;
    this.#untold.push(`${tag.template}: line ${tag.line}: reads \`${name}\`, the old name of \`${current}\`, which goes in the next release: read \`${current}\` instead`);
  }

  /** What was found since the last call (a failed render's finds are told by the next render that succeeds). */
  take(): readonly string[] {
    const found = this.#untold;
    this.#untold = [];
    return found;
  }
}
