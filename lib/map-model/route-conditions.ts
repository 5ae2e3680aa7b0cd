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
  /** Over TLS alone (`tls` true) or plain HTTP alone: a route on Gateway listeners of one protocol. Not ranked. */
  readonly servedOver: { readonly tls: boolean } | undefined;

  constructor(key: string, headers: readonly ValueMatch[], query: readonly ValueMatch[], method: string | undefined, servedOver: { readonly tls: boolean } | undefined, source: ValueSource) {
    super(source);
    this.key = key;
    this.headers = Object.freeze(headers.map(valueCondition));
    this.query = Object.freeze(query.map(valueCondition));
    this.method = method;
    this.servedOver = servedOver && Object.freeze({ tls: servedOver.tls });
    Object.freeze(this);
  }
}

function valueCondition(match: ValueMatch): ValueCondition {
  return Object.freeze({ name: match.name, value: match.value, regex: match.kind === 'regex' });
}

/**
 * The conditions of a record, or undefined when it asks for none. A record
 * served over one protocol alone (`onlyOver`) asks for it as a condition,
 * so that routes of one host and path on listeners of either protocol
 * (an HTTP listener's redirect, an HTTPS listener's backend) are both
 * served, and a request over the other protocol goes on to the next match.
 */
export function routeConditions(record: RouteRecord, source: ValueSource): RouteConditions | undefined {
  const { headers, query, method, onlyOver } = record;
  if (headers.length === 0 && query.length === 0 && method === undefined && onlyOver === undefined) return undefined;
  const servedOver = onlyOver && { tls: onlyOver === 'HTTPS' };
  const parts: unknown[] = [headers.map((h) => [h.name, h.kind, h.value]), query.map((q) => [q.name, q.kind, q.value]), method ?? null];
  // Without a protocol the content (and the key) is what it was before protocols were conditions.
  if (servedOver) parts.push(onlyOver);
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  return new RouteConditions(`c${digest.slice(0, 16)}`, headers, query, method, servedOver, source);
}
