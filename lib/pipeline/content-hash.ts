import { createHash } from 'node:crypto';
import type { RenderedFiles } from './model.ts';

/**
 * A SHA-256 over the configuration and every file, independent of key
 * order. Names and contents are length-prefixed so no content can mimic a
 * boundary and collide with a different set of files.
 */
export function contentHash(files: RenderedFiles): string {
  const hash = createHash('sha256');
  const field = (text: string) => {
    hash.update(`${Buffer.byteLength(text)}:`);
    hash.update(text);
  };
  field(files.config);
  for (const group of ['maps', 'certificates', 'files'] as const) {
    const entries = Object.entries(files[group]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    field(`${group}:${entries.length}`);
    for (const [name, content] of entries) {
      field(name);
      field(content);
    }
  }
  return hash.digest('hex');
}
