import type { Changes, Validated } from './model.ts';

/** Change references kept per reconciliation (trace links); the count stays exact. */
export const defaultMaxChangeRefs = 128;

/**
 * The changes of a configuration that was dropped (superseded while it
 * waited) folded into the one that replaced it. The newer configuration is a
 * whole snapshot, so its deployment also delivers the older one's changes;
 * without the fold, the change-to-deploy latency would count only from the
 * newer changes and read low exactly when churn makes it matter.
 */
export function mergeChanges(earlier: Changes, later: Changes, maxRefs = defaultMaxChangeRefs): Changes {
  if (earlier.count === 0) return later;
  if (later.count === 0) return earlier;
  return {
    count: earlier.count + later.count,
    firstAt: Math.min(earlier.firstAt, later.firstAt),
    refs: [...earlier.refs, ...later.refs].slice(0, maxRefs),
  };
}

/** A value superseded while it waited, folded into the one that replaced it: the newer value with both's changes. */
export function withChangesOf<T extends { readonly changes: Changes }>(dropped: T, next: T): T {
  return { ...next, changes: mergeChanges(dropped.changes, next.changes) };
}

/**
 * A configuration superseded while it waited, folded into the one that
 * replaced it. A runtime-first confirmation replacing one that never left
 * is that configuration deployed as any validated one (files and all),
 * delivering the changes it replaced.
 */
export function supersededConfig(dropped: Validated, next: Validated): Validated {
  const folded = withChangesOf(dropped, next);
  if (next.runtimeFirst !== 'confirmed') return folded;
  const { runtimeFirst: _confirmed, ...validated } = folded;
  return validated;
}
