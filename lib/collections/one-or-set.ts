/**
 * A set that mostly holds one member, kept as that member until a second
 * comes, in insertion order like a Set. An empty Set with its table costs
 * about 170 bytes: the store's index has a node per key prefix and most
 * hold one object, so at 10k objects of three types a Set each was 5 MiB
 * of a cold start's resident memory. Unlike OneOrMore (one-or-more.ts) a
 * member leaves in constant time, for sets that grow large (a namespace's
 * node holds every object of the namespace).
 */
export type OneOrSet<T extends object> = T | Set<T>;

/** With `item` added (after the members there are; a member already there keeps its place). */
export function withMember<T extends object>(members: OneOrSet<T> | undefined, item: T): OneOrSet<T> {
  if (members === undefined || members === item) return item;
  if (members instanceof Set) return members.add(item);
  return new Set([members, item]);
}

/** Without `item`; undefined once no member is left, the last member alone once one is. */
export function withoutMember<T extends object>(members: OneOrSet<T>, item: T): OneOrSet<T> | undefined {
  if (!(members instanceof Set)) return members === item ? undefined : members;
  members.delete(item);
  if (members.size > 1) return members;
  return members.size === 0 ? undefined : members.values().next().value;
}

/** The members in insertion order. */
export function membersOf<T extends object>(members: OneOrSet<T> | undefined): Iterable<T> {
  if (members === undefined) return [];
  return members instanceof Set ? members : [members];
}
