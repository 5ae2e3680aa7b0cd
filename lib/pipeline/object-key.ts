/**
 * The "namespace/name" key of an object in a map of objects, '' for the
 * namespace of a cluster-scoped one. Joined rather than concatenated: V8
 * keeps a string built with `+` or a template literal as a pair of its pieces
 * (a cons string) and gives it a flat copy besides at the first map look-up,
 * so each kept key cost about 32 bytes more. The informer and the event
 * replay keep a key per watched object: at 10k objects of three types, 2 MiB.
 */
export function objectKey(namespace: string | undefined, name: string): string {
  return [namespace ?? '', name].join('/');
}
