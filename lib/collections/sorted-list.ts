/**
 * A sorted, frozen list carried from one build to the next. After a change
 * to a few items it is patched (a binary search and a copy per item), not
 * sorted again; after many, sorted from scratch. Either way a list with the
 * very same items as before is the list from before, so a renderer sees no
 * change (see SafeWriter).
 */
export function patchSorted<T>(
  before: readonly T[],
  /** The keys whose item may have changed, each once. */
  changed: readonly string[],
  /** The item of a key now; undefined when the key is gone. */
  now: (key: string) => T | undefined,
  /** Every item now, in any order: read only when sorting from scratch is cheaper. */
  all: () => Iterable<T>,
  keyOf: (item: T) => string,
  /** The list's order; keys are unique, so it is total. */
  order: (a: string, b: string) => number,
): readonly T[] {
  if (changed.length === 0) return before;
  // Each patch copies the list once: past a few dozen changes, one sort costs less.
  if (changed.length > 16 + (before.length >> 6)) {
    const items = Array.from(all()).sort((a, b) => order(keyOf(a), keyOf(b)));
    return sameItems(before, items) ? before : Object.freeze(items);
  }
  let items: T[] | undefined;
  for (let i = 0; i < changed.length; i++) {
    const key = changed[i]!;
    const item = now(key);
    const list: readonly T[] = items ?? before;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (order(keyOf(list[middle]!), key) < 0) low = middle + 1;
      else high = middle;
    }
    const found = low < list.length && keyOf(list[low]!) === key;
    if (found ? list[low] === item : item === undefined) continue;
    // Spread, not slice(): slice() copies a frozen array element by element, a hundred times slower.
    items ??= [...before];
    if (item === undefined) items.splice(low, 1);
    else if (found) items[low] = item;
    else items.splice(low, 0, item);
  }
  return items ? Object.freeze(items) : before;
}

/** Whether a new list holds the very same items as an earlier one: then the earlier list is kept, so renderers see no change. */
export function sameItems<T>(before: readonly T[] | undefined, after: readonly T[]): before is readonly T[] {
  return before !== undefined && before.length === after.length && after.every((item, i) => item === before[i]);
}
