import type { Problem } from '../pipeline/model.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';
import type { RouteClaim } from './claim-types.ts';
import { NO_PROBLEMS } from './problems.ts';
import { conflictWarning, rankedOrder } from './route-claims.ts';
import type { RouteConditions } from './route-conditions.ts';
import type { Route } from './types.ts';

/**
 * Header, query parameter and method conditions on regular expression paths
 * (docs/adr/0012-header-query-method-matches.md). map_reg returns the first
 * line that matches, so a request failing a line's conditions must go on to
 * the next line: the conditions become part of what the expression matches.
 * While some regex line has conditions, the frontend collects the key of
 * every condition set of those lines the request passes into `txn.held`
 * (`:c<key>:c<key>:`), and looks `<held>|<host><path>` up instead of
 * `<host><path>`; every line's expression then starts, after its `^`, with
 * `[^|]+[|]` (any held keys), or `(?:[^|]+)?:c<key>:(?:[^|]+)?[|]` for a line with
 * conditions (held keys holding its own). Held keys have no '|', so the
 * first one ends them whatever the path holds.
 *
 * Lines keep the regex map's order (longer expressions first); among the
 * lines of one expression and host, those with conditions come first, in
 * precedence order (lib/routing/precedence.ts: a method match, the most header matches, the
 * most query parameter matches, the older object, the earlier rule), and
 * the line without conditions last. A line with the conditions of one
 * before it is never reached: it is left out, and its object told.
 */

export interface RegexCandidates {
  /** Claims some request can reach, in no particular order. */
  readonly claims: readonly RouteClaim[];
  /** Every distinct set of conditions they have, sorted by key. */
  readonly conditions: readonly RouteConditions[];
}

export const NO_REGEX_CANDIDATES: RegexCandidates = Object.freeze({ claims: Object.freeze([]), conditions: Object.freeze([]) });

/** The claims with conditions of one regex key ranked: those some request can reach, and what the others are told. */
export function rankRegexKey(group: readonly RouteClaim[]): { readonly reached: readonly RouteClaim[]; readonly warnings: readonly Problem[] } {
  const reached = new Map<string, RouteClaim>();
  const warnings: Problem[] = [];
  for (const claim of [...group].sort(rankedOrder)) {
    const first = reached.get(claim.conditions!.key);
    const warning = first && conflictWarning(first, claim, ', with the same header, query parameter and method matches,');
    if (warning) warnings.push(warning);
    if (!first) reached.set(claim.conditions!.key, claim);
  }
  return { reached: Object.freeze([...reached.values()]), warnings: warnings.length > 0 ? warnings : NO_PROBLEMS };
}

/** A regex key with what a lookup of `<held>|<host><path>` must find before the host: any held keys, or `conditions`' among them. */
function heldKey(key: string, conditions: RouteConditions | undefined): string {
  // What a runtime map entry keeps: no ';' (it ends a Runtime API command), no '*' (the Data Plane API's map paths refuse it),
  // and no '\' (the Runtime API reads it as an escape, so `\|` would arrive as an alternation): '|' stands in a class.
  const held = conditions ? `(?:[^|]+)?:${conditions.key}:(?:[^|]+)?[|]` : '[^|]+[|]';
  // Every regex key the readers make anchors at its start, after an optional (?i) (claims.ts regexKey).
  return key.replace(/^((?:\(\?i\))?\^)/, `$1${held}`);
}

function line(route: Route, key: string): Route {
  return Object.freeze(withSource({ key, backend: route.backend, policy: route.policy, settings: route.settings }, sourceOf(route)!));
}

/**
 * The regex map's lines with the candidates' among them, every key made to
 * look past the held keys; the plain lines alone while there is no candidate.
 * `plain` is in the regex map's order (route-lists.ts prefixOrder).
 */
export function regexLines(plain: readonly Route[], candidates: RegexCandidates, order: (a: string, b: string) => number): readonly Route[] {
  if (candidates.claims.length === 0) return plain;
  const ranked = [...candidates.claims].sort((a, b) => order(a.key, b.key) || rankedOrder(a, b));
  const lines: Route[] = [];
  let next = 0;
  for (const route of plain) {
    // The candidates of longer expressions, and of this one, before its plain line.
    while (next < ranked.length && order(ranked[next]!.key, route.key) <= 0) {
      const claim = ranked[next++]!;
      lines.push(line(claim.line, heldKey(claim.key, claim.conditions)));
    }
    lines.push(line(route, heldKey(route.key, undefined)));
  }
  for (const claim of ranked.slice(next)) lines.push(line(claim.line, heldKey(claim.key, claim.conditions)));
  return Object.freeze(lines);
}
