import type { KubeObject, StoreReader } from '../pipeline/model.ts';

/**
 * A lookup by namespace and name across several stores of one kind (a kind
 * watched more than once, such as Secrets by type): the first store that
 * holds the object answers.
 */
export function lookupInEach(readers: readonly (StoreReader | undefined)[]): (namespace: string, name: string) => KubeObject | undefined {
  return (namespace, name) => {
    for (const reader of readers) {
      const found = reader?.get(namespace, name);
      if (found) return found;
    }
    return undefined;
  };
}
