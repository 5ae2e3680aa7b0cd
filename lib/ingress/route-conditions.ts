import { createHash } from 'node:crypto';
import type { ValueSource } from '../pipeline/model.ts';
import { Sourced } from '../pipeline/value-source.ts';
import type { RouteRecord, ValueMatch } from '../routing/route.ts';

/**
 * What a request must pass besides its host and path (Gateway API header,
 * query parameter and method matches), rendered once per distinct content
 * as the rule that looks up the candidate of a route list
 * (docs/adr/0012-header-query-method-matches.md). The key is a digest of
 * the content, so a route asking for conditions another served route has
 * changes map lines only.
 */

/** A condition on one header or query parameter, as the template writes it. */
export interface ValueCondition {
  readonly name: string;
  readonly value: string;
  /** True for a regular expression (written single-quoted), false for the whole value. */
  readonly regex: boolean;
}

export class RouteConditions extends Sourced {
  /** "c" and 16 hex digits of the SHA-256 of the content. */
  readonly key: string;
  /** Header names lowercase; each matched on the whole header value (`req.fhdr`). */
  readonly headers: readonly ValueCondition[];
  readonly query: readonly ValueCondition[];
  readonly method: string | undefined;

  constructor(key: string, headers: readonly ValueMatch[], query: readonly ValueMatch[], method: string | undefined, source: ValueSource) {
    super(source);
    this.key = key;
    this.headers = Object.freeze(headers.map(valueCondition));
    this.query = Object.freeze(query.map(valueCondition));
    this.method = method;
    Object.freeze(this);
  }
}

function valueCondition(match: ValueMatch): ValueCondition {
  return Object.freeze({ name: match.name, value: match.value, regex: match.kind === 'regex' });
}

/** The conditions of a record, or undefined when it asks for none. */
export function routeConditions(record: RouteRecord, source: ValueSource): RouteConditions | undefined {
  const { headers, query, method } = record;
  if (headers.length === 0 && query.length === 0 && method === undefined) return undefined;
  const content = JSON.stringify([headers.map((h) => [h.name, h.kind, h.value]), query.map((q) => [q.name, q.kind, q.value]), method ?? null]);
  const digest = createHash('sha256').update(content).digest('hex');
  return new RouteConditions(`c${digest.slice(0, 16)}`, headers, query, method, source);
}

/**
 * The specification's order among candidates of one path: a method match
 * first, then the most header matches, then the most query parameter
 * matches; negative when `a` comes first, 0 when they tie.
 */
export function conditionsOrder(a: RouteConditions | undefined, b: RouteConditions | undefined): number {
  const method = (a?.method === undefined ? 1 : 0) - (b?.method === undefined ? 1 : 0);
  if (method !== 0) return method;
  const headers = (b?.headers.length ?? 0) - (a?.headers.length ?? 0);
  if (headers !== 0) return headers;
  return (b?.query.length ?? 0) - (a?.query.length ?? 0);
}
