import type { ValueSource } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';

/**
 * One level of the Mustache context stack: the view a section pushed, its
 * parent, and its depth (0 is the root view). Lookups (see SafeWriter) have
 * the Mustache spec's semantics: a name resolves in the innermost context
 * where its whole dotted path exists; '.' is the current view; functions
 * are called. The depth of the context that answered tells the writer
 * whether a section item's output depends on anything but the item.
 */
export class TrackedContext {
  readonly view: unknown;
  readonly parent: TrackedContext | undefined;
  readonly depth: number;
  /** The object the innermost view-model item around this context was made from (see value-source.ts). */
  readonly source: ValueSource | undefined;
  /**
   * Lookups that read tracked object fields, kept so a name read twice in
   * one context is charged to its object once, as the first read left it.
   * Lookups that read no tracked field are pure and not worth a Map.
   */
  #remembered: Map<string, Readonly<Resolution>> | undefined;

  constructor(view: unknown, parent: TrackedContext | undefined) {
    this.view = view;
    this.parent = parent;
    this.depth = parent ? parent.depth + 1 : 0;
    this.source = sourceOf(view) ?? parent?.source;
  }

  remembered(name: string): Readonly<Resolution> | undefined {
    return this.#remembered?.get(name);
  }

  remember(name: string, resolution: Readonly<Resolution>): void {
    (this.#remembered ??= new Map()).set(name, { value: resolution.value, depth: resolution.depth });
  }

  forget(name: string): void {
    this.#remembered?.delete(name);
  }
}

export interface Resolution {
  value: unknown;
  /** Depth of the context that answered, or -1 when none did. */
  depth: number;
}

function has(value: unknown, key: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'object' || typeof value === 'function') return key in value;
  // A primitive has its own properties too ("abc".length), as Mustache allows.
  return Object.prototype.hasOwnProperty.call(value, key);
}

/**
 * Walks from `start` to the root: the first context where the whole path
 * exists answers. The answer goes into `into`, so the lookups of a render
 * (hundreds of thousands) allocate nothing.
 */
export function resolve(start: TrackedContext, segments: readonly string[], into: Resolution): void {
  for (let context: TrackedContext | undefined = start; context; context = context.parent) {
    let value: unknown = context.view;
    let hit = true;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (!has(value, segment)) {
        hit = false;
        break;
      }
      value = (value as Record<string, unknown>)[segment];
    }
    if (hit) {
      into.value = value;
      into.depth = context.depth;
      return;
    }
  }
  into.value = undefined;
  into.depth = -1;
}
