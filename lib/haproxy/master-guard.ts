import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { isAlive } from './processes.ts';

/**
 * Starting HAProxy must never leave two masters on one work directory: both
 * would bind the same ports (HAProxy sets SO_REUSEPORT) and serve different
 * configurations side by side. A master that is alive but slow to answer (a
 * reload re-executing it on a loaded machine, a process stopped) looks like
 * no master to a probe of its socket, so before spawning, the pid file's
 * process and the master socket are checked directly.
 */

/** The pid in a pid file, or undefined when there is none. */
export async function pidFromFile(pidFile: string): Promise<number | undefined> {
  const text = await readFile(pidFile, 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * /proc is read synchronously: its files are made by the kernel on the spot,
 * never wait for a disk, and a read of each through the thread pool cost a
 * scan of about 90 processes 50 to 300 ms on a loaded machine (1 ms this way),
 * all of it added to the restart of a dead HAProxy.
 */
function cmdline(pid: number | string): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
}

/** True when `pid` runs with `masterSocket` among its arguments (HAProxy keeps them when it re-executes for a reload). */
function servesSocket(pid: number, masterSocket: string): boolean {
  try {
    return cmdline(pid).split('\0').includes(masterSocket);
  } catch (error) {
    // Gone meanwhile: not a master. Unreadable: assume the worst.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** True when something accepts connections on the socket (even a stopped process: the kernel accepts for it). */
function listening(socket: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const connection = createConnection(socket);
    const done = (answer: boolean) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    connection.once('connect', () => done(true));
    connection.once('error', () => done(false));
  });
}

/**
 * A live process whose command line names `masterSocket`: a master and its
 * workers. A reload re-executes the master, which unlinks and writes its pid
 * file again (src/haproxy.c, the pid file opened with O_TRUNC after an
 * unlink) and binds its socket again, so for a moment neither the pid file
 * nor the socket shows it; its process is there all along.
 */
function processNaming(masterSocket: string): number | undefined {
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    // No /proc: the pid file and the socket decide.
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let line = '';
    try {
      line = cmdline(entry);
    } catch {
      // Gone meanwhile.
    }
    if (line.split('\0').includes(masterSocket) && isAlive(Number(entry))) return Number(entry);
  }
  return undefined;
}

/** Why HAProxy must not be started on this work directory now, or undefined when no master runs there. */
export async function runningMaster(pidFile: string, masterSocket: string): Promise<string | undefined> {
  const pid = await pidFromFile(pidFile);
  if (pid !== undefined && isAlive(pid) && servesSocket(pid, masterSocket)) {
    return `HAProxy master ${pid} (${pidFile}) is still running`;
  }
  if (await listening(masterSocket, 1_000)) return `a process accepts connections on ${masterSocket}`;
  const named = processNaming(masterSocket);
  if (named !== undefined) return `HAProxy process ${named} (its command line names ${masterSocket}) is still running`;
  return undefined;
}

/** Throws, saying why, when a master already runs on this work directory. */
export async function assertNoMasterRunning(workDir: string, pidFile: string, masterSocket: string): Promise<void> {
  const reason = await runningMaster(pidFile, masterSocket);
  if (reason !== undefined) {
    throw new Error(`not starting a second HAProxy on ${workDir}: ${reason} but does not answer on its master socket; it is left to recover`);
  }
}
