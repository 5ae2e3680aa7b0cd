/**
 * The plural resource name of a kind, as the API server names it for the
 * built-in kinds (Ingress -> ingresses, EndpointSlice -> endpointslices,
 * NetworkPolicy -> networkpolicies). Custom resources whose plural differs
 * must be watched by `resource`.
 */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  // The one built-in kind whose name is already plural.
  if (lower === 'endpoints') return lower;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}
