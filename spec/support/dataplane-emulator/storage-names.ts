/**
 * Storage names (§7), as client-native misc/stringutil.go SanitizeFilename
 * makes them: in the basename, every run of characters outside
 * `[A-Za-z0-9_-]` (extra dots included) becomes one `_`; the extension
 * stays, so `a.b.pem` is stored as `a_b.pem` and `a..b.pem` as `a_b.pem`.
 */
import { ApiError } from './http-kit.ts';

export function sanitizeStorageName(name: string): string {
  const file = name.split('/').pop() ?? '';
  const dot = file.lastIndexOf('.');
  const stem = dot > 0 ? file.slice(0, dot) : file;
  const extension = dot > 0 ? file.slice(dot) : '';
  return `${stem.replace(/[^A-Za-z0-9_-]+/g, '_')}${extension === '' ? '' : `.${extension.slice(1).replace(/[^A-Za-z0-9_-]+/g, '_')}`}`;
}

/** A storage name from a URL: the stored file's name, never a path out of the storage directory. */
export function storedName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new ApiError(404, `missing object: file ${name} does not exist`);
  }
  return name;
}
