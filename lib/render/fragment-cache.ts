import type { SectionNode } from './compiled-template.ts';
import type { FileOrigins, SourceEntry } from './line-origins.ts';

/**
 * The output of sections over frozen lists and items (the view model's),
 * kept per section and per list or item for as long as that object lives,
 * so the writer can replay it instead of rendering it again. A fragment is
 * kept only when it read nothing from outside itself but root values, which
 * it records and which must still hold when it is replayed.
 */

/** A value read from the root view (paths, templateValues...) by output that is kept for reuse. */
export interface RootRead {
  readonly name: string;
  readonly segments: readonly string[];
  readonly value: unknown;
  /** Where it resolved: 0 in the root view, -1 nowhere. */
  readonly depth: number;
}

/** The output of one section, or one item of it, kept for as long as its key object lives. */
export interface Fragment {
  readonly text: string;
  /** Origin of each output line (OriginTable ids). */
  readonly ids: readonly number[];
  /** Lines of the fragment that carry objects, ascending, and their objects. */
  readonly objectLines: readonly number[];
  readonly objectLists: readonly SourceEntry[];
  /** The fragment holds while these root values do. */
  readonly rootReads: readonly RootRead[];
  /** How values were written when it was rendered (`%` and quoting): it holds only where they are written the same way. */
  readonly escaping: string;
}

/** A fragment being rendered: where it started, and whether anything outside it was read. */
export interface Boundary {
  readonly depth: number;
  readonly startsLine: boolean;
  readonly firstLine: number;
  readonly violations: number;
  pure: boolean;
  /** Each name once: within one render the root answers a name the same way every time. */
  rootReads: RootRead[] | undefined;
  /** The kept fragments' root reads already noted here (see noteReads). */
  noted: Set<readonly RootRead[]> | undefined;
}

/** Per section tag: its fragments by list or item, and the last origin list captured (shared when the next is equal). */
interface SectionCache {
  readonly fragments: WeakMap<object, Fragment>;
  lastIds: readonly number[];
  lastObjectLines: readonly number[];
  lastRootReads: readonly RootRead[];
}

const NONE: readonly never[] = Object.freeze([]);

export class FragmentCache {
  readonly #sections = new Map<SectionNode, SectionCache>();
  /** Section lists seen once: a list is only worth capturing when it comes back unchanged. */
  readonly #seenLists = new WeakSet<object>();
  readonly #boundaries: Boundary[] = [];

  /** True the first time a list is seen, and never again. */
  firstSight(list: object): boolean {
    if (this.#seenLists.has(list)) return false;
    this.#seenLists.add(list);
    return true;
  }

  /** The output kept for a section over this list or item. */
  kept(node: SectionNode, key: object): Fragment | undefined {
    return this.#sections.get(node)?.fragments.get(key);
  }

  /** Notes a read that resolved at `depth` (-1: nothing answered) against the fragments being rendered. */
  noteRead(name: string, segments: readonly string[], value: unknown, depth: number): void {
    const boundaries = this.#boundaries;
    // Boundaries nest outward in: one that the read does not leave, none of the outer ones does either.
    if (boundaries.length === 0 || depth >= boundaries[boundaries.length - 1]!.depth) return;
    for (let i = 0; i < boundaries.length; i++) note(boundaries[i]!, name, segments, value, depth);
  }

  /**
   * Notes the root reads of a fragment being replayed, as noteRead would
   * note each of them, once per fragment being rendered: replayed items of
   * one list mostly share one list of root reads (see keep).
   */
  noteReads(reads: readonly RootRead[]): void {
    const boundaries = this.#boundaries;
    for (let i = 0; i < boundaries.length; i++) {
      const boundary = boundaries[i]!;
      const noted = (boundary.noted ??= new Set());
      if (noted.has(reads)) continue;
      noted.add(reads);
      for (let j = 0; j < reads.length; j++) {
        const read = reads[j]!;
        note(boundary, read.name, read.segments, read.value, read.depth);
      }
    }
  }

  /** Starts a fragment whose own context is at `depth`; end() closes it. */
  begin(depth: number, origins: FileOrigins, atLineStart: boolean, violations: number): Boundary {
    const boundary: Boundary = {
      depth,
      startsLine: atLineStart,
      firstLine: origins.count,
      violations,
      pure: true,
      rootReads: undefined,
      noted: undefined,
    };
    this.#boundaries.push(boundary);
    return boundary;
  }

  end(): void {
    this.#boundaries.pop();
  }

  /**
   * Keeps a fragment the writer has just rendered, where it now stands. Only
   * whole lines, free of violations and of outside reads, can stand in for a
   * later render.
   */
  keep(node: SectionNode, key: object, boundary: Boundary, text: string, origins: FileOrigins, atLineStart: boolean, violations: number, escaping: string): void {
    if (!boundary.pure || !boundary.startsLine || !atLineStart || violations !== boundary.violations) return;
    const cache = this.#sectionCache(node);
    const first = boundary.firstLine;
    const count = origins.count - first;
    // Items of one section mostly produce the same origins: they share one list.
    const last = cache.lastIds;
    let ids = last;
    if (last.length !== count) ids = origins.ids.slice(first);
    else {
      for (let i = 0; i < count; i++) {
        if (last[i] !== origins.ids[first + i]) {
          ids = origins.ids.slice(first);
          break;
        }
      }
    }
    cache.lastIds = ids;
    let objectLines: readonly number[] = NONE;
    let objectLists: readonly SourceEntry[] = NONE;
    let from = origins.objectLines.length;
    while (from > 0 && origins.objectLines[from - 1]! >= first) from--;
    const objects = origins.objectLines.length - from;
    if (objects > 0) {
      // Like the ids, the lines that carry objects mostly fall the same way in every item.
      const lastLines = cache.lastObjectLines;
      let same = lastLines.length === objects;
      for (let i = 0; same && i < objects; i++) same = lastLines[i] === origins.objectLines[from + i]! - first;
      objectLines = same ? lastLines : origins.objectLines.slice(from).map((line) => line - first);
      cache.lastObjectLines = objectLines;
      objectLists = origins.objectLists.slice(from);
    }
    // Items of one section mostly read the same root values too: sharing one list lets the writer check it once per render.
    const rootReads = sameReads(cache.lastRootReads, boundary.rootReads) ? cache.lastRootReads : (boundary.rootReads ?? NONE);
    cache.lastRootReads = rootReads;
    cache.fragments.set(key, { text: flattened(text), ids, objectLines, objectLists, rootReads, escaping });
  }

  /** Appends a kept fragment's origins to the file's and gives its text. */
  replay(fragment: Fragment, origins: FileOrigins): string {
    const first = origins.count;
    const ids = fragment.ids;
    for (let i = 0; i < ids.length; i++) origins.ids.push(ids[i]!);
    origins.addLines(first, fragment.objectLines, fragment.objectLists);
    return fragment.text;
  }

  #sectionCache(node: SectionNode): SectionCache {
    let cache = this.#sections.get(node);
    if (!cache) {
      cache = { fragments: new WeakMap(), lastIds: NONE, lastObjectLines: NONE, lastRootReads: NONE };
      this.#sections.set(node, cache);
    }
    return cache;
  }
}

function note(boundary: Boundary, name: string, segments: readonly string[], value: unknown, depth: number): void {
  if (depth >= boundary.depth) return;
  // Nothing answered: with contexts between the root and the fragment, one of them might later.
  if (depth === 0 || (depth < 0 && boundary.depth <= 1)) {
    const reads = (boundary.rootReads ??= []);
    for (let i = 0; i < reads.length; i++) if (reads[i]!.name === name) return;
    reads.push({ name, segments, value, depth });
  } else boundary.pure = false;
}

function sameReads(kept: readonly RootRead[], reads: readonly RootRead[] | undefined): boolean {
  if (reads === undefined) return kept.length === 0;
  if (kept.length !== reads.length) return false;
  for (let i = 0; i < reads.length; i++) {
    const a = kept[i]!;
    const b = reads[i]!;
    if (a.name !== b.name || a.value !== b.value || a.depth !== b.depth) return false;
  }
  return true;
}

/** Matches nothing a configuration holds; only its side effect, reading the whole text, is wanted. */
const NUL = /\0/;

/**
 * The text as one piece. V8 keeps a string built by `+=` as a tree of its
 * pieces until something reads it whole, and a replayed fragment would bring
 * its tree of every token into each later render: the first read of the
 * configuration (3.9 MB in bench/gateway-render.ts's mixed world) took 35 ms
 * after a TLSRoute change, 5 ms with fragments kept whole. A regular expression
 * reads the whole text and, unlike a string search, is never dropped as
 * unused (it sets RegExp.lastMatch).
 */
function flattened(text: string): string {
  NUL.test(text);
  return text;
}
