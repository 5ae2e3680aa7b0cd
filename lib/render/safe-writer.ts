import Mustache from 'mustache';
import { unsafeRawReason, unsafeWordReason } from './escape.ts';
import { FileOrigins } from './line-origins.ts';
import type { AccessTracker, Provenance } from './resource-views.ts';
import { TrackedContext, type LookupShared } from './tracked-context.ts';

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
type Tokens = Parameters<Mustache.Writer['renderTokens']>[0];

/** The output of one section, or one item of it, kept for as long as its key object lives. */
interface Fragment {
  readonly text: string;
  /** Template names, indexed by `lines`. */
  readonly templates: readonly string[];
  /** Pairs of (index into templates, template line), one pair per output line. */
  readonly lines: readonly number[];
  /** Objects on lines, by line index within the fragment. */
  readonly objects: ReadonlyMap<number, readonly string[]>;
  /** Values read from the root view (paths, templateValues...): the fragment holds while they do. */
  readonly rootReads: readonly (readonly [string, unknown])[];
}

/** A fragment being rendered: whether anything outside it was read. */
interface Boundary {
  readonly depth: number;
  pure: boolean;
  readonly rootReads: [string, unknown][];
}

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
  /** Rendered sections and section items, by the (frozen) array or item object, then by section token. */
  readonly #fragments = new WeakMap<object, Map<unknown, Fragment>>();
  /** Section lists seen once: a list is only worth capturing when it comes back unchanged. */
  readonly #seenLists = new WeakSet<object>();
  readonly #boundaries: Boundary[] = [];
  readonly #shared: LookupShared = {
    listener: (name, depth, value) => {
      for (const boundary of this.#boundaries) {
        if (depth >= boundary.depth) continue;
        // Nothing answered: with contexts between the root and the fragment, one of them might later.
        if (depth === 0 || (depth < 0 && boundary.depth <= 1)) boundary.rootReads.push([name, value]);
        else boundary.pure = false;
      }
    },
    segments: new Map(),
  };
  #root: TrackedContext | undefined;
  violations: Violation[] = [];

  constructor(tracker: AccessTracker) {
    super();
    this.#tracker = tracker;
  }

  /** Renders one template as one output file; returns the text and its line origins. */
  renderFile(name: string, tokens: Tokens, view: unknown, partials: Record<string, string>, source: string): { text: string; origins: FileOrigins } {
    this.#origins = new FileOrigins();
    this.#atLineStart = true;
    this.#names.push(name);
    this.#root = new TrackedContext(view, undefined, this.#shared);
    try {
      const text = this.renderTokens(tokens, this.#root, partials, source);
      return { text, origins: this.#origins };
    } finally {
      this.#names.pop();
      this.#root = undefined;
    }
  }

  /**
   * Sections over frozen lists of frozen items (the view model's) reuse
   * their output while the list, or an item, is the same object as last time
   * and its output read nothing from outside itself but root values that
   * still hold. A render after one change then re-renders only that change.
   */
  override renderSection(
    token: string[],
    context: Mustache.Context,
    partials?: Parameters<Mustache.Writer['renderSection']>[2],
    originalTemplate?: string,
    config?: Parameters<Mustache.Writer['renderSection']>[4],
  ): string {
    const tracked = context as TrackedContext;
    const value = tracked.lookup(token[1]!);
    if (!Array.isArray(value) || !Object.isFrozen(value)) return super.renderSection(token, context, partials, originalTemplate, config);
    const inner = token[4] as unknown as Tokens;
    const source = originalTemplate ?? '';
    const items = () => {
      let buffer = '';
      for (const item of value) {
        const render = () => this.renderTokens(inner, tracked.push(item), partials, source, config);
        buffer += item !== null && typeof item === 'object' && Object.isFrozen(item) ? this.#fragment(item, token, tracked.depth + 1, render) : render();
      }
      return buffer;
    };
    if (!this.#seenLists.has(value)) {
      this.#seenLists.add(value);
      return items();
    }
    return this.#fragment(value, token, tracked.depth + 1, items);
  }

  #fragment(key: object, token: unknown, depth: number, render: () => string): string {
    let byToken = this.#fragments.get(key);
    const known = byToken?.get(token);
    if (known !== undefined && this.#atLineStart && (known.rootReads.length === 0 || this.#rootReadsHold(known))) return this.#replay(known);
    const startsLine = this.#atLineStart;
    const violations = this.violations.length;
    const firstLine = this.#origins.count;
    const boundary: Boundary = { depth, pure: true, rootReads: [] };
    this.#boundaries.push(boundary);
    let text: string;
    try {
      text = render();
    } finally {
      this.#boundaries.pop();
    }
    // Only whole lines, free of violations and of outside reads, can stand in for a later render.
    if (boundary.pure && startsLine && this.#atLineStart && this.violations.length === violations) {
      if (!byToken) {
        byToken = new Map();
        this.#fragments.set(key, byToken);
      }
      byToken.set(token, this.#capture(text, firstLine, boundary.rootReads));
    }
    return text;
  }

  #rootReadsHold(fragment: Fragment): boolean {
    const root = this.#root;
    return root !== undefined && fragment.rootReads.every(([name, value]) => root.lookup(name) === value);
  }

  #capture(text: string, firstLine: number, rootReads: readonly (readonly [string, unknown])[]): Fragment {
    const origins = this.#origins;
    const templates: string[] = [];
    const local = new Map<number, number>();
    const lines: number[] = [];
    for (let line = firstLine; line < origins.count; line++) {
      const template = origins.lines[2 * line]!;
      let index = local.get(template);
      if (index === undefined) {
        index = templates.length;
        templates.push(origins.templates[template]!);
        local.set(template, index);
      }
      lines.push(index, origins.lines[2 * line + 1]!);
    }
    const objects = new Map<number, readonly string[]>();
    for (const [line, list] of origins.objects) if (line >= firstLine) objects.set(line - firstLine, [...list]);
    return { text, templates, lines, objects, rootReads };
  }

  #replay(fragment: Fragment): string {
    const origins = this.#origins;
    const lines = fragment.lines;
    if (fragment.templates.length === 1) {
      // The common case: every line of the fragment comes from one template.
      const index = origins.templateIndex(fragment.templates[0]!);
      for (let i = 1; i < lines.length; i += 2) origins.lines.push(index, lines[i]!);
    } else {
      const indexes = fragment.templates.map((name) => origins.templateIndex(name));
      for (let i = 0; i < lines.length; i += 2) origins.lines.push(indexes[lines[i]!]!, lines[i + 1]!);
    }
    if (fragment.objects.size > 0) {
      const first = origins.count - lines.length / 2;
      for (const [line, list] of fragment.objects) for (const object of list) origins.addObject(first + line, object);
    }
    return fragment.text;
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
    return this.#insert(token as unknown as Token, context as TrackedContext, unsafeWordReason);
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.#insert(token as unknown as Token, context as TrackedContext, unsafeRawReason);
  }

  #insert(token: Token, context: TrackedContext, unsafe: (value: string) => string | undefined): string {
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
   * Contexts cache lookups, and a cached lookup does not pass through the
   * tracking proxies; an unsafe value must be charged to the right object,
   * so it is looked up once more, past the cache. ('.' reads no property:
   * it is the current view itself.)
   */
  #exactProvenance(name: string, context: TrackedContext, value: unknown): Provenance | undefined {
    const cached = this.#tracker.provenanceOf(value);
    if (name === '.') return cached;
    this.#tracker.beforeLookup();
    context.lookupAgain(name);
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
