import { asyncScheduler, defer, filter, map, startWith, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { ChangeRef, ResourceEvent, Snapshot, WatchedType } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { IndexedStore } from '../lib/store/indexed-store.ts';

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
        const known = store.get(namespace, name) !== undefined;
        const changed = event.type === 'deleted' ? store.delete(event.object) : store.upsert(event.object);
        if (!changed || unsynced.size > 0) return undefined;
        revision += 1;
        const type: ChangeRef['type'] = event.type === 'deleted' ? 'deleted' : known ? 'modified' : 'added';
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
