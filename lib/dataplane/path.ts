/**
 * Builds API paths from a template whose interpolated values are always
 * encoded as one path segment each: a backend, map or key name can contain
 * `/`, spaces, `#` or `?`, and concatenating it unencoded would address a
 * different resource (or a different endpoint) than the caller meant.
 *
 *   apiPath`/services/haproxy/runtime/maps/${map}/entries/${key}`
 */
export function apiPath(strings: TemplateStringsArray, ...values: readonly string[]): string {
  let path = strings[0] ?? '';
  values.forEach((value, index) => {
    path += segment(value) + (strings[index + 1] ?? '');
  });
  return path;
}

function segment(value: string): string {
  // An empty segment would silently collapse onto the parent collection.
  if (value === '') throw new TypeError('a Data Plane API path segment must not be empty');
  // WHATWG URL parsing resolves "." and ".." (and their %2e spellings) as dot
  // segments, so no encoding can carry them: refuse rather than misroute.
  if (value === '.' || value === '..') throw new TypeError(`"${value}" cannot be used as a Data Plane API path segment`);
  return encodeURIComponent(value);
}
