import Mustache from 'mustache';

/** Told the depth of the context that answered a lookup (0 is the root view), or -1 when none did. */
export type ResolutionListener = (name: string, depth: number, value: unknown) => void;

/** Shared by the contexts of one writer: the listener, and names already split into their segments. */
export interface LookupShared {
  readonly listener: ResolutionListener;
  readonly segments: Map<string, readonly string[]>;
}

function has(value: unknown, key: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'object' || typeof value === 'function') return key in value;
  // A primitive has its own properties too ("abc".length), as Mustache allows.
  return Object.prototype.hasOwnProperty.call(value, key);
}

/**
 * A Mustache context with a lookup of its own, with the Mustache spec's
 * semantics (a name resolves in the innermost context where its whole
 * dotted path exists; '.' is the current view; functions are called), that
 * tells a listener which context level answered. The writer uses that to
 * know whether a section item's output depends on anything but the item.
 */
export class TrackedContext extends Mustache.Context {
  readonly depth: number;
  readonly #shared: LookupShared;
  readonly #resolved = new Map<string, { readonly value: unknown; readonly depth: number }>();
  declare readonly view: unknown;
  declare readonly parent: TrackedContext | undefined;

  constructor(view: unknown, parent: TrackedContext | undefined, shared: LookupShared) {
    super(view, parent);
    this.depth = parent ? parent.depth + 1 : 0;
    this.#shared = shared;
  }

  override push(view: unknown): TrackedContext {
    return new TrackedContext(view, this, this.#shared);
  }

  override lookup(name: string): unknown {
    if (name === '.') {
      this.#shared.listener(name, this.depth, this.view);
      return typeof this.view === 'function' ? (this.view as () => unknown).call(this.view) : this.view;
    }
    let found = this.#resolved.get(name);
    if (!found) {
      found = this.#find(name);
      this.#resolved.set(name, found);
    }
    this.#shared.listener(name, found.depth, found.value);
    return typeof found.value === 'function' ? (found.value as () => unknown).call(this.view) : found.value;
  }

  /** The same lookup past the cache, so property reads happen again (for provenance). */
  lookupAgain(name: string): unknown {
    this.#resolved.delete(name);
    return this.lookup(name);
  }

  #find(name: string): { readonly value: unknown; readonly depth: number } {
    let segments = this.#shared.segments.get(name);
    if (!segments) {
      segments = name.split('.');
      this.#shared.segments.set(name, segments);
    }
    return findFrom(this, segments);
  }
}

/** Walks from `start` to the root: the first context where the whole path exists answers. */
function findFrom(start: TrackedContext, segments: readonly string[]): { readonly value: unknown; readonly depth: number } {
  for (let context: TrackedContext | undefined = start; context; context = context.parent) {
    let value: unknown = context.view;
    let hit = true;
    for (const segment of segments) {
      if (!has(value, segment)) {
        hit = false;
        break;
      }
      value = (value as Record<string, unknown>)[segment];
    }
    if (hit) return { value, depth: context.depth };
  }
  return { value: undefined, depth: -1 };
}
