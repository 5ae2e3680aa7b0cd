import { readFileSync } from 'node:fs';
import { systemClock, type Clock } from '../clock.ts';

/** The `[ALERT]` lines of HAProxy output, those of one process when `pid` is given. */
export function alertLines(output: string, pid?: number): string {
  return (
    output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('[ALERT]') && (pid === undefined || line.includes(`(${pid})`)))
      // HAProxy pads the tag into a column; one space reads better in a message.
      .map((line) => line.replace(/^\[ALERT\]\s+/, '[ALERT] '))
      .join('\n')
  );
}

export function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Alive and not a zombie: a master this process started stays a zombie until Node reaps it. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // The state follows the parenthesised command name in /proc/<pid>/stat.
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Polls until every process has exited; false when `timeoutMs` passed first. */
export async function waitGone(pids: readonly number[], timeoutMs: number, pollMs = 50, clock: Clock = systemClock): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  while (pids.some(isAlive)) {
    if (clock.now() > deadline) return false;
    await clock.sleep(pollMs);
  }
  return true;
}
