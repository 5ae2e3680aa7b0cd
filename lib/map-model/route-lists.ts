import { createHash } from 'node:crypto';
import { compareCodeUnits } from '../compare.ts';
import { patchSorted, sameItems } from '../collections/sorted-list.ts';
import type { Problem } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import type { RouteClaim } from './claim-types.ts';
import { RouteItem } from './model-source.ts';
import { NO_PROBLEMS } from './problems.ts';
import { ReachedConditions } from './reached-conditions.ts';
import { NO_REGEX_CANDIDATES, rankRegexKey, regexLines, type RegexCandidates } from './regex-candidates.ts';
import { claimOrder, conflictWarning, rankedOrder, type RouteClaims, type SettledKeys } from './route-claims.ts';
import type { ConditionShape, RouteConditions } from './route-conditions.ts';
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
 * candidates.map holds `<list id>/<shape key>/<values>` → `<rank>=<line value>`
 * (route-conditions.ts: one lookup per shape of conditions, keyed by the
 * request's own values) and `<list id>/` → `999=<fallback value>`: `str`
 * lookups, so a line added at runtime may go anywhere, and a route whose
 * shape of conditions some served route has changes map lines only.
 */

/** A candidates.map line's fallback rank: the candidates' ranks fit three digits below it. */
const FALLBACK_RANK = 999;

const NO_CANDIDATES: readonly CandidateLine[] = Object.freeze([]);
const NO_CLAIMS: readonly RouteClaim[] = Object.freeze([]);
const NO_LEVELS: readonly string[] = Object.freeze([]);

function lineValue(claim: RouteClaim): string {
  return `${claim.backend.name}${claim.policy ? `:${claim.policy.key}` : ''}`;
}

/** The keys of the shorter prefixes of the same host a request under a prefix key may also match, longest first. */
function shorterPrefixes(host: string, key: string): string[] {
  const path = key.slice(host.length);
  const keys: string[] = [];
  for (let end = path.length - 1; end > 0;) {
    end = path.lastIndexOf('/', end - 1);
    if (end < 0) break;
    keys.push(`${host}${path.slice(0, end + 1)}`);
  }
  return keys;
}

/** The list of one exact or prefix key holding claims with conditions, as of the last settle. */
interface KeyList {
  readonly map: 'exact' | 'prefix';
  readonly key: string;
  /** `l` and 16 hex digits of a digest of map and key: its candidates.map lines' prefix. */
  readonly id: string;
  /** The claims with conditions on the key, in no particular order. */
  readonly claims: RouteClaim[];
  /** The keys the list went through (itself, then shorter prefixes down to the first with a line without conditions). */
  levels: readonly string[];
  /** Its path map line, undefined while no candidate is reached. */
  line: Route | undefined;
  candidates: readonly CandidateLine[];
  /** The candidates a request can reach: users of their backends and policies. */
  reached: readonly RouteClaim[];
  /** For each claim of its own key no request can reach, because one ranked before it has the same key and conditions. */
  warnings: readonly Problem[];
}

/** The claims with conditions of one regex key (regex-candidates.ts), as of the last settle. */
interface RegexKey {
  readonly key: string;
  readonly claims: RouteClaim[];
  reached: readonly RouteClaim[];
  warnings: readonly Problem[];
}

/**
 * The claims with conditions of the hosts their objects may serve, and the
 * lists made of them, kept by the aggregate (aggregate.ts) next to the
 * claims without. Settled key by key: a settle makes again only the lists
 * of the keys whose claims with conditions or winning line moved, and of
 * the longer keys whose lists go on through such a key; the outputs are
 * patched, the unchanged items the same objects as before.
 */
export class ConditionalClaims {
  /** The claims without conditions, whose winners are the lists' fallbacks. */
  readonly #plain: RouteClaims;
  readonly #lists = { exact: new Map<string, KeyList>(), prefix: new Map<string, KeyList>() };
  /** Per prefix key, the prefix lists that went through it at the last settle. */
  readonly #through = new Map<string, Set<KeyList>>();
  readonly #regexKeys = new Map<string, RegexKey>();
  /** Lists and regex keys whose claims came or went since the last settle. */
  readonly #touched = new Set<KeyList>();
  readonly #touchedRegex = new Set<RegexKey>();
  /** The lines of the lists that have one, by map and key. */
  readonly #listLines = { exact: new Map<string, Route>(), prefix: new Map<string, Route>() };
  readonly #candidateLines = new Map<string, CandidateLine>();
  /** Per reachable claim, how many lists (and regex keys) reach it. */
  readonly #users = new Map<RouteClaim, number>();
  readonly #conditions = new ReachedConditions();
  readonly #regexConditions = new ReachedConditions();
  /** Lists and regex keys with warnings. */
  readonly #warned = new Set<KeyList | RegexKey>();
  exactRoutes: readonly Route[] = Object.freeze([]);
  prefixRoutes: readonly Route[] = Object.freeze([]);
  /** Sorted by key. */
  candidates: readonly CandidateLine[] = NO_CANDIDATES;
  warnings: readonly Problem[] = NO_PROBLEMS;
  /** The claims with conditions on regular expression paths (regex-candidates.ts). */
  regex: RegexCandidates = NO_REGEX_CANDIDATES;
  #regexLines: { readonly plain: readonly Route[]; readonly regex: RegexCandidates; readonly lines: readonly Route[] } | undefined;

  constructor(plain: RouteClaims) {
    this.#plain = plain;
  }

  /** Every distinct set of conditions a reachable list candidate has, sorted by key. */
  get conditions(): readonly RouteConditions[] {
    return this.#conditions.list;
  }

  /** The shapes of those sets, each once, sorted by key: one lookup each per request on a list. */
  get conditionShapes(): readonly ConditionShape[] {
    return this.#conditions.shapes;
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
    if (claim.map === 'regex') {
      let entry = this.#regexKeys.get(claim.key);
      if (!entry) this.#regexKeys.set(claim.key, (entry = { key: claim.key, claims: [], reached: NO_CLAIMS, warnings: NO_PROBLEMS }));
      entry.claims.push(claim);
      this.#touchedRegex.add(entry);
      return;
    }
    let list = this.#lists[claim.map].get(claim.key);
    if (!list) {
      const id = `l${createHash('sha256').update(`${claim.map}\u0000${claim.key}`).digest('hex').slice(0, 16)}`;
      list = { map: claim.map, key: claim.key, id, claims: [], levels: NO_LEVELS, line: undefined, candidates: NO_CANDIDATES, reached: NO_CLAIMS, warnings: NO_PROBLEMS };
      this.#lists[claim.map].set(claim.key, list);
    }
    list.claims.push(claim);
    this.#touched.add(list);
  }

  remove(claim: RouteClaim): void {
    const entry = claim.map === 'regex' ? this.#regexKeys.get(claim.key)! : this.#lists[claim.map].get(claim.key)!;
    entry.claims.splice(entry.claims.indexOf(claim), 1);
    if (claim.map === 'regex') this.#touchedRegex.add(entry as RegexKey);
    else this.#touched.add(entry as KeyList);
  }

  /**
   * Makes again the lists whose claims with conditions moved, or whose
   * winning lines did (`keys`, the keys the claims without conditions just
   * settled), and patches the lines, candidates, conditions and warnings
   * with theirs; the claims that became or stopped being candidates are
   * told to `route` and `unroute`. True when the warnings changed.
   */
  settle(keys: SettledKeys, route: (claim: RouteClaim) => void, unroute: (claim: RouteClaim) => void): boolean {
    const dirty = new Set<KeyList>();
    for (const list of this.#touched) {
      dirty.add(list);
      // A list going on through this key ranks its claims too.
      if (list.map === 'prefix') for (const through of this.#through.get(list.key) ?? []) dirty.add(through);
    }
    this.#touched.clear();
    for (const key of keys.exact) {
      const list = this.#lists.exact.get(key);
      if (list) dirty.add(list);
    }
    // A winning line that came, went or changed is the fallback of the lists through its key, or ends or extends them.
    for (const key of keys.prefix) for (const through of this.#through.get(key) ?? []) dirty.add(through);

    /** Per claim, how many more lists reach it than before. */
    const reach = new Map<RouteClaim, number>();
    const changedLines = { exact: new Set(keys.exact), prefix: new Set(keys.prefix) };
    const changedCandidates = new Set<string>();
    let warningsMoved = false;
    for (const list of dirty) {
      const { line, candidates, reached, warnings } = list;
      this.#rank(list);
      if (list.line !== line) {
        changedLines[list.map].add(list.key);
        if (list.line) this.#listLines[list.map].set(list.key, list.line);
        else this.#listLines[list.map].delete(list.key);
      }
      if (list.candidates !== candidates) this.#patchCandidates(candidates, list.candidates, changedCandidates);
      if (list.reached !== reached) moveReach(reached, list.reached, this.#conditions, reach);
      warningsMoved = this.#warn(list, warnings) || warningsMoved;
      if (list.claims.length === 0) this.#lists[list.map].delete(list.key);
    }
    let regexMoved = false;
    for (const entry of this.#touchedRegex) {
      const { reached, warnings } = entry;
      const ranked = rankRegexKey(entry.claims);
      entry.warnings = ranked.warnings;
      if (!sameItems(reached, ranked.reached)) {
        entry.reached = ranked.reached;
        moveReach(reached, entry.reached, this.#regexConditions, reach);
        regexMoved = true;
      }
      warningsMoved = this.#warn(entry, warnings) || warningsMoved;
      if (entry.claims.length === 0) this.#regexKeys.delete(entry.key);
    }
    this.#touchedRegex.clear();

    // Those no longer reached first, as a fresh build would leave them out.
    for (const [claim, by] of reach) if (by < 0 && this.#moveUser(claim, by) === 0) unroute(claim);
    for (const [claim, by] of reach) if (by > 0 && this.#moveUser(claim, by) === by) route(claim);
    this.#conditions.settle();
    if (this.#regexConditions.settle() || regexMoved) {
      const claims = [...this.#regexKeys.values()].flatMap((entry) => entry.reached);
      const conditions = this.#regexConditions.list;
      if (!sameItems(this.regex.claims, claims) || this.regex.conditions !== conditions) {
        this.regex = claims.length === 0 ? NO_REGEX_CANDIDATES : Object.freeze({ claims: Object.freeze(claims), conditions });
      }
    }
    this.candidates = patchSorted(
      this.candidates,
      [...changedCandidates],
      (key) => this.#candidateLines.get(key),
      () => this.#candidateLines.values(),
      (line) => line.key,
      compareCodeUnits,
    );
    this.exactRoutes = this.#patchLines('exact', [...changedLines.exact], this.exactRoutes, compareCodeUnits);
    this.prefixRoutes = this.#patchLines('prefix', [...changedLines.prefix], this.prefixRoutes, prefixOrder);
    if (warningsMoved) this.warnings = this.#warned.size === 0 ? NO_PROBLEMS : [...this.#warned].flatMap((entry) => entry.warnings);
    return warningsMoved;
  }

  /** Ranks a list's candidates again from its claims, the claims of the shorter prefixes it goes through and the winning lines; keeps what did not change. */
  #rank(list: KeyList): void {
    const { map, key, claims } = list;
    /** The first of its own claims in the order a fresh build meets them: its line is charged to it. */
    let first: RouteClaim | undefined;
    for (const claim of claims) if (first === undefined || claimOrder(claim, first) < 0) first = claim;
    const ranked: RouteClaim[] = [];
    let fallback: RouteClaim | undefined;
    let levels: readonly string[] = NO_LEVELS;
    if (first) {
      const all = map === 'prefix' ? [key, ...shorterPrefixes(first.host, key)] : [key];
      let walked = 0;
      for (const level of all) {
        walked++;
        const here = [...(level === key ? claims : (this.#lists.prefix.get(level)?.claims ?? NO_CLAIMS))];
        const plain = this.#plain.winner(map, level);
        if (plain) here.push(plain);
        here.sort(rankedOrder);
        const cut = here.findIndex((claim) => claim.conditions === undefined);
        ranked.push(...(cut < 0 ? here : here.slice(0, cut)));
        if (cut >= 0) {
          fallback = here[cut];
          break;
        }
      }
      levels = walked === all.length ? all : all.slice(0, walked);
    }
    if (map === 'prefix') this.#index(list, levels);
    // A candidate after another with the same conditions is never reached (said of its own key's list); nor one past the ranks that fit.
    const reached = new Map<string, RouteClaim>();
    const warnings: Problem[] = [];
    for (const claim of ranked) {
      const seen = reached.get(claim.conditions!.key);
      if (seen === undefined && reached.size < FALLBACK_RANK) reached.set(claim.conditions!.key, claim);
      const warning = seen && claim.key === key && conflictWarning(seen, claim, ', with the same header, query parameter and method matches,');
      if (warning) warnings.push(warning);
    }
    list.warnings = warnings.length > 0 ? warnings : NO_PROBLEMS;
    if (reached.size === 0) {
      list.line = undefined;
      list.candidates = NO_CANDIDATES;
      list.reached = NO_CLAIMS;
      return;
    }
    const source = sourceOf(first!.line)!;
    if (list.line === undefined || sourceOf(list.line) !== source) list.line = Object.freeze(new RouteItem(key, `?${list.id}`, undefined, source));
    const before = new Map(list.candidates.map((line) => [line.key, line]));
    const candidate = (lineKey: string, value: string): CandidateLine => {
      const kept = before.get(lineKey);
      return kept?.value === value ? kept : { key: lineKey, value };
    };
    const candidates = [candidate(`${list.id}/`, `${FALLBACK_RANK}=${fallback ? lineValue(fallback) : ''}`)];
    let rank = 0;
    for (const claim of reached.values()) candidates.push(candidate(`${list.id}/${claim.conditions!.lookup}`, `${String(rank++).padStart(3, '0')}=${lineValue(claim)}`));
    if (!sameItems(list.candidates, candidates)) list.candidates = Object.freeze(candidates);
    const claimsReached = [...reached.values()];
    if (!sameItems(list.reached, claimsReached)) list.reached = Object.freeze(claimsReached);
  }

  /** Files a prefix list under the keys it goes through. */
  #index(list: KeyList, levels: readonly string[]): void {
    const before = list.levels;
    if (before.length === levels.length && before.every((level, i) => level === levels[i])) return;
    for (const level of before) {
      const lists = this.#through.get(level)!;
      lists.delete(list);
      if (lists.size === 0) this.#through.delete(level);
    }
    for (const level of levels) {
      const lists = this.#through.get(level);
      if (lists) lists.add(list);
      else this.#through.set(level, new Set([list]));
    }
    list.levels = levels;
  }

  #patchCandidates(before: readonly CandidateLine[], after: readonly CandidateLine[], changed: Set<string>): void {
    const kept = new Set(after.map((line) => line.key));
    for (const line of before) {
      if (kept.has(line.key)) continue;
      this.#candidateLines.delete(line.key);
      changed.add(line.key);
    }
    for (const line of after) {
      if (this.#candidateLines.get(line.key) === line) continue;
      this.#candidateLines.set(line.key, line);
      changed.add(line.key);
    }
  }

  /** Whether the entry's warnings (or its having none) moved from `before`. */
  #warn(entry: KeyList | RegexKey, before: readonly Problem[]): boolean {
    if (entry.warnings.length + before.length === 0) return false;
    if (entry.warnings.length > 0) this.#warned.add(entry);
    else this.#warned.delete(entry);
    return true;
  }

  /** How many lists reach the claim after `by` more: 0 once none does. */
  #moveUser(claim: RouteClaim, by: number): number {
    const count = (this.#users.get(claim) ?? 0) + by;
    if (count === 0) this.#users.delete(claim);
    else this.#users.set(claim, count);
    return count;
  }

  #patchLines(map: 'exact' | 'prefix', changed: readonly string[], before: readonly Route[], order: (a: string, b: string) => number): readonly Route[] {
    const lists = this.#listLines[map];
    return patchSorted(
      before,
      changed,
      (key) => lists.get(key) ?? this.#plain.line(map, key),
      () => this.#allLines(map),
      (route) => route.key,
      order,
    );
  }

  /** The winning lines, each with its list's line in its place while it has one, and the lines of lists on keys without one. */
  *#allLines(map: 'exact' | 'prefix'): Generator<Route> {
    const lists = this.#listLines[map];
    for (const route of this.#plain.lines(map)) if (!lists.has(route.key)) yield route;
    yield* lists.values();
  }
}

/** Tells `conditions` and the reach counts of the claims a list (or regex key) reaches now instead of before. */
function moveReach(before: readonly RouteClaim[], after: readonly RouteClaim[], conditions: ReachedConditions, reach: Map<RouteClaim, number>): void {
  const left = new Set(before);
  for (const claim of after) {
    if (left.delete(claim)) continue;
    conditions.add(claim);
    reach.set(claim, (reach.get(claim) ?? 0) + 1);
  }
  for (const claim of left) {
    conditions.remove(claim);
    reach.set(claim, (reach.get(claim) ?? 0) - 1);
  }
}

/** Longest key first, ties by key: the order of prefix map lines. */
export const prefixOrder = (a: string, b: string) => b.length - a.length || compareCodeUnits(a, b);
