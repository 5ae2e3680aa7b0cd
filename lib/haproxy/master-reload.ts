/**
 * A reload through the master CLI, and how it went.
 *
 * From 2.7 `reload` waits for the new worker and answers `Success=1` or
 * `Success=0`, then `--` and the startup log (src/mworker.c
 * cli_parse_reload), whose ALERT lines say why a refused one was refused; on
 * 3.1+ they come from the new worker's pid, not the master's. 2.6's `reload`
 * answers nothing: the outcome shows in `show proc` once the master has
 * re-executed itself, as a new worker (loaded) or a grown `failed` counter
 * (refused: the previous worker keeps serving), and the reason is in the
 * master's log lines, else in `haproxy -c`. Which of the two applies is the
 * binary's capability (lib/haproxy/capabilities.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import { checkConfig } from './check.ts';
import { POLL_MS, type MasterProcess } from './master-process.ts';
import { alertLines } from './processes.ts';
import { runtimeCommand } from './runtime-socket.ts';
import type { ShowProc } from './show-proc.ts';

export type ReloadOutcome = { readonly loaded: true; readonly worker: number } | { readonly loaded: false; readonly message: string };

/** `Success=0|1`, then `--` and the startup log (2.7+). */
const SYNCHRONOUS_ANSWER = /^\s*Success=([01])\s*(?:\n--\n([\s\S]*))?$/;

/** A 2.7+ master's answer to `reload`: whether the new worker loaded, and the startup log; undefined for any other answer. */
export function readReloadAnswer(answer: string): { readonly loaded: boolean; readonly log: string } | undefined {
  const match = SYNCHRONOUS_ANSWER.exec(answer);
  return match ? { loaded: match[1] === '1', log: (match[2] ?? '').trim() } : undefined;
}

/**
 * Reloads the master on the files as they are now. Resolves with the new
 * worker or HAProxy's message; rejects when the reload could not be asked
 * for, or when the master did not report it in time (whether it loaded is
 * unknown then).
 */
export async function reloadMaster(master: MasterProcess): Promise<ReloadOutcome> {
  const before = await master.showProc();
  const logOffset = await stat(master.logFile).then(
    (stats) => stats.size,
    () => 0,
  );
  const synchronous = (await master.capabilities()).synchronousReload;
  let answer = '';
  try {
    answer = await runtimeCommand(master.masterSocket, 'reload', { timeoutMs: synchronous ? master.timeoutMs : 5_000 });
  } catch (error) {
    // The master re-executing can cut the connection that asked for it: the
    // reload is under way, and `show proc` tells how it went. Never resent:
    // a second reload would be a second (needless) one.
    if ((error as { code?: unknown }).code !== 'ECONNRESET') throw error;
  }
  const reported = synchronous ? readReloadAnswer(answer) : undefined;
  if (reported?.loaded === false) {
    return { loaded: false, message: alertLines(reported.log) || reported.log || 'no message: the master answered Success=0' };
  }
  return settled(master, before, logOffset, answer);
}

/** Waits until `show proc` shows the reload done: a new worker, or a grown `failed` counter. */
async function settled(master: MasterProcess, before: ShowProc, logOffset: number, answer: string): Promise<ReloadOutcome> {
  const oldWorkers = new Set(before.workers.map((worker) => worker.pid));
  const deadline = master.clock.now() + master.timeoutMs;
  for (;;) {
    const info = await master.tryShowProc();
    if (info !== undefined && info.reloads > before.reloads) {
      if (info.failed > before.failed) return { loaded: false, message: await failure(master, before.masterPid, logOffset) };
      const worker = info.workers.find((candidate) => !oldWorkers.has(candidate.pid));
      if (worker !== undefined) return { loaded: true, worker: worker.pid };
    }
    if (master.clock.now() > deadline) {
      const said = answer.trim() === '' ? '' : ` (reload answered: ${answer.trim()})`;
      throw new Error(`HAProxy did not complete the reload within ${master.timeoutMs} ms${said}`);
    }
    await master.clock.sleep(POLL_MS);
  }
}

/** HAProxy's own words on a failed reload: the master's ALERT lines, else those of `haproxy -c`. */
async function failure(master: MasterProcess, masterPid: number, logOffset: number): Promise<string> {
  const written = await readFile(master.logFile).catch(() => Buffer.alloc(0));
  const fromLog = alertLines(written.subarray(logOffset).toString('utf8'), masterPid);
  if (fromLog !== '') return fromLog;
  // An HAProxy started elsewhere (with -D, say) logs nowhere we can read.
  const check = await checkConfig(master.configFile, master.binary).catch(() => undefined);
  return (check && alertLines(check.output)) || 'no message (see the HAProxy log); show proc counted a failed reload';
}
