import { watch } from 'chokidar';
import { Observable } from 'rxjs';

/** 'ready' once a watch is set up (what changed before it must be read), then 'change' for each change seen. */
export type WatchSignal = 'ready' | 'change';

/**
 * Watches a file, or a folder and everything under it, with chokidar:
 * unlike Node's recursive fs.watch it keeps following a file replaced by a
 * rename (sed -i, editors' atomic saves), follows symlinked files and
 * folders (each real path once, so a loop ends), and watches a path that is
 * missing, or was removed, through its parent until it is back. Editors
 * write in several steps, so consumers debounce and re-read rather than
 * trusting any one event. Errors when the watch fails (say, the inotify
 * watch limit reached).
 */
export function watchPath(path: string): Observable<WatchSignal> {
  return new Observable<WatchSignal>((subscriber) => {
    const watcher = watch(path, { ignoreInitial: true, followSymlinks: true });
    watcher.on('ready', () => subscriber.next('ready'));
    watcher.on('all', () => subscriber.next('change'));
    watcher.on('error', (error: unknown) => subscriber.error(error));
    return () => {
      void watcher.close();
    };
  });
}
