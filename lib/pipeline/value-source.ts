import type { ValueSource } from './model.ts';

/**
 * View-model items (a route, a server, a certificate...) carry the object
 * they were made from in a private field: templates never see it, deep
 * comparisons and JSON ignore it, and it costs no more than the item's own
 * fields. The renderer charges every value it writes from such an item to
 * that object: that is how a line HAProxy refuses leads back to the
 * Ingress, EndpointSlice or Secret at fault. The commonest items are
 * classes of their own extending Sourced; `withSource` makes any other.
 */
export class Sourced {
  readonly #source: ValueSource;

  constructor(source: ValueSource) {
    this.#source = source;
  }

  static of(item: unknown): ValueSource | undefined {
    return item !== null && typeof item === 'object' && #source in item ? (item as Sourced).#source : undefined;
  }
}

/** `item`'s fields on an item made from `source` (freeze it after, as the view model does). */
export function withSource<T extends object>(item: T, source: ValueSource): T {
  return Object.assign(new Sourced(source), item);
}

/** The object a view-model item was made from, if it says. */
export function sourceOf(item: unknown): ValueSource | undefined {
  return Sourced.of(item);
}
