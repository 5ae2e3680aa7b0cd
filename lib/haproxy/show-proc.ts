/**
 * The master CLI's `show proc` answer, as HAProxy 2.6 prints it:
 *
 *   #<PID>          <type>          <reloads>       <uptime>        <version>
 *   17293           master          3 [failed: 1]   0d00h11m08s     2.6.12-1+deb12u4
 *   # workers
 *   28739           worker          1               0d00h00m09s     2.6.12-1+deb12u4
 *   # old workers
 *   28659           worker          2               0d00h00m30s     2.6.12-1+deb12u4
 *   # programs
 *
 * The master's counter grows on every reload attempt, `failed` on every
 * attempt the new configuration did not survive; a worker's counter is how
 * many reloads it has lived through (0 for the newest).
 *
 * From 3.1 a worker that outlived a refused reload is listed under
 * "# old workers" while "# workers" stays empty (checked on 3.2.26 and
 * 3.4.7; 3.0.11 still lists it under "# workers"): with
 * `survivorListedAsOld` (lib/haproxy/capabilities.ts) the old workers that
 * lived through the fewest reloads are read as the current ones then.
 */

export interface ProcessEntry {
  readonly pid: number;
  readonly reloads: number;
}

export interface ShowProc {
  readonly masterPid: number;
  readonly reloads: number;
  readonly failed: number;
  /** Current workers: the ones serving the loaded configuration. */
  readonly workers: readonly ProcessEntry[];
  /** Workers of earlier configurations still finishing their connections. */
  readonly oldWorkers: readonly ProcessEntry[];
}

export interface ShowProcReading {
  readonly survivorListedAsOld?: boolean;
}

export function parseShowProc(text: string, reading: ShowProcReading = {}): ShowProc {
  let master: { pid: number; reloads: number; failed: number } | undefined;
  const workers: ProcessEntry[] = [];
  const oldWorkers: ProcessEntry[] = [];
  let section: 'master' | 'workers' | 'old' | 'other' = 'master';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const title = line.slice(1).trim().toLowerCase();
      if (title === 'workers') section = 'workers';
      else if (title === 'old workers') section = 'old';
      else if (title.startsWith('<pid>')) section = 'master';
      else section = 'other';
      continue;
    }
    const words = line.split(/\s+/);
    const pid = Number(words[0]);
    const reloads = Number(words[2]);
    if (!Number.isInteger(pid) || !Number.isInteger(reloads)) continue;
    if (section === 'master' && words[1] === 'master') {
      const failed = /\[failed:\s*(\d+)\]/.exec(line);
      master = { pid, reloads, failed: failed ? Number(failed[1]) : 0 };
    } else if (section === 'workers' && words[1] === 'worker') {
      workers.push({ pid, reloads });
    } else if (section === 'old' && words[1] === 'worker') {
      oldWorkers.push({ pid, reloads });
    }
  }
  if (master === undefined) {
    throw new Error(`not a "show proc" answer (no master line): ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (reading.survivorListedAsOld === true && workers.length === 0 && oldWorkers.length > 0) {
    const fewest = Math.min(...oldWorkers.map((worker) => worker.reloads));
    const survivors = oldWorkers.filter((worker) => worker.reloads === fewest);
    const older = oldWorkers.filter((worker) => worker.reloads !== fewest);
    return { masterPid: master.pid, reloads: master.reloads, failed: master.failed, workers: survivors, oldWorkers: older };
  }
  return { masterPid: master.pid, reloads: master.reloads, failed: master.failed, workers, oldWorkers };
}
