import type { ValueSource } from './model.ts';

/**
 * View-model items (a route, a server, a certificate...) carry the object
 * they were made from under a symbol, not an enumerable field: templates
 * never see it and deep comparisons ignore it, while the renderer charges
 * every value it writes from such an item to that object. That is how a
 * line HAProxy refuses leads back to the Ingress, EndpointSlice or Secret
 * at fault.
 */
const SOURCE = Symbol('value source');

/** Marks `item` (before it is frozen) as made from `source`; returns it. */
export function withSource<T extends object>(item: T, source: ValueSource): T {
  Object.defineProperty(item, SOURCE, { value: source, enumerable: false });
  return item;
}

/** The object a view-model item was made from, if it says. */
export function sourceOf(item: unknown): ValueSource | undefined {
  return item !== null && typeof item === 'object' ? ((item as { [SOURCE]?: ValueSource })[SOURCE] ?? undefined) : undefined;
}
