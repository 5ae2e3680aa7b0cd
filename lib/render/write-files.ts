import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';

/** The path of each rendered file under a base directory, as the Data Plane API storage lays them out. */
export function renderedFilePaths(baseDir: string, files: RenderedFiles, dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>): Map<string, string> {
  const paths = new Map<string, string>([[join(baseDir, 'haproxy.cfg'), files.config]]);
  const group = (dir: string, entries: Readonly<Record<string, string>>) => {
    for (const [name, content] of Object.entries(entries)) paths.set(join(baseDir, dir, name), content);
  };
  group(dirs.mapsDir, files.maps);
  group(dirs.certificatesDir, files.certificates);
  group(dirs.generalDir, files.files);
  return paths;
}

/** Writes a render under `baseDir`: haproxy.cfg, and maps, certificates and general files in their directories. */
export async function writeRenderedFiles(baseDir: string, files: RenderedFiles, dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>): Promise<string> {
  for (const dir of [dirs.mapsDir, dirs.certificatesDir, dirs.generalDir]) {
    await mkdir(join(baseDir, dir), { recursive: true, mode: 0o700 });
  }
  const certificates = join(baseDir, dirs.certificatesDir);
  for (const [path, content] of renderedFilePaths(baseDir, files, dirs)) {
    // Certificates carry private keys.
    await writeFile(path, content, { mode: path.startsWith(certificates) ? 0o600 : 0o644 });
  }
  return join(baseDir, 'haproxy.cfg');
}
