import type { BalanceRead } from './balance.ts';
import type { DraftSettings, SettingRule } from './rule.ts';
import type { Parsed } from './values.ts';

/**
 * Rule shapes both families use.
 */

/**
 * A setting spelled by several annotations of one family, all meaning the
 * same (allow-list and its older name whitelist): the first present wins,
 * the others are ignored naming it.
 */
export function listRule<T>(setting: string, names: readonly string[], parse: (value: string) => Parsed<T>, set: (into: DraftSettings, value: T) => void): SettingRule {
  return {
    setting,
    annotations: names,
    read: (values) => {
      const [used, ...others] = names.filter((name) => values(name) !== undefined);
      const ignored = Object.fromEntries(others.map((name) => [name, `${used} sets the same setting and is read instead`]));
      const parsed = parse(values(used!)!);
      return parsed.ok ? { apply: (into) => set(into, parsed.value), ignored } : { invalid: { [used!]: parsed.reason }, ignored };
    },
  };
}

/** A balance algorithm from one annotation; a recognised but unsupported one is ignored, the backend keeping roundrobin. */
export function balanceRule(annotation: string, parse: (value: string) => Parsed<BalanceRead>): SettingRule {
  return {
    setting: 'backend.balance',
    annotations: [annotation],
    read: (values) => balanceOutcome(annotation, parse(values(annotation)!)),
  };
}

export function balanceOutcome(annotation: string, parsed: Parsed<BalanceRead>): ReturnType<SettingRule['read']> {
  if (!parsed.ok) return { invalid: { [annotation]: parsed.reason } };
  const read = parsed.value;
  return 'balance' in read ? { apply: (into) => (into.backend.balance = read.balance) } : { ignored: { [annotation]: read.unsupported } };
}
