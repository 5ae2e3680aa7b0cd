import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { filter, map, Observable } from 'rxjs';

function watchEvents(path: string, recursive: boolean): Observable<string | null> {
  return new Observable<string | null>((subscriber) => {
    const watcher = watch(path, { recursive }, (_event, filename) => subscriber.next(filename));
    watcher.on('error', (error) => subscriber.error(error));
    return () => watcher.close();
  });
}

/**
 * Emits whenever something under a directory changes. Editors write files
 * in several steps, so consumers debounce and re-read rather than trusting
 * any one event. A watch that fails (the directory vanished) errors.
 */
export function watchDirectory(dir: string): Observable<void> {
  return watchEvents(dir, true).pipe(map(() => undefined));
}

/**
 * Emits whenever a file changes. Its directory is watched, not the file:
 * editors that save by writing a new file and renaming it over the old one
 * would leave a watch on the old file blind.
 */
export function watchFile(file: string): Observable<void> {
  const name = basename(file);
  return watchEvents(dirname(file), false).pipe(
    filter((changed) => changed === null || changed === name),
    map(() => undefined),
  );
}
