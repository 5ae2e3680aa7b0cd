import { createHash } from 'node:crypto';
import { compareCodeUnits } from '../compare.ts';
import type { RouteClaim } from './claim-types.ts';
import { RouteItem } from './model-source.ts';
import type { RouteConditions } from './route-conditions.ts';
import { claimOrder, conflictWarning, rankedOrder, type RouteClaims, type RouteMap } from './route-claims.ts';
import type { Problem } from '../pipeline/model.ts';
import { NO_PROBLEMS } from './problems.ts';
import { buildRegexCandidates, NO_REGEX_CANDIDATES, regexLines, type RegexCandidates } from './regex-candidates.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { sameItems } from '../collections/sorted-list.ts';
import type { CandidateLine, Route } from './types.ts';

/**
 * Candidate lists (docs/adr/0012-header-query-method-matches.md): where
 * claims with conditions (header, query parameter, method matches) hold a
 * path map key, its line names a list, `?<list id>`, instead of a backend.
 * The list ranks every candidate a request on that key may get by route
 * precedence (lib/routing/precedence.ts): an Exact path first, then a
 * method match, the most header matches, the most query parameter
 * matches, then the older object and the earlier rule. It is cut at the first candidate without
 * conditions, the fallback. A prefix key's list goes on through the shorter
 * prefixes of its host (map_beg finds only the longest, and every shorter
 * line covering a request under `h/a/b/` covers `h/a/b/` itself); an exact
 * key's list without a fallback lets the regex and prefix lookups run.
 *
 * candidates.map holds `<list id>/<conditions key>` → `<rank>=<line value>`
 * and `<list id>/` → `999=<fallback value>`: `str` lookups, so a line added
 * at runtime may go anywhere, and a route with conditions some served route
 * has changes map lines only.
 */

export interface RouteLists {
  /** Path map lines replaced by (or added for) a list, by map and key. */
  readonly lines: Readonly<Record<'exact' | 'prefix', ReadonlyMap<string, Route>>>;
  /** Sorted by key. */
  readonly candidates: readonly CandidateLine[];
  /** Every distinct set of conditions a reachable candidate has, sorted by key. */
  readonly conditions: readonly RouteConditions[];
  /** The claims with conditions some request can reach: users of their backends and policies. */
  readonly users: readonly RouteClaim[];
  /** For each claim no request can reach, because one ranked before it has the same key and conditions. */
  readonly warnings: readonly Problem[];
}

export const NO_LISTS: RouteLists = Object.freeze({
  lines: Object.freeze({ exact: new Map(), prefix: new Map() }),
  candidates: Object.freeze([]),
  conditions: Object.freeze([]),
  users: Object.freeze([]),
  warnings: NO_PROBLEMS,
});

/** The fallback of a list evaluated as the specification ranks: the candidates' ranks fit three digits below it. */
const FALLBACK_RANK = 999;

function lineValue(claim: RouteClaim): string {
  return `${claim.backend.name}${claim.policy ? `:${claim.policy.key}` : ''}`;
}

/** The keys of the shorter prefixes of the same host a request under a prefix key may also match, longest first. */
function shorterPrefixes(claim: RouteClaim): string[] {
  const path = claim.key.slice(claim.host.length);
  const keys: string[] = [];
  for (let end = path.length - 1; end > 0;) {
    end = path.lastIndexOf('/', end - 1);
    if (end < 0) break;
    keys.push(`${claim.host}${path.slice(0, end + 1)}`);
  }
  return keys;
}

/**
 * The lists of the claims with conditions, given the winner of each key
 * among the claims without (route-claims.ts).
 */
export function buildRouteLists(conditional: Iterable<RouteClaim>, winner: (map: RouteMap, key: string) => RouteClaim | undefined): RouteLists {
  const byKey = { exact: new Map<string, RouteClaim[]>(), prefix: new Map<string, RouteClaim[]>() };
  for (const claim of conditional) {
    if (claim.map === 'regex') continue;
    const group = byKey[claim.map].get(claim.key);
    if (group) group.push(claim);
    else byKey[claim.map].set(claim.key, [claim]);
  }
  if (byKey.exact.size + byKey.prefix.size === 0) return NO_LISTS;
  // Whatever order the claims came in, a fresh build and an updated one make the same lists.
  for (const groups of [byKey.exact, byKey.prefix]) for (const group of groups.values()) group.sort(claimOrder);
  const lines = { exact: new Map<string, Route>(), prefix: new Map<string, Route>() };
  const candidates: CandidateLine[] = [];
  const conditions = new Map<string, RouteClaim>();
  const users = new Set<RouteClaim>();
  const warnings: Problem[] = [];
  for (const map of ['exact', 'prefix'] as const) {
    for (const [key, group] of byKey[map]) {
      const levels = map === 'prefix' ? [key, ...shorterPrefixes(group[0]!)] : [key];
      const ranked: RouteClaim[] = [];
      let fallback: RouteClaim | undefined;
      for (const level of levels) {
        const here = [...(level === key ? group : (byKey.prefix.get(level) ?? []))];
        const plain = winner(map, level);
        if (plain) here.push(plain);
        here.sort(rankedOrder);
        const cut = here.findIndex((claim) => claim.conditions === undefined);
        ranked.push(...(cut < 0 ? here : here.slice(0, cut)));
        if (cut >= 0) {
          fallback = here[cut];
          break;
        }
      }
      // A candidate after another with the same conditions is never reached (said of its own key's list); nor one past the ranks that fit.
      const reached = new Map<string, RouteClaim>();
      for (const claim of ranked) {
        const first = reached.get(claim.conditions!.key);
        if (first === undefined && reached.size < FALLBACK_RANK) reached.set(claim.conditions!.key, claim);
        const warning = first && claim.key === key && conflictWarning(first, claim, ', with the same header, query parameter and method matches,');
        if (warning) warnings.push(warning);
      }
      if (reached.size === 0) continue;
      const id = `l${createHash('sha256').update(`${map}\u0000${key}`).digest('hex').slice(0, 16)}`;
      lines[map].set(key, Object.freeze(new RouteItem(key, `?${id}`, undefined, sourceOf(group[0]!.line)!)));
      candidates.push({ key: `${id}/`, value: `${FALLBACK_RANK}=${fallback ? lineValue(fallback) : ''}` });
      let rank = 0;
      for (const [conditionsKey, claim] of reached) {
        candidates.push({ key: `${id}/${conditionsKey}`, value: `${String(rank++).padStart(3, '0')}=${lineValue(claim)}` });
        const seen = conditions.get(conditionsKey);
        if (seen === undefined || claimOrder(claim, seen) < 0) conditions.set(conditionsKey, claim);
        users.add(claim);
      }
    }
  }
  return {
    lines,
    candidates: Object.freeze(candidates.sort((a, b) => compareCodeUnits(a.key, b.key))),
    conditions: Object.freeze([...conditions.values()].map((claim) => claim.conditions!).sort((a, b) => compareCodeUnits(a.key, b.key))),
    users: Object.freeze([...users]),
    warnings: warnings.length > 0 ? warnings : NO_PROBLEMS,
  };
}

/**
 * The claims with conditions of the hosts their objects may serve, and the
 * lists made of them, kept by the aggregate (aggregate.ts) next to the
 * claims without.
 */
export class ConditionalClaims {
  /** The claims without conditions, whose winners are the lists' fallbacks. */
  readonly #plain: RouteClaims;
  readonly #claims = new Set<RouteClaim>();
  #touched = false;
  #lists: RouteLists = NO_LISTS;
  /** The winning lines alone, before the lists' lines replace some. */
  #plainExact: readonly Route[] = Object.freeze([]);
  #plainPrefix: readonly Route[] = Object.freeze([]);
  exactRoutes: readonly Route[] = Object.freeze([]);
  prefixRoutes: readonly Route[] = Object.freeze([]);
  candidates: readonly CandidateLine[] = NO_LISTS.candidates;
  conditions: readonly RouteConditions[] = NO_LISTS.conditions;
  warnings: readonly Problem[] = NO_PROBLEMS;
  /** The claims with conditions on regular expression paths (regex-candidates.ts). */
  regex: RegexCandidates = NO_REGEX_CANDIDATES;
  #regexLines: { readonly plain: readonly Route[]; readonly regex: RegexCandidates; readonly lines: readonly Route[] } | undefined;

  constructor(plain: RouteClaims) {
    this.#plain = plain;
  }

  /** The regex map's lines: `plain` (the winners, in prefixOrder) with the claims with conditions among them; the last ones while both are the same. */
  regexRoutes(plain: readonly Route[]): readonly Route[] {
    const kept = this.#regexLines;
    if (kept?.plain === plain && kept.regex === this.regex) return kept.lines;
    const lines = regexLines(plain, this.regex, prefixOrder);
    this.#regexLines = { plain, regex: this.regex, lines };
    return lines;
  }

  add(claim: RouteClaim): void {
    this.#claims.add(claim);
    this.#touched = true;
  }

  remove(claim: RouteClaim): void {
    this.#claims.delete(claim);
    this.#touched = true;
  }

  /**
   * Patches the winning lines with `lines` (the settled keys' lines), makes
   * the lists again when a winning line or a claim with conditions moved,
   * and the lines with theirs in place; the claims that became or stopped
   * being candidates are told to `route` and `unroute`. True when the
   * warnings changed.
   */
  settle(
    lines: (map: RouteMap, before: readonly Route[], order: (a: string, b: string) => number) => readonly Route[],
    route: (claim: RouteClaim) => void,
    unroute: (claim: RouteClaim) => void,
  ): boolean {
    const plainExact = lines('exact', this.#plainExact, compareCodeUnits);
    const plainPrefix = lines('prefix', this.#plainPrefix, prefixOrder);
    const linesMoved = plainExact !== this.#plainExact || plainPrefix !== this.#plainPrefix;
    const listsMoved = this.#touched || ((this.#claims.size > 0 || this.#lists !== NO_LISTS) && linesMoved);
    const warnings = this.warnings;
    if (listsMoved) {
      this.#touched = false;
      const before = new Set([...this.#lists.users, ...this.regex.claims]);
      const lists = buildRouteLists(this.#claims, (map, key) => this.#plain.winner(map, key));
      const regex = buildRegexCandidates(this.#claims);
      const after = new Set([...lists.users, ...regex.claims]);
      for (const claim of before) if (!after.has(claim)) unroute(claim);
      for (const claim of after) if (!before.has(claim)) route(claim);
      if (!sameCandidates(this.candidates, lists.candidates)) this.candidates = lists.candidates;
      if (!sameItems(this.conditions, lists.conditions)) this.conditions = lists.conditions;
      if (lists.warnings.length + regex.warnings.length + this.warnings.length > 0) this.warnings = [...lists.warnings, ...regex.warnings];
      if (!sameItems(this.regex.claims, regex.claims) || !sameItems(this.regex.conditions, regex.conditions)) this.regex = regex;
      this.#lists = lists;
    }
    if (listsMoved || plainExact !== this.#plainExact) this.exactRoutes = withListLines(plainExact, this.#lists.lines.exact, compareCodeUnits);
    if (listsMoved || plainPrefix !== this.#plainPrefix) this.prefixRoutes = withListLines(plainPrefix, this.#lists.lines.prefix, prefixOrder);
    this.#plainExact = plainExact;
    this.#plainPrefix = plainPrefix;
    return this.warnings !== warnings;
  }
}

/** Longest key first, ties by key: the order of prefix map lines. */
export const prefixOrder = (a: string, b: string) => b.length - a.length || compareCodeUnits(a, b);

function sameCandidates(a: readonly CandidateLine[], b: readonly CandidateLine[]): boolean {
  return a.length === b.length && a.every((line, i) => line.key === b[i]!.key && line.value === b[i]!.value);
}

/** The winning lines with the lines of lists in place of theirs (and beside them where no claim without conditions holds the key). */
function withListLines(plain: readonly Route[], listLines: ReadonlyMap<string, Route>, order: (a: string, b: string) => number): readonly Route[] {
  if (listLines.size === 0) return plain;
  const merged = plain.filter((route) => !listLines.has(route.key));
  merged.push(...listLines.values());
  return Object.freeze(merged.sort((a, b) => order(a.key, b.key)));
}
