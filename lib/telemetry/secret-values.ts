import { Buffer } from 'node:buffer';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';

function valuesOf(secret: KubeObject): string[] {
  const values: string[] = [];
  const data = secret['data'];
  if (typeof data === 'object' && data !== null) {
    for (const encoded of Object.values(data)) {
      if (typeof encoded !== 'string') continue;
      values.push(encoded, Buffer.from(encoded, 'base64').toString('utf8'));
    }
  }
  const stringData = secret['stringData'];
  if (typeof stringData === 'object' && stringData !== null) {
    for (const value of Object.values(stringData)) if (typeof value === 'string') values.push(value);
  }
  return values;
}

/**
 * The data of every Kubernetes Secret in the stores, as stored (base64) and
 * decoded, for the redactor. Read again only after a store changed; the
 * same array comes back while nothing did.
 */
export function secretValues(stores: () => ReadonlyMap<string, StoreReader> | undefined): () => readonly string[] {
  let seenStores: ReadonlyMap<string, StoreReader> | undefined;
  let seenVersions: readonly number[] = [];
  let values: readonly string[] = [];
  return () => {
    const current = stores();
    if (!current) return values;
    const versions = [...current.values()].map((store) => store.version);
    if (current === seenStores && versions.every((version, i) => version === seenVersions[i])) return values;
    seenStores = current;
    seenVersions = versions;
    const collected: string[] = [];
    for (const store of current.values()) {
      // A store holds one watched type: its first object tells whether it holds Secrets.
      const objects = store.list();
      if (objects[0]?.kind !== 'Secret') continue;
      for (const secret of objects) collected.push(...valuesOf(secret));
    }
    values = collected;
    return values;
  };
}
