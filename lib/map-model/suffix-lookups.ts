import type { HostEntry, SuffixLookup } from './types.ts';

/**
 * The lookups of host-suffix.map (Gateway API wildcards cover any number of
 * labels): one per number of labels the domains of the served wildcards
 * have, most labels first, so the nearest wildcard wins whatever the depth
 * of the name below it. Each lookup keeps the last `labels` labels of the
 * name when at least one label comes before them, and asks the map for
 * `*.` and those (an exact lookup: a line added at runtime is found
 * wherever it lands). A domain with a new number of labels adds a lookup.
 */

const NO_LOOKUPS: readonly SuffixLookup[] = Object.freeze([]);

/** The lookups `suffixHosts` need; `last` while they are the same. */
export function suffixLookups(suffixHosts: readonly HostEntry[], last: readonly SuffixLookup[] | undefined): readonly SuffixLookup[] {
  // "*.example.com": the labels after the "*" one.
  const counts = [...new Set(suffixHosts.map((host) => host.host.split('.').length - 1))].sort((a, b) => b - a);
  if (last !== undefined && last.length === counts.length && last.every((lookup, i) => lookup.labels === counts[i])) return last;
  if (counts.length === 0) return NO_LOOKUPS;
  return Object.freeze(counts.map((labels) => Object.freeze({ labels, more: Object.freeze(Array.from({ length: labels - 1 }, (_, i) => i + 1)) })));
}
