import type { Problem } from '../pipeline/model.ts';
import type { RouteClaim } from './claim-types.ts';
import { quote } from '../object-fields/names.ts';
import { aheadBy, compareOrigins, comparePrecedence } from '../routing/precedence.ts';
import { firstItem, withItem, withoutItem, type OneOrMore } from '../collections/one-or-more.ts';
import { NO_PROBLEMS } from './problems.ts';
import type { Route } from './types.ts';

/**
 * Every map line the served Ingresses ask for, by map and key, and which
 * claim wins each. Claims come and go with their Ingresses; only the keys
 * they touched are settled again, so one changed Ingress costs as much as
 * its own claims, not as much as all of them.
 *
 * Conflicts are settled by precedence (lib/routing/precedence.ts): an
 * Exact path beats the exact line of a Prefix path; then the older object
 * wins; within one object, the earlier path.
 */

export type RouteMap = RouteClaim['map'];

/** Object order, then spec order: the order in which a fresh build meets the claims. */
export function claimOrder(a: RouteClaim, b: RouteClaim): number {
  return a === b ? 0 : compareOrigins(a.rank.origin, b.rank.origin);
}

/** Precedence: which of the claims on one key serves it. */
export function rankedOrder(a: RouteClaim, b: RouteClaim): number {
  return a === b ? 0 : comparePrecedence(a.rank, b.rank);
}

/** The claims on one key of one map. */
interface KeyClaims {
  readonly map: RouteMap;
  readonly key: string;
  /** The winner first once settled; undefined once the last claim went. */
  claims: OneOrMore<RouteClaim> | undefined;
  /** The winner as of the last settle. */
  winner: RouteClaim | undefined;
  /** Conflict warnings as of the last settle. */
  warnings: readonly Problem[];
  /** Claims came or went since the last settle. */
  touched: boolean;
}

/** Per route map, the keys a settle looked at: their lines may have changed. */
export type SettledKeys = Readonly<Record<RouteMap, readonly string[]>>;

export class RouteClaims {
  readonly #byKey: Record<RouteMap, Map<string, KeyClaims>> = { exact: new Map(), prefix: new Map(), regex: new Map() };
  /** Keys with conflict warnings. */
  readonly #conflicted = new Set<KeyClaims>();
  /** Keys touched since the last settle. */
  #touched: KeyClaims[] = [];

  add(claim: RouteClaim): void {
    const { map, key } = claim;
    let entry = this.#byKey[map].get(key);
    if (!entry) {
      entry = { map, key, claims: undefined, winner: undefined, warnings: NO_PROBLEMS, touched: false };
      this.#byKey[map].set(key, entry);
    }
    this.#touch(entry);
    entry.claims = withItem(entry.claims, claim);
  }

  remove(claim: RouteClaim): void {
    const { map, key } = claim;
    const entry = this.#byKey[map].get(key)!;
    this.#touch(entry);
    entry.claims = withoutItem(entry.claims!, claim);
  }

  /** True when the claim won its key at the last settle. */
  isWinner(claim: RouteClaim): boolean {
    return this.#byKey[claim.map].get(claim.key)?.winner === claim;
  }

  /** Settles the key of a claim again at the next settle (its backend changed); nothing while no claim holds the key. */
  touch(claim: RouteClaim): void {
    const entry = this.#byKey[claim.map].get(claim.key);
    if (entry) this.#touch(entry);
  }

  #touch(entry: KeyClaims): void {
    if (entry.touched) return;
    entry.touched = true;
    this.#touched.push(entry);
  }

  /**
   * Settles the keys touched since the last call: tells `onWinner` of each
   * key whose winner changed, and returns the keys and whether the conflict
   * warnings changed.
   */
  settle(onWinner: (before: RouteClaim | undefined, after: RouteClaim | undefined) => void): {
    readonly keys: SettledKeys;
    readonly warningsChanged: boolean;
  } {
    const touched = this.#touched;
    this.#touched = [];
    const keys = { exact: [] as string[], prefix: [] as string[], regex: [] as string[] };
    let warningsChanged = false;
    for (let i = 0; i < touched.length; i++) {
      const entry = touched[i]!;
      entry.touched = false;
      keys[entry.map].push(entry.key);
      const { claims } = entry;
      // Sorted while touched claims are few: a sort of a sorted list with some added is cheap.
      if (Array.isArray(claims)) claims.sort(rankedOrder);
      const winner = claims && firstItem(claims);
      if (winner !== entry.winner) {
        onWinner(entry.winner, winner);
        entry.winner = winner;
      }
      if (!claims) this.#byKey[entry.map].delete(entry.key);
      const conflicts = Array.isArray(claims) ? conflictWarnings(claims) : NO_PROBLEMS;
      if (conflicts.length + entry.warnings.length === 0) continue;
      entry.warnings = conflicts;
      if (conflicts.length > 0) this.#conflicted.add(entry);
      else this.#conflicted.delete(entry);
      warningsChanged = true;
    }
    return { keys, warningsChanged };
  }

  /** The claim that won a key at the last settle; undefined when nothing claims it. */
  winner(map: RouteMap, key: string): RouteClaim | undefined {
    return this.#byKey[map].get(key)?.winner;
  }

  /** The line of a key, once settled; undefined when nothing claims it. */
  line(map: RouteMap, key: string): Route | undefined {
    return this.#byKey[map].get(key)?.winner?.line;
  }

  /** The lines of one map, one per key, in no particular order. */
  *lines(map: RouteMap): Generator<Route> {
    for (const entry of this.#byKey[map].values()) yield entry.winner!.line;
  }

  *warnings(): Generator<readonly Problem[]> {
    for (const entry of this.#conflicted) yield entry.warnings;
  }
}

/**
 * A claim that loses to one of the same rank for another backend, or with
 * other route settings, is a conflict; losing an Exact-over-Prefix ranking
 * is Kubernetes semantics, not a conflict.
 */
function conflictWarnings(claims: readonly RouteClaim[]): readonly Problem[] {
  const winner = claims[0]!;
  const problems: Problem[] = [];
  for (let i = 1; i < claims.length; i++) {
    const problem = conflictWarning(winner, claims[i]!);
    if (problem) problems.push(problem);
  }
  return problems.length > 0 ? problems : NO_PROBLEMS;
}

/**
 * What `claim` is told when `winner`, ranked before it with the same
 * matches (`alike` says which besides host and path), takes every request
 * it would have had; nothing when both send them the same way.
 */
export function conflictWarning(winner: RouteClaim, claim: RouteClaim, alike = ''): Problem | undefined {
  if (winner.fromExactPath !== claim.fromExactPath) return undefined;
  const sameBackend = winner.backend.name === claim.backend.name;
  if (sameBackend && winner.policy?.key === claim.policy?.key) return undefined;
  const by = `${winner.ingress === claim.ingress ? `the earlier ${winner.field}` : aheadBy(winner.place, claim.place, winner.label)}${alike}`;
  return {
    object: claim.label,
    field: claim.field,
    message: sameBackend
      ? `route ${quote(claim.key)} not served with its annotations' route settings: ${by} serves it with its own`
      : `route ${quote(claim.key)} not served here: ${by} sends it to backend ${winner.backend.name}`,
  };
}
