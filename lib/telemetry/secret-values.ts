import { Buffer } from 'node:buffer';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';

/** The hashes of htpasswd lines (`user:hash`): a basic-auth userlist writes the hash alone. */
function htpasswdHashes(text: string): string[] {
  if (!text.includes(':')) return [];
  const hashes: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) hashes.push(line.slice(colon + 1).trim());
  }
  return hashes;
}

function valuesOf(secret: KubeObject): string[] {
  const values: string[] = [];
  const data = secret['data'];
  if (typeof data === 'object' && data !== null) {
    for (const encoded of Object.values(data)) {
      if (typeof encoded !== 'string') continue;
      const decoded = Buffer.from(encoded, 'base64').toString('utf8');
      values.push(encoded, decoded, ...htpasswdHashes(decoded));
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
 * decoded, for the redactor. Read again only after a store of Secrets
 * changed (other stores churn far more and hold none); the same array comes
 * back while nothing did.
 */
export function secretValues(
  stores: () => ReadonlyMap<string, StoreReader> | undefined,
  /** Whether the configuration watches Secrets under this name: objects from a list may not name their kind. */
  isSecretType: (name: string) => boolean = () => false,
): () => readonly string[] {
  // A store holds one watched type: the configuration or its first object tells, once, whether it holds Secrets.
  const holdsSecrets = new WeakMap<StoreReader, boolean>();
  let seenStores: ReadonlyMap<string, StoreReader> | undefined;
  let seenVersions: readonly number[] = [];
  let values: readonly string[] = [];
  return () => {
    const current = stores();
    if (!current) return values;
    const secretStores = [...current].flatMap(([name, store]) => {
      let known = holdsSecrets.get(store);
      if (known === undefined && (isSecretType(name) || store.size > 0)) {
        holdsSecrets.set(store, (known = isSecretType(name) || store.list()[0]?.kind === 'Secret'));
      }
      return known ? [store] : [];
    });
    const versions = secretStores.map((store) => store.version);
    if (current === seenStores && versions.length === seenVersions.length && versions.every((version, i) => version === seenVersions[i])) return values;
    seenStores = current;
    seenVersions = versions;
    values = secretStores.flatMap((store) => store.list().flatMap(valuesOf));
    return values;
  };
}
