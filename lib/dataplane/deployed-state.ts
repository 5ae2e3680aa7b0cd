import type { RenderedFiles } from '../pipeline/model.ts';
import type { DataplaneClient } from './client.ts';
import type { StorageKind } from './types.ts';

/** What an endpoint runs, as the synchroniser last saw or wrote it. */
export interface DeployedState {
  readonly files: RenderedFiles;
  /** The configuration version that goes with `files`. */
  readonly version: number;
}

/** The header the Data Plane API writes into its managed file; it is not part of the configuration. */
const managedHeader = /^# (_md5hash=|_version=|Dataplaneapi managed File|changing file directly)/;

export function withoutManagedHeader(text: string): string {
  const lines = text.split('\n');
  let first = 0;
  while (first < lines.length && managedHeader.test(lines[first]!)) first++;
  return lines.slice(first).join('\n');
}

export const storageGroups: readonly { readonly kind: StorageKind; readonly group: keyof Omit<RenderedFiles, 'config'> }[] = [
  { kind: 'maps', group: 'maps' },
  { kind: 'ssl_certificates', group: 'certificates' },
  { kind: 'general', group: 'files' },
];

/**
 * Reads an endpoint's whole state: the raw configuration with its version,
 * and every file of the three storages. Used when nothing is
 * cached yet, when the version moved under us, and for drift checks.
 */
export async function fetchDeployedState(client: DataplaneClient): Promise<DeployedState> {
  const raw = await client.getRawConfiguration();
  const groups: Record<string, Record<string, string>> = { maps: {}, certificates: {}, files: {} };
  for (const { kind, group } of storageGroups) {
    for (const file of await client.listStorage(kind)) {
      groups[group]![file.storage_name] =
        kind === 'ssl_certificates'
          ? JSON.stringify(await client.storageCertificate(file.storage_name))
          : await client.getStorageFile(kind, file.storage_name);
    }
  }
  return {
    files: { config: withoutManagedHeader(raw.text), maps: groups['maps']!, certificates: groups['certificates']!, files: groups['files']! },
    version: raw.version,
  };
}
