import { compareCodeUnits } from '../compare.ts';
import { patchSorted, sameItems } from '../collections/sorted-list.ts';
import type { RouteClaim } from './claim-types.ts';
import { claimOrder } from './route-claims.ts';
import { conditionShapes, type ConditionShape, type RouteConditions } from './route-conditions.ts';

/**
 * Every distinct set of conditions the reachable candidates have
 * (docs/adr/0012-header-query-method-matches.md), kept as candidates are
 * reached and left: a set is rendered once whoever has it, and is charged to
 * the first claim having it in the order a fresh build meets them, so an
 * incremental model and a fresh one name the same object.
 */
export class ReachedConditions {
  /** Per conditions key, the claims reaching it, each with how many lists reach it. */
  readonly #uses = new Map<string, Map<RouteClaim, number>>();
  readonly #touched = new Set<string>();
  /** Sorted by key; the last list while it holds the same sets. */
  list: readonly RouteConditions[] = Object.freeze([]);
  /** The shapes of the sets, each once, sorted by key (route-conditions.ts); the last list while it holds the same shapes. */
  shapes: readonly ConditionShape[] = Object.freeze([]);

  add(claim: RouteClaim): void {
    const key = claim.conditions!.key;
    let uses = this.#uses.get(key);
    if (!uses) this.#uses.set(key, (uses = new Map()));
    uses.set(claim, (uses.get(claim) ?? 0) + 1);
    this.#touched.add(key);
  }

  remove(claim: RouteClaim): void {
    const key = claim.conditions!.key;
    const uses = this.#uses.get(key)!;
    const count = uses.get(claim)!;
    if (count > 1) uses.set(claim, count - 1);
    else uses.delete(claim);
    if (uses.size === 0) this.#uses.delete(key);
    this.#touched.add(key);
  }

  /** Patches the list with the sets reached or left since the last call; true when it changed. */
  settle(): boolean {
    if (this.#touched.size === 0) return false;
    const before = this.list;
    this.list = patchSorted(
      before,
      [...this.#touched],
      (key) => this.#first(key),
      () => [...this.#uses.keys()].map((key) => this.#first(key)!),
      (conditions) => conditions.key,
      compareCodeUnits,
    );
    this.#touched.clear();
    if (this.list === before) return false;
    const shapes = conditionShapes(this.list);
    if (
      !sameItems(
        this.shapes.map((shape) => shape.key),
        shapes.map((shape) => shape.key),
      )
    )
      this.shapes = shapes;
    return true;
  }

  #first(key: string): RouteConditions | undefined {
    const uses = this.#uses.get(key);
    if (!uses) return undefined;
    let first: RouteClaim | undefined;
    for (const claim of uses.keys()) if (first === undefined || claimOrder(claim, first) < 0) first = claim;
    return first!.conditions;
  }
}
