/**
 * The JSONPath subset the configuration uses to name one field of a
 * Kubernetes object: dotted names, quoted keys and array indexes. Wildcards,
 * filters, slices and recursive descent would select several values where
 * an index key or an ignored field needs exactly one, so they are rejected.
 */
import type { CompiledPath } from './types.ts';
import type { KubeObject } from '../pipeline/model.ts';

type Segment = string | number;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Splits a path into its segments; errors give 1-based character positions. */
class PathParser {
  readonly #source: string;
  #at = 0;

  constructor(source: string) {
    this.#source = source;
  }

  parse(): Segment[] {
    const source = this.#source;
    if (source.startsWith('$')) this.#at = 1;
    const segments: Segment[] = [];
    while (this.#at < source.length) {
      const char = source[this.#at];
      if (char === '[') segments.push(this.#bracket());
      else if (char === '.') segments.push(this.#dotted());
      // Only the first name may go without its dot (`metadata.name`).
      else if (this.#at === 0) segments.push(this.#name());
      else this.#fail(`unexpected ${JSON.stringify(char)}`);
    }
    if (segments.length === 0) throw new Error('empty path');
    return segments;
  }

  #fail(message: string, position = this.#at): never {
    throw new Error(`${message} at ${position + 1}`);
  }

  #dotted(): string {
    if (this.#source[this.#at + 1] === '.') this.#fail('recursive descent is not supported');
    this.#at++;
    return this.#name();
  }

  #name(): string {
    const pattern = /[A-Za-z0-9_-]+/y;
    pattern.lastIndex = this.#at;
    const name = pattern.exec(this.#source)?.[0];
    if (name !== undefined) {
      this.#at += name.length;
      return name;
    }
    const char = this.#source[this.#at];
    if (char === undefined) this.#fail('expected a field name');
    if (char === '*') this.#fail('wildcards are not supported');
    return this.#fail(`expected a field name, got ${JSON.stringify(char)}`);
  }

  #bracket(): Segment {
    const open = this.#at;
    this.#at++;
    const char = this.#source[this.#at];
    let segment: Segment;
    if (char === "'" || char === '"') segment = this.#quoted(char);
    else if (char !== undefined && char >= '0' && char <= '9') segment = this.#index();
    else if (char === undefined) return this.#fail('unclosed bracket', open);
    else if (char === '*') return this.#fail('wildcards are not supported', open);
    else if (char === '?') return this.#fail('filters are not supported', open);
    else if (char === '-') return this.#fail('negative indexes are not supported', open);
    else if (char === ':') return this.#fail('slices are not supported', open);
    else return this.#fail(`expected an index or a quoted key, got ${JSON.stringify(char)}`);
    this.#close(open);
    return segment;
  }

  #close(open: number): void {
    const char = this.#source[this.#at];
    if (char === ']') this.#at++;
    else if (char === undefined) this.#fail('unclosed bracket', open);
    else if (char === ':') this.#fail('slices are not supported', open);
    else if (char === ',') this.#fail('unions are not supported', open);
    else this.#fail(`expected "]", got ${JSON.stringify(char)}`);
  }

  #index(): number {
    const digits = /\d+/y;
    digits.lastIndex = this.#at;
    const text = digits.exec(this.#source)![0];
    this.#at += text.length;
    return Number(text);
  }

  /** A quoted key; a backslash takes the next character literally, so keys may contain either quote. */
  #quoted(quote: string): string {
    const open = this.#at;
    let key = '';
    for (let at = open + 1; at < this.#source.length; at++) {
      const char = this.#source[at]!;
      if (char === quote) {
        this.#at = at + 1;
        return key;
      }
      if (char === '\\') at++;
      key += this.#source[at] ?? '';
    }
    return this.#fail('unclosed quote', open);
  }
}

function child(value: unknown, segment: Segment): unknown {
  if (typeof segment === 'number') return Array.isArray(value) ? value[segment] : undefined;
  // Own properties only: `constructor` or `__proto__` must not reach the prototype.
  return isRecord(value) && Object.hasOwn(value, segment) ? value[segment] : undefined;
}

function scalarAt(object: unknown, segments: readonly Segment[]): string | undefined {
  let value = object;
  for (const segment of segments) value = child(value, segment);
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      return undefined;
  }
}

/**
 * Compiles a path such as `metadata.namespace`,
 * `metadata.labels['kubernetes.io/service-name']` or `spec.ports[0].name`;
 * a leading `$` or `.` is accepted and ignored. Throws an Error naming the
 * problem and its 1-based position (`unclosed bracket at 16`).
 */
export function compilePath(source: string): CompiledPath {
  const segments = new PathParser(source).parse();
  return { source, segments, get: (object) => scalarAt(object, segments) };
}

/** Copies only along the path, so the untouched parts stay shared with the original. */
function without(value: unknown, segments: readonly Segment[], depth: number): unknown {
  const segment = segments[depth]!;
  const last = depth === segments.length - 1;
  if (typeof segment === 'number') {
    if (!Array.isArray(value) || segment >= value.length) return value;
    if (last) return value.toSpliced(segment, 1);
    const inner = without(value[segment], segments, depth + 1);
    return inner === value[segment] ? value : value.with(segment, inner);
  }
  if (!isRecord(value) || !Object.hasOwn(value, segment)) return value;
  if (last) {
    // Built without the key rather than spread and deleted from: a delete turns the copy into a slower, larger dictionary object.
    return Object.fromEntries(Object.entries(value).filter(([key]) => key !== segment));
  }
  const inner = without(value[segment], segments, depth + 1);
  return inner === value[segment] ? value : { ...value, [segment]: inner };
}

/**
 * The object without the field at `path` (an array element is removed, the
 * later ones move up). The object itself is never mutated, and comes back
 * as is when the path is absent, so unchanged objects stay identical.
 */
export function withoutPath(object: KubeObject, path: CompiledPath): KubeObject {
  return without(object, path.segments, 0) as KubeObject;
}
