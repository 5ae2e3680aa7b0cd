import Mustache from 'mustache';
import { unsafeRawReason, unsafeWordReason } from './escape.ts';
import { FileOrigins } from './line-origins.ts';
import type { AccessTracker, Provenance } from './resource-views.ts';

/** A value a template tried to insert that is not safe where it stands. */
export interface Violation {
  /** The template or partial, and the line of the tag. */
  readonly template: string;
  readonly line: number;
  readonly tag: string;
  readonly reason: string;
  /** The object the value came from; absent for values that did not come from one. */
  readonly provenance: Provenance | undefined;
}

type Token = [string, string, number, number, ...unknown[]];
type Context = Mustache.Context & { cache: Record<string, unknown>; view: unknown };

/**
 * A Mustache writer that checks every inserted value for HAProxy instead of
 * HTML-escaping it (see escape.ts): an unsafe value is left out and recorded
 * with its template, line and the object that carried it.
 *
 * It also maps every output line to the template line that produced it and
 * the objects whose values are on it, so an `haproxy -c` error can be traced
 * back. Mustache produces the leaves (text and values) in output order, so
 * counting newlines as they are produced gives each leaf its output line.
 */
export class SafeWriter extends Mustache.Writer {
  readonly #tracker: AccessTracker;
  /** Template sources being rendered (partials nest) and their names. */
  readonly #sources: string[] = [];
  readonly #names: string[] = [];
  #origins = new FileOrigins();
  #atLineStart = true;
  readonly #lineStarts = new Map<string, number[]>();
  violations: Violation[] = [];

  constructor(tracker: AccessTracker) {
    super();
    this.#tracker = tracker;
  }

  /** Renders one template as one output file; returns the text and its line origins. */
  renderFile(
    name: string,
    tokens: Parameters<Mustache.Writer['renderTokens']>[0],
    context: Mustache.Context,
    partials: Record<string, string>,
    source: string,
  ): { text: string; origins: FileOrigins } {
    this.#origins = new FileOrigins();
    this.#atLineStart = true;
    this.#names.push(name);
    try {
      const text = this.renderTokens(tokens, context, partials, source);
      return { text, origins: this.#origins };
    } finally {
      this.#names.pop();
    }
  }

  override renderPartial(
    token: string[],
    context: Mustache.Context,
    partials?: Parameters<Mustache.Writer['renderPartial']>[2],
    config?: Parameters<Mustache.Writer['renderPartial']>[3],
  ): string {
    this.#names.push(`templates.partials.${token[1]}`);
    try {
      return super.renderPartial(token, context, partials, config);
    } finally {
      this.#names.pop();
    }
  }

  override rawValue(token: string[]): string {
    const text = token[1]!;
    this.#emit(text, Number(token[2]), undefined);
    return text;
  }

  override renderTokens(
    tokens: Parameters<Mustache.Writer['renderTokens']>[0],
    context: Mustache.Context,
    partials?: Parameters<Mustache.Writer['renderTokens']>[2],
    originalTemplate?: string,
    config?: Parameters<Mustache.Writer['renderTokens']>[4],
  ): string {
    this.#sources.push(originalTemplate ?? '');
    try {
      return super.renderTokens(tokens, context, partials, originalTemplate, config);
    } finally {
      this.#sources.pop();
    }
  }

  override escapedValue(token: string[], context: Mustache.Context): string {
    return this.#insert(token as unknown as Token, context as Context, unsafeWordReason);
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.#insert(token as unknown as Token, context as Context, unsafeRawReason);
  }

  #insert(token: Token, context: Context, unsafe: (value: string) => string | undefined): string {
    const name = token[1];
    this.#tracker.beforeLookup();
    const value: unknown = context.lookup(name);
    let text: string | undefined;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
    else if (typeof value === 'boolean') text = String(value);
    else if (value === undefined || value === null) return '';
    const reason = text === undefined ? 'is not a single value (a list, mapping or function)' : unsafe(text);
    if (reason !== undefined) return this.#violate(token, reason, this.#exactProvenance(name, context, value));
    this.#emit(text!, token[2], this.#tracker.provenanceOf(value)?.label);
    return text!;
  }

  /**
   * Mustache caches lookups per context, and a cached lookup does not pass
   * through the tracking proxies; an unsafe value must be charged to the
   * right object, so it is looked up once more, past the cache. ('.' is
   * only ever answered from the cache: it is the current view itself.)
   */
  #exactProvenance(name: string, context: Context, value: unknown): Provenance | undefined {
    const cached = this.#tracker.provenanceOf(value);
    if (name === '.') return cached;
    delete context.cache[name];
    this.#tracker.beforeLookup();
    context.lookup(name);
    return this.#tracker.provenanceOf(value) ?? cached;
  }

  /** Records which template line, and which object, the output produced now comes from. */
  #emit(text: string, offset: number, object: string | undefined): void {
    let newline = text.indexOf('\n');
    // Most leaves continue a line already attributed: nothing to record.
    if (newline < 0 && !this.#atLineStart && object === undefined) return;
    const origins = this.#origins;
    const template = origins.templateIndex(this.#names.at(-1) ?? 'template');
    let line = this.#lineOf(this.#sources.at(-1) ?? '', offset);
    let position = 0;
    for (;;) {
      const end = newline < 0 ? text.length : newline;
      if (end > position || newline >= 0) {
        if (this.#atLineStart) {
          origins.lines.push(template, line);
          this.#atLineStart = false;
        }
        if (object !== undefined) origins.addObject(origins.count - 1, object);
      }
      if (newline < 0) return;
      this.#atLineStart = true;
      line++;
      position = newline + 1;
      newline = text.indexOf('\n', position);
    }
  }

  /** Line numbers by binary search over each source's line starts, computed once per source. */
  #lineOf(source: string, offset: number): number {
    let starts = this.#lineStarts.get(source);
    if (!starts) {
      starts = [0];
      for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
      this.#lineStarts.set(source, starts);
    }
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  #violate(token: Token, reason: string, provenance: Provenance | undefined): string {
    const source = this.#sources.at(-1) ?? '';
    this.violations.push({
      template: this.#names.at(-1) ?? 'template',
      line: this.#lineOf(source, token[2]),
      tag: token[0] === 'name' ? `{{${token[1]}}}` : `{{{${token[1]}}}}`,
      reason,
      provenance,
    });
    return '';
  }
}
