import type { CompiledPath, WatchedResource } from '../config/types.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { withoutIgnoredFields } from '../kube/select.ts';
import { IndexedStore } from './indexed-store.ts';

/**
 * Stores for a fixed set of objects (manifests, test fixtures), built the
 * way the pipeline builds them from events: one indexed store per watched
 * resource, ignored fields dropped.
 */
export function buildStores(resources: readonly WatchedResource[], objects: ReadonlyMap<string, readonly KubeObject[]>, ignoreFields: readonly CompiledPath[]): Map<string, IndexedStore> {
  const stores = new Map<string, IndexedStore>();
  for (const resource of resources) {
    const store = new IndexedStore(resource.indexBy.map((path) => path.get));
    for (const object of objects.get(resource.name) ?? []) store.upsert(withoutIgnoredFields(object, ignoreFields));
    stores.set(resource.name, store);
  }
  return stores;
}
