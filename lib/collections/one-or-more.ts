/**
 * A collection that mostly holds one item, kept as that item until a second
 * comes: the view model keeps one per route key and per backend, and at 10k
 * Ingresses a list each would be 10k more objects to allocate on a cold
 * start and for the collector to copy.
 */
export type OneOrMore<T extends object> = T | T[];

export function withItem<T extends object>(items: OneOrMore<T> | undefined, item: T): OneOrMore<T> {
  if (items === undefined) return item;
  if (!Array.isArray(items)) return [items, item];
  items.push(item);
  return items;
}

/** Without one occurrence of `item`, which must be there; undefined when it was the last. */
export function withoutItem<T extends object>(items: OneOrMore<T>, item: T): OneOrMore<T> | undefined {
  if (!Array.isArray(items)) return undefined;
  items.splice(items.indexOf(item), 1);
  return items.length === 1 ? items[0]! : items;
}

export function firstItem<T extends object>(items: OneOrMore<T>): T {
  return Array.isArray(items) ? items[0]! : items;
}
