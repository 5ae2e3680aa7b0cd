import Mustache from 'mustache';
import { compileTokens, type InvertedNode, type LookupTag, type Node, type PartialNode, type SectionNode, type TextNode, type ValueNode } from './compiled-template.ts';
import { quotedWord, unsafeQuotedReason, unsafeRawReason, unsafeWordReason, type PercentMode } from '../escape.ts';
import { FragmentCache, type Fragment, type RootRead } from './fragment-cache.ts';
import { FileOrigins, OriginTable } from './line-origins.ts';
import type { AccessTracker, Provenance } from './resource-views.ts';
import { resolve, TrackedContext, type Resolution } from './tracked-context.ts';

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

/** Names of the root view to watch: every tag that reads one there (not a name of an item's) is told, with its place. */
export interface RootNameWatch {
  readonly names: ReadonlySet<string>;
  read(name: string, tag: LookupTag): void;
}

/** The value of `escape.logFormat` in the view: a section over it doubles every `%` of the values inside. */
export const LOG_FORMAT: object = Object.freeze({ logFormat: true });

/** The value of `escape.quoted` in the view: a section over it writes every value inside as one double-quoted word (see quotedWord). */
export const QUOTED: object = Object.freeze({ quoted: true });

/** Mustache's indentation of a standalone partial: every line but an empty one gets the tag's indentation. */
function indentPartial(partial: string, indentation: string, lineHasNonSpace: boolean): string {
  const whitespace = indentation.replace(/[^ \t]/g, '');
  return partial
    .split('\n')
    .map((line, index) => (line.length > 0 && (index > 0 || !lineHasNonSpace) ? whitespace + line : line))
    .join('\n');
}

/**
 * Renders Mustache templates, compiled once (see compiled-template.ts),
 * checking every inserted value for HAProxy instead of HTML-escaping it
 * (see escape.ts): an unsafe value is left out and recorded with its
 * template, line and the object that carried it.
 *
 * It also maps every output line to the template line that produced it and
 * the objects whose values are on it, so an `haproxy -c` error can be traced
 * back. Output is produced in order, so each text and value knows the line
 * it lands on.
 */
export class SafeWriter {
  readonly #tracker: AccessTracker;
  readonly #watch: RootNameWatch | undefined;
  readonly #table = new OriginTable();
  readonly #programs = new WeakMap<readonly unknown[], readonly Node[]>();
  /** Partials and lambda templates, by template name then text (indentation makes one partial several texts). */
  readonly #texts = new Map<string, Map<string, readonly Node[]>>();
  readonly #parser = new Mustache.Writer();
  readonly #fragments = new FragmentCache();
  /** Where lookups leave their answer (see resolve). */
  readonly #found: Resolution = { value: undefined, depth: -1 };
  /** Item fragments being captured: inside one, nested lists and items are not kept on their own. */
  #itemCaptures = 0;
  #origins: FileOrigins;
  #atLineStart = true;
  #root: TrackedContext | undefined;
  #partials: Readonly<Record<string, string>> = {};
  #percent: PercentMode = 'refuse';
  /** Inside an `escape.quoted` section. */
  #quoted = false;
  /** Root reads of kept fragments found to hold in this file's render: the root view does not change while a file renders. */
  #holding = new WeakSet<readonly RootRead[]>();
  violations: Violation[] = [];

  constructor(tracker: AccessTracker, watch?: RootNameWatch) {
    this.#tracker = tracker;
    this.#watch = watch;
    this.#origins = new FileOrigins(this.#table);
  }

  /** Renders one template as one output file; returns the text and its line origins. `percent: 'admit'` for map files. */
  renderFile(
    name: string,
    tokens: readonly unknown[],
    view: unknown,
    partials: Readonly<Record<string, string>>,
    source: string,
    options: { readonly percent: Exclude<PercentMode, 'escape'> } = { percent: 'refuse' },
  ): { text: string; origins: FileOrigins } {
    let nodes = this.#programs.get(tokens);
    if (!nodes) {
      nodes = compileTokens(tokens, name, source, this.#table);
      this.#programs.set(tokens, nodes);
    }
    this.#origins = new FileOrigins(this.#table);
    this.#atLineStart = true;
    this.#partials = partials;
    this.#percent = options.percent;
    this.#quoted = false;
    this.#root = new TrackedContext(view, undefined);
    this.#holding = new WeakSet();
    try {
      const text = this.#render(nodes, this.#root);
      return { text, origins: this.#origins };
    } finally {
      this.#root = undefined;
    }
  }

  #render(nodes: readonly Node[], context: TrackedContext): string {
    let buffer = '';
    // Index loops: a render runs mostly before the JIT optimises it, and an
    // unoptimised for-of allocates an iterator result per step.
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      switch (node.kind) {
        case 'text':
          buffer += this.#text(node);
          break;
        case 'value':
          buffer += this.#value(node, context);
          break;
        case 'section':
          buffer += this.#section(node, context);
          break;
        case 'inverted':
          buffer += this.#inverted(node, context);
          break;
        case 'partial':
          buffer += this.#partial(node, context);
          break;
      }
    }
    return buffer;
  }

  /**
   * A name's value, with the Mustache spec's semantics (see
   * TrackedContext). Reuse of output depends on where each read resolved,
   * so every lookup is noted against the fragments being rendered. A tag's
   * read of a watched root name is told (the root reads a kept fragment
   * checks again are no tag's).
   */
  #lookup(context: TrackedContext, name: string, segments: readonly string[], tag?: LookupTag): unknown {
    let found = context.remembered(name);
    if (found === undefined) {
      const reads = this.#tracker.reads;
      found = this.#found;
      resolve(context, segments, this.#found);
      if (this.#tracker.reads !== reads) context.remember(name, found);
    }
    const { value, depth } = found;
    if (depth === 0 && tag !== undefined && this.#watch?.names.has(segments[0]!)) this.#watch.read(segments[0]!, tag);
    this.#fragments.noteRead(name, segments, value, depth);
    return typeof value === 'function' ? (value as () => unknown).call(context.view) : value;
  }

  #text(node: TextNode): string {
    const ids = this.#origins.ids;
    const next = node.nextIds;
    if (next.length === 0) {
      if (this.#atLineStart && node.text !== '') {
        ids.push(node.firstId);
        this.#atLineStart = false;
      }
      return node.text;
    }
    if (this.#atLineStart) ids.push(node.firstId);
    const last = next.length - 1;
    for (let i = 0; i < last; i++) ids.push(next[i]!);
    if (node.endsInLine) ids.push(next[last]!);
    this.#atLineStart = !node.endsInLine;
    return node.text;
  }

  #value(node: ValueNode, context: TrackedContext): string {
    this.#tracker.beforeLookup();
    const value = this.#lookup(context, node.name, node.segments, node);
    let text: string | undefined;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
    else if (typeof value === 'boolean') text = String(value);
    else if (value === undefined || value === null) return '';
    const percent = this.#percent !== 'refuse';
    const reason =
      text === undefined
        ? 'is not a single value (a list, mapping or function)'
        : this.#quoted
          ? unsafeQuotedReason(text, percent)
          : node.raw
            ? unsafeRawReason(text)
            : unsafeWordReason(text, percent);
    if (reason !== undefined) return this.#violate(node, reason, this.#exactProvenance(node, context, value));
    if (this.#percent === 'escape') text = text!.replaceAll('%', '%%');
    if (this.#quoted) text = quotedWord(text!);
    // Both checks refuse line breaks, so the value stays on the line it starts.
    if (text !== '') {
      const origins = this.#origins;
      if (this.#atLineStart) {
        origins.ids.push(node.id);
        this.#atLineStart = false;
      }
      // A value read from an object names it; any other value inside a view-model item names the item's object.
      const source = this.#tracker.provenanceOf(value) ?? context.source;
      if (source !== undefined) origins.addObject(origins.count - 1, source);
    }
    return text!;
  }

  /**
   * Remembered lookups do not read object fields again; an unsafe value
   * must be charged to the right object, so it is looked up once more,
   * afresh. ('.' reads no field: it is the current view itself.)
   */
  #exactProvenance(node: ValueNode, context: TrackedContext, value: unknown): Provenance | undefined {
    const cached = this.#tracker.provenanceOf(value);
    if (node.name === '.') return cached;
    this.#tracker.beforeLookup();
    context.forget(node.name);
    this.#lookup(context, node.name, node.segments);
    return this.#tracker.provenanceOf(value) ?? cached;
  }

  #violate(node: ValueNode, reason: string, provenance: Provenance | undefined): string {
    this.violations.push({ template: node.template, line: node.line, tag: node.tag, reason, provenance });
    return '';
  }

  #section(node: SectionNode, context: TrackedContext): string {
    const value = this.#lookup(context, node.name, node.segments, node);
    if (value === LOG_FORMAT) return this.#escaped(node, context);
    if (value === QUOTED) return this.#quotedSection(node, context);
    if (Array.isArray(value) && Object.isFrozen(value)) return this.#frozenList(node, context, value);
    if (!value) return '';
    if (Array.isArray(value)) return this.#plainItems(node, context, value);
    if (typeof value === 'object' || typeof value === 'string' || typeof value === 'number') {
      return this.#render(node.children, new TrackedContext(value, context));
    }
    if (typeof value === 'function') {
      // A lambda: it gets the section's text and a way to render text in this context.
      const result: unknown = value.call(context.view, node.body, (text: string) => this.#render(this.#compiledText(node.template, text), context));
      // Appended as Mustache appends it (a primitive conversion, not String()).
      return result === undefined || result === null ? '' : '' + (result as string);
    }
    return this.#render(node.children, context);
  }

  /** The section's text with every `%` of its values doubled, in the context around it. */
  #escaped(node: SectionNode, context: TrackedContext): string {
    const before = this.#percent;
    this.#percent = 'escape';
    try {
      return this.#render(node.children, context);
    } finally {
      this.#percent = before;
    }
  }

  /** The section's text with every value inside written as one double-quoted word, in the context around it. */
  #quotedSection(node: SectionNode, context: TrackedContext): string {
    const before = this.#quoted;
    this.#quoted = true;
    try {
      return this.#render(node.children, context);
    } finally {
      this.#quoted = before;
    }
  }

  #inverted(node: InvertedNode, context: TrackedContext): string {
    const value = this.#lookup(context, node.name, node.segments, node);
    return !value || (Array.isArray(value) && value.length === 0) ? this.#render(node.children, context) : '';
  }

  #partial(node: PartialNode, context: TrackedContext): string {
    const text = this.#partials[node.name];
    if (text === undefined || text === null) return '';
    const indented = node.indentation === undefined ? text : indentPartial(text, node.indentation, node.lineHasNonSpace);
    return this.#render(this.#compiledText(`templates.partials.${node.name}`, indented), context);
  }

  #compiledText(template: string, text: string): readonly Node[] {
    let byText = this.#texts.get(template);
    if (!byText) {
      byText = new Map();
      this.#texts.set(template, byText);
    }
    let nodes = byText.get(text);
    if (!nodes) {
      nodes = compileTokens(this.#parser.parse(text), template, text, this.#table);
      byText.set(text, nodes);
    }
    return nodes;
  }

  /**
   * Sections over frozen lists of frozen items (the view model's) reuse
   * their output while the list, or an item, is the same object as last time
   * and its output read nothing from outside itself but root values that
   * still hold. A render after one change then re-renders only that change.
   *
   * The outermost item is the unit of reuse: lists and items inside an item
   * being kept are rendered with it (a changed backend renders its servers
   * again, which costs less than keeping every server on its own).
   */
  #frozenList(node: SectionNode, context: TrackedContext, list: readonly unknown[]): string {
    if (this.#itemCaptures > 0) return this.#plainItems(node, context, list);
    const fragments = this.#fragments;
    if (fragments.firstSight(list)) return this.#items(node, context, list);
    const known = fragments.kept(node, list);
    if (known !== undefined && this.#canReplay(known)) return fragments.replay(known, this.#origins);
    const boundary = fragments.begin(context.depth + 1, this.#origins, this.#atLineStart, this.violations.length);
    let text: string;
    try {
      text = this.#items(node, context, list);
    } finally {
      fragments.end();
    }
    fragments.keep(node, list, boundary, text, this.#origins, this.#atLineStart, this.violations.length, this.#escaping());
    return text;
  }

  #items(node: SectionNode, context: TrackedContext, list: readonly unknown[]): string {
    let buffer = '';
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      buffer += item !== null && typeof item === 'object' && Object.isFrozen(item) ? this.#item(node, context, item) : this.#render(node.children, new TrackedContext(item, context));
    }
    return buffer;
  }

  #plainItems(node: SectionNode, context: TrackedContext, list: readonly unknown[]): string {
    let buffer = '';
    for (let i = 0; i < list.length; i++) buffer += this.#render(node.children, new TrackedContext(list[i], context));
    return buffer;
  }

  #item(node: SectionNode, context: TrackedContext, item: object): string {
    const fragments = this.#fragments;
    const known = fragments.kept(node, item);
    if (known !== undefined && this.#canReplay(known)) return fragments.replay(known, this.#origins);
    const boundary = fragments.begin(context.depth + 1, this.#origins, this.#atLineStart, this.violations.length);
    this.#itemCaptures++;
    let text: string;
    try {
      text = this.#render(node.children, new TrackedContext(item, context));
    } finally {
      this.#itemCaptures--;
      fragments.end();
    }
    fragments.keep(node, item, boundary, text, this.#origins, this.#atLineStart, this.violations.length, this.#escaping());
    return text;
  }

  /** How values are written here: output kept under one way holds only where values are written the same way. */
  #escaping(): string {
    return this.#quoted ? `${this.#percent} quoted` : this.#percent;
  }

  #canReplay(fragment: Fragment): boolean {
    return this.#atLineStart && fragment.escaping === this.#escaping() && (fragment.rootReads.length === 0 || this.#rootReadsHold(fragment));
  }

  #rootReadsHold(fragment: Fragment): boolean {
    const reads = fragment.rootReads;
    if (this.#holding.has(reads)) {
      this.#fragments.noteReads(reads);
      return true;
    }
    const root = this.#root;
    const holds = root !== undefined && reads.every((read) => this.#lookup(root, read.name, read.segments) === read.value);
    if (holds) this.#holding.add(reads);
    return holds;
  }
}
