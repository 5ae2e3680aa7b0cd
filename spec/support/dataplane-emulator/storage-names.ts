/**
 * Storage names (§7): in the basename, every character outside
 * `[A-Za-z0-9_-]` (extra dots included) becomes `_`; the extension stays,
 * so `a.b.pem` is stored as `a_b.pem`.
 */
import { ApiError } from './http-kit.ts';

export function sanitizeStorageName(name: string): string {
  const file = name.split('/').pop() ?? '';
  const dot = file.lastIndexOf('.');
  const stem = dot > 0 ? file.slice(0, dot) : file;
  const extension = dot > 0 ? file.slice(dot) : '';
  return `${stem.replace(/[^A-Za-z0-9_-]/g, '_')}${extension.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/** A storage name from a URL: the stored file's name, never a path out of the storage directory. */
export function storedName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new ApiError(404, `missing object: file ${name} does not exist`);
  }
  return name;
}
