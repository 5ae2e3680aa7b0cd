import { watch } from 'chokidar';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Observable } from 'rxjs';

/**
 * 'ready' once a watch is set up (what changed before it must be read), then
 * for each change seen the file written or gone, or 'change' when it was not
 * a file's (a folder added or removed, the watched folder replaced).
 */
export type WatchSignal = 'ready' | 'change' | FileChange;

export interface FileChange {
  readonly path: string;
  readonly gone: boolean;
}

/** A folder's identity, 'file' for anything else, undefined for nothing: the same path may name another folder after a rename. */
const identity = (path: string): Promise<string | undefined> =>
  stat(path).then(
    (s) => (s.isDirectory() ? `${s.dev}:${s.ino}` : 'file'),
    () => undefined,
  );

/**
 * Watches a file, or a folder and everything under it, with chokidar:
 * unlike Node's recursive fs.watch it keeps following a file replaced by a
 * rename (sed -i, editors' atomic saves), follows symlinked files and
 * folders (each real path once, so a loop ends), and watches a path that is
 * missing, or was removed, through its parent until it is back. Editors
 * write in several steps, so consumers debounce and re-read rather than
 * trusting any one event. Errors when the watch fails (say, the inotify
 * watch limit reached).
 *
 * A watched folder moved away and another put in its place at once
 * (`mv folder folder.bak && cp -r folder.bak folder`) is a case chokidar 6
 * gets wrong now and then: when the new folder is already there as it looks,
 * it keeps watching the old one (now folder.bak) and misses everything
 * written into the new one. So when the watched folder itself is renamed
 * (inotify's IN_MOVE_SELF, which fs.watch reports as a rename of the folder's
 * own name), or a folder appears where none was, and the path no longer names
 * the folder watched (or names nothing), the watch is set up anew on what is
 * there now, and says 'ready' again so the folder is read. A watched file is
 * left to chokidar, which follows a file replaced by a rename.
 */
export function watchPath(path: string): Observable<WatchSignal> {
  return new Observable<WatchSignal>((subscriber) => {
    let closed = false;
    let watcher: ReturnType<typeof watch> | undefined;
    const start = async (): Promise<void> => {
      const watched = await identity(path);
      if (closed) return;
      // atomic: false, since chokidar would otherwise hold every removal 100 ms (to tell an editor's
      // save from a deletion: chokidar policy.js pendingUnlinks), and the folder is re-read after any event.
      const current = watch(path, { ignoreInitial: true, followSymlinks: true, atomic: false });
      watcher = current;
      current.on('ready', () => subscriber.next('ready'));
      current.on('all', (event, changed) => subscriber.next(event === 'add' || event === 'change' || event === 'unlink' ? { path: changed, gone: event === 'unlink' } : 'change'));
      current.on('error', (error: unknown) => subscriber.error(error));
      const restartIfReplaced = async (): Promise<void> => {
        const now = await identity(path);
        // A folder gone is watched anew too: chokidar may follow its return only until the next replacement.
        if (closed || watcher !== current || now === 'file' || (now !== undefined && now === watched)) return;
        subscriber.next('change');
        watcher = undefined;
        void current.close();
        await start();
      };
      current.on('raw', (_event: string, name: string | null) => {
        if (name === basename(path)) restartIfReplaced().catch((error: unknown) => subscriber.error(error));
      });
    };
    start().catch((error: unknown) => subscriber.error(error));
    return () => {
      closed = true;
      void watcher?.close();
    };
  });
}
