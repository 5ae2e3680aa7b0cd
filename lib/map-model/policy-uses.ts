import { compareCodeUnits } from '../compare.ts';
import { sameItems } from '../collections/sorted-list.ts';
import { settingRules, slotOrder, type HeaderSlot, type PolicyLine, type SettingRules } from './policy-slots.ts';
import type { PolicyKey, RoutePolicy } from './route-policies.ts';

/**
 * The policies the winning route claims use, counted, so the list changes
 * only when a policy gains its first route or loses its last.
 */
export class PolicyUses {
  /** Per policy key, a policy of that key and how many winning claims use it. */
  readonly #uses = new Map<PolicyKey, { readonly policy: RoutePolicy; claims: number }>();
  #touched = false;
  /** Every used policy once, sorted by key. */
  list: readonly RoutePolicy[] = Object.freeze([]);
  /** The header slots of the policies, each once, in the order of their rules; the same list while the same slots. */
  slots: readonly HeaderSlot[] = Object.freeze([]);
  /** The policies' policies.map lines, in the order of the policies. */
  lines: readonly PolicyLine[] = Object.freeze([]);
  /** Which settings of one rule each the policies have. */
  settings: SettingRules = settingRules([], undefined);

  add(policy: RoutePolicy): void {
    const used = this.#uses.get(policy.key);
    if (used) used.claims++;
    else {
      this.#uses.set(policy.key, { policy, claims: 1 });
      this.#touched = true;
    }
  }

  remove(policy: RoutePolicy): void {
    const used = this.#uses.get(policy.key)!;
    if (--used.claims > 0) return;
    this.#uses.delete(policy.key);
    this.#touched = true;
  }

  /** Makes the list again when a policy came or went; a policy that went and came back leaves it as it was. */
  settle(): void {
    if (!this.#touched) return;
    this.#touched = false;
    const list = [...this.#uses.values()].map((entry) => entry.policy).sort((a, b) => compareCodeUnits(a.key, b.key));
    if (sameItems(this.list, list)) return;
    this.list = Object.freeze(list);
    this.lines = Object.freeze(list.flatMap((policy) => policy.lines));
    this.settings = settingRules(
      list.map((policy) => policy.settingValues),
      this.settings,
    );
    const slots = new Map<string, HeaderSlot>();
    for (const policy of list) for (const slot of policy.headerSlots) if (!slots.has(slot.slot)) slots.set(slot.slot, slot);
    const sorted = [...slots.values()].sort(slotOrder);
    if (
      !sameItems(
        this.slots.map((slot) => slot.slot),
        sorted.map((slot) => slot.slot),
      )
    )
      this.slots = Object.freeze(sorted);
  }
}
