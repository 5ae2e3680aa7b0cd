import { asyncScheduler, defer, filter, map, startWith, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { ChangeRef, ResourceEvent, Snapshot, WatchedType } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { IndexedStore } from '../lib/store/indexed-store.ts';
import { onlyStatusChanged } from '../lib/store/status-only.ts';

export interface ResourcesOptions {
  readonly watched: readonly WatchedType[];
  readonly report: Report;
  /** The clock for ChangeRef.at, so marble tests run on virtual time. */
  readonly scheduler?: SchedulerLike;
}

/**
 * Folds the merged informer events of every watched type into one indexed
 * store per type and emits a snapshot per change. Nothing is emitted until
 * every type has listed: a configuration rendered from half-listed stores
 * would deploy without backends that do exist.
 */
export function resources(options: ResourcesOptions): OperatorFunction<ResourceEvent, Snapshot> {
  const { watched, report, scheduler = asyncScheduler } = options;
  return (source) =>
    defer(() => {
      const stores = new Map(watched.map((type) => [type.kind, new IndexedStore(type.indexBy)]));
      const unsynced = new Set(stores.keys());
      const ownStatus = new Set(watched.filter((type) => type.ownStatus).map((type) => type.kind));
      let revision = 0;

      const initialSnapshot = (): Snapshot => {
        revision = 1;
        report({ type: 'synced', revision, kinds: [...stores.keys()], stores });
        return { revision, stores, change: undefined };
      };

      const apply = (event: ResourceEvent): Snapshot | undefined => {
        const store = stores.get(event.kind);
        if (!store) return undefined;
        if (event.type === 'synced') {
          // A relist redelivers its objects as events; the repeated sync itself changes nothing.
          return unsynced.delete(event.kind) && unsynced.size === 0 ? initialSnapshot() : undefined;
        }
        const { namespace, name } = event.object.metadata;
        // After a reconnect an informer may re-add a known object or modify an
        // unknown one; the change is named by its effect on the store.
        const stored = store.get(namespace, name);
        const changed = event.type === 'deleted' ? store.delete(event.object) : store.upsert(event.object);
        if (!changed || unsynced.size > 0) return undefined;
        // The controller's own status writes come back as updates: stored (the status writers compare
        // against them), but they change nothing a render reads, so rendering for them would be wasted.
        if (stored !== undefined && event.type !== 'deleted' && ownStatus.has(event.kind) && onlyStatusChanged(stored, event.object)) return undefined;
        revision += 1;
        const type: ChangeRef['type'] = event.type === 'deleted' ? 'deleted' : stored !== undefined ? 'modified' : 'added';
        return { revision, stores, change: { kind: event.kind, type, namespace, name, at: scheduler.now() } };
      };

      const snapshots = source.pipe(
        map(apply),
        filter((snapshot) => snapshot !== undefined),
      );
      // With no type to wait for, the stores are complete from the start.
      return unsynced.size === 0 ? snapshots.pipe(startWith(initialSnapshot())) : snapshots;
    });
}
