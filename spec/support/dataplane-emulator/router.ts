/**
 * Route table of the emulator: `METHOD /v3/a/{param}/b` patterns, one path
 * segment per parameter. Segments are matched still percent-encoded and
 * decoded afterwards, so `%2F` inside a map key or `%23` in a map name stay
 * inside their segment (§6: entry ids are URL-encoded keys, maps `%23<id>`).
 */
import type { Handler } from './http-kit.ts';

interface Route {
  readonly method: string;
  readonly segments: readonly string[];
  readonly handler: Handler;
}

export type RouteMatch =
  | { readonly kind: 'found'; readonly handler: Handler; readonly params: Record<string, string> }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'method-not-allowed'; readonly allowed: readonly string[] };

export class Router {
  readonly #routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.#routes.push({ method, segments: split(pattern), handler });
    return this;
  }

  match(method: string, path: string): RouteMatch {
    // go-swagger and chi both serve `/x/` as `/x` (the API docs' curl examples use trailing slashes).
    const segments = split(path.length > 1 ? path.replace(/\/+$/, '') : path);
    const allowed: string[] = [];
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, segments);
      if (params === undefined) continue;
      if (route.method === method) return { kind: 'found', handler: route.handler, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}

function split(path: string): string[] {
  return path.split('/').slice(1);
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < pattern.length; index++) {
    const expected = pattern[index]!;
    const segment = actual[index]!;
    if (expected.startsWith('{') && expected.endsWith('}')) {
      if (segment === '') return undefined;
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
      params[expected.slice(1, -1)] = decoded;
    } else if (expected !== segment) {
      return undefined;
    }
  }
  return params;
}
