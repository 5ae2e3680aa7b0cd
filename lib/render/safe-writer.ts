import Mustache from 'mustache';
import { unsafeRawReason, unsafeWordReason } from './escape.ts';
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

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < source.length; i++) if (source[i] === '\n') line++;
  return line;
}

/**
 * A Mustache writer that checks every inserted value for HAProxy instead of
 * HTML-escaping it (see escape.ts): an unsafe value is left out and recorded
 * with its template, line and the object that carried it.
 */
export class SafeWriter extends Mustache.Writer {
  readonly #tracker: AccessTracker;
  /** Template names by source text, so a tag's line can be reported against its partial. */
  readonly #names: ReadonlyMap<string, string>;
  readonly #sources: string[] = [];
  violations: Violation[] = [];

  constructor(tracker: AccessTracker, names: ReadonlyMap<string, string>) {
    super();
    this.#tracker = tracker;
    this.#names = names;
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
    // A cached lookup would not pass through the tracking proxies; '.' is
    // only ever answered from the cache (it is the current view itself).
    if (name !== '.') delete context.cache[name];
    this.#tracker.beforeLookup();
    const value: unknown = context.lookup(name);
    const provenance = this.#tracker.provenanceOf(value);
    if (value === undefined || value === null) return '';
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
    else if (typeof value === 'boolean') text = String(value);
    else return this.#violate(token, 'is not a single value (a list, mapping or function)', provenance);
    const reason = unsafe(text);
    return reason === undefined ? text : this.#violate(token, reason, provenance);
  }

  #violate(token: Token, reason: string, provenance: Provenance | undefined): string {
    const source = this.#sources.at(-1) ?? '';
    this.violations.push({
      template: this.#names.get(source) ?? 'template',
      line: lineOf(source, token[2]),
      tag: token[0] === 'name' ? `{{${token[1]}}}` : `{{{${token[1]}}}}`,
      reason,
      provenance,
    });
    return '';
  }
}
