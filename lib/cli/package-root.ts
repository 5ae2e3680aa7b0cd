import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of this package's package.json, found by walking up from
 * this file: the compiled code (dist/lib/cli/) sits one level deeper than
 * the source (lib/cli/), and both must find templates/ and the version.
 */
export function packageRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'haproxy-template-ic') {
      return dir;
    }
    if (dirname(dir) === dir) throw new Error('the haproxy-template-ic package.json was not found above its code');
  }
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The shipped controller configuration, used when no --config is given. */
export function defaultConfigPath(): string {
  return join(packageRoot(), 'templates', 'config.yaml');
}
