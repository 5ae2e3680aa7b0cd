import { readFile } from 'node:fs/promises';
import { loadControllerConfig } from '../config/load.ts';
import type { ControllerConfig } from '../config/types.ts';
import { defaultConfigPath } from './package-root.ts';

export type ConfigFileLoad = { readonly ok: true; readonly config: ControllerConfig; readonly path: string } | { readonly ok: false; readonly errors: readonly string[] };

/** Loads `--config FILE`, or the shipped configuration without one; every error is prefixed with the file. */
export async function loadConfigFile(path: string | undefined): Promise<ConfigFileLoad> {
  const file = path ?? defaultConfigPath();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { ok: false, errors: [`${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error)}`] };
  }
  const loaded = loadControllerConfig(text);
  return loaded.ok ? { ok: true, config: loaded.config, path: file } : { ok: false, errors: loaded.errors.map((e) => `${file}: ${e}`) };
}
