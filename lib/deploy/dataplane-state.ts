/**
 * What a HAProxy behind a Data Plane API runs, as the API reports it
 * (docs/dataplane-api-contract.md §3, §3a, §7, §7a): the stored
 * configuration with its version, the files of the three storages, and
 * the API's maps directory.
 *
 * Two things never come back as they were written. The configuration is
 * stored as the API's parser writes it back: when its checksum is the one
 * the API gave for a text this controller posted, that text is what runs;
 * otherwise the stored text is taken as it is and compared by meaning
 * (plan-sections.ts). A certificate is described, not returned: when its
 * metadata describes one of the known PEMs of that name, that PEM is what
 * runs; otherwise a description stands in, which no PEM equals.
 */
import { posix } from 'node:path';
import { describesCertificate } from '../dataplane/certificate-identity.ts';
import type { DataplaneClient } from '../dataplane/client.ts';
import type { StorageKind, StoredCertificate } from '../dataplane/types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';
import type { DeployedState } from './target.ts';

export interface DataplaneState extends DeployedState {
  readonly version: number;
  /** The API's maps_dir, from the `file` of a stored map: a runtime map is reached as `<maps_dir>/<storage name>`. */
  readonly mapsDir: string | undefined;
}

/** A configuration this controller posted, and the checksum the API gave for what it stored. */
export interface Posted {
  readonly text: string;
  readonly checksum: string;
}

type FileGroup = keyof Omit<RenderedFiles, 'config'>;

export const storageGroups: readonly { readonly kind: StorageKind; readonly group: FileGroup }[] = [
  { kind: 'maps', group: 'maps' },
  { kind: 'ssl_certificates', group: 'certificates' },
  { kind: 'general', group: 'files' },
];

/** The header the Data Plane API writes into its managed file; it is not part of the configuration. */
const MANAGED_HEADER = /^# (_md5hash=|_version=|Dataplaneapi managed File|changing file directly)/;

function withoutManagedHeader(text: string): string {
  const lines = text.split('\n');
  let first = 0;
  while (first < lines.length && MANAGED_HEADER.test(lines[first]!)) first++;
  return lines.slice(first).join('\n');
}

/** What stands for a stored certificate no known PEM matches: never equal to a PEM, so it is planned as changed. */
function describe(certificate: StoredCertificate): string {
  return `# stored certificate ${certificate.storage_name}: serial ${certificate.serial ?? '?'}, ${certificate.size ?? '?'} bytes\n`;
}

export async function readDataplaneState(client: DataplaneClient, known: readonly RenderedFiles[], posted: Posted | undefined): Promise<DataplaneState> {
  const raw = await client.getRawConfiguration();
  const config = posted !== undefined && raw.checksum === posted.checksum ? posted.text : withoutManagedHeader(raw.text);
  const groups: Record<FileGroup, Record<string, string>> = { maps: {}, certificates: {}, files: {} };
  let mapsDir: string | undefined;
  for (const { kind, group } of storageGroups) {
    for (const file of await client.listStorage(kind)) {
      const name = file.storage_name;
      if (kind === 'ssl_certificates') {
        const stored = await client.storageCertificate(name);
        const pem = known.map((render) => render.certificates[name]).find((candidate) => candidate !== undefined && describesCertificate(stored, candidate));
        groups.certificates[name] = pem ?? describe(stored);
        continue;
      }
      if (kind === 'maps' && file.file !== undefined) mapsDir ??= posix.dirname(file.file);
      groups[group][name] = await client.getStorageFile(kind, name);
    }
  }
  return { files: { config, ...groups }, version: raw.version, mapsDir };
}
