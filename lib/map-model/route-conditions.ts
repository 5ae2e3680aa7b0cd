import { createHash } from 'node:crypto';
import { compareCodeUnits } from '../compare.ts';
import type { ValueSource } from '../pipeline/model.ts';
import { Sourced } from '../pipeline/value-source.ts';
import type { RouteRecord, ValueMatch } from '../routing/route.ts';

/**
 * What a request must pass besides its host and path (Gateway API header,
 * query parameter and method matches), keyed by a digest of the content
 * (docs/adr/0012-header-query-method-matches.md). A candidate list's lines
 * are found by shape (docs/adr/0025-requests-cost-the-same-with-many-policies.md):
 * the frontend has one lookup per distinct shape (the names of the headers
 * and query parameters matched exactly, whether the method is, and what
 * cannot be looked up: regular expressions and the protocol), keyed by the
 * request's own values of those names, so a request pays for the shapes of
 * the world, never for its condition sets, and a route whose shape some
 * served route has changes map lines only.
 */

/** A condition on one header or query parameter, as the template writes it. */
export interface ValueCondition {
  readonly name: string;
  readonly value: string;
  /** True for a regular expression (written single-quoted), false for the whole value. */
  readonly regex: boolean;
}

/** One of the request's values a shape's lookup key is made of: a header, a query parameter, or the method. */
export interface ShapeFetch {
  readonly name: string | undefined;
  readonly header: boolean;
  readonly param: boolean;
  readonly method: boolean;
}

/**
 * The conditions of a shape: the exact values are looked up, keyed
 * `<list id>/<shape key>/<value>|<value>|...` (a value missing from the
 * request is written "-", which no match value is); the regular
 * expressions and the protocol stay tests of its rule (the fields the
 * `conditionTests` partial writes).
 */
export class ConditionShape {
  /** "s" and 16 hex digits of the SHA-256 of the shape. */
  readonly key: string;
  /** The values its lookup key is made of, in order: the headers, then the query parameters matched exactly, then the method. */
  readonly fetches: readonly ShapeFetch[];
  /** Its regular expressions on headers and query parameters, tests of its rule. */
  readonly headers: readonly ValueCondition[];
  readonly query: readonly ValueCondition[];
  /** Always undefined: the method is one of the values looked up. */
  readonly method: undefined;
  readonly servedOver: { readonly tls: boolean } | undefined;

  constructor(key: string, fetches: readonly ShapeFetch[], headers: readonly ValueCondition[], query: readonly ValueCondition[], servedOver: { readonly tls: boolean } | undefined) {
    this.key = key;
    this.fetches = Object.freeze(fetches);
    this.headers = Object.freeze(headers);
    this.query = Object.freeze(query);
    this.method = undefined;
    this.servedOver = servedOver;
    Object.freeze(this);
  }
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
  readonly shape: ConditionShape;
  /** Its candidates.map lines' key after the list id: `<shape key>/` and its exact values, each followed by '|' (a safe word has none). */
  readonly lookup: string;

  constructor(key: string, headers: readonly ValueMatch[], query: readonly ValueMatch[], method: string | undefined, servedOver: { readonly tls: boolean } | undefined, source: ValueSource) {
    super(source);
    this.key = key;
    this.headers = Object.freeze(headers.map(valueCondition));
    this.query = Object.freeze(query.map(valueCondition));
    this.method = method;
    this.servedOver = servedOver && Object.freeze({ tls: servedOver.tls });
    this.shape = conditionShape(this.headers, this.query, method !== undefined, this.servedOver);
    const values = [...this.headers, ...this.query].filter((condition) => !condition.regex).map((condition) => condition.value);
    if (method !== undefined) values.push(method);
    this.lookup = `${this.shape.key}/${values.map((value) => `${value}|`).join('')}`;
    Object.freeze(this);
  }
}

function conditionShape(headers: readonly ValueCondition[], query: readonly ValueCondition[], method: boolean, servedOver: { readonly tls: boolean } | undefined): ConditionShape {
  const fetch = (kind: 'header' | 'param', name: string): ShapeFetch => Object.freeze({ name, header: kind === 'header', param: kind === 'param', method: false });
  const fetches = [...headers.filter((h) => !h.regex).map((h) => fetch('header', h.name)), ...query.filter((q) => !q.regex).map((q) => fetch('param', q.name))];
  if (method) fetches.push(Object.freeze({ name: undefined, header: false, param: false, method: true }));
  const tests = (list: readonly ValueCondition[]) => list.map((c) => (c.regex ? [c.name, c.value] : [c.name]));
  const digest = createHash('sha256')
    .update(JSON.stringify([tests(headers), tests(query), method, servedOver?.tls ?? null]))
    .digest('hex');
  const regex = (list: readonly ValueCondition[]) => list.filter((c) => c.regex);
  return new ConditionShape(`s${digest.slice(0, 16)}`, fetches, regex(headers), regex(query), servedOver);
}

/** The distinct shapes of condition sets, sorted by key: a set of a shape already there leaves the configuration as it was. */
export function conditionShapes(sets: readonly RouteConditions[]): readonly ConditionShape[] {
  const shapes = new Map<string, ConditionShape>();
  for (const set of sets) if (!shapes.has(set.shape.key)) shapes.set(set.shape.key, set.shape);
  return Object.freeze([...shapes.values()].sort((a, b) => compareCodeUnits(a.key, b.key)));
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
