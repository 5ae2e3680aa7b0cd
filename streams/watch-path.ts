import { statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { filter, map, Observable } from 'rxjs';

/** The watched directory's identity: a directory removed and made again is another one. */
function identity(path: string): string | undefined {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}

function watchEvents(path: string, recursive: boolean): Observable<string | null> {
  return new Observable<string | null>((subscriber) => {
    const watched = identity(path);
    const watcher = watch(path, { recursive }, (_event, filename) => {
      // Node's watch goes silent, without an error, once the directory itself is removed:
      // that is an error here, so the consumer can watch again when it is back.
      if (identity(path) !== watched) subscriber.error(new Error(`${path} was removed or replaced`));
      else subscriber.next(filename);
    });
    watcher.on('error', (error) => subscriber.error(error));
    return () => watcher.close();
  });
}

/**
 * Emits whenever something under a directory changes. Editors write files
 * in several steps, so consumers debounce and re-read rather than trusting
 * any one event. A watch that fails (the directory removed or replaced) errors.
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
