/**
 * One command on an HAProxy CLI socket (the worker's `stats socket` or the
 * master socket of `-S`), in non-interactive mode: connect, send, read the
 * answer until HAProxy closes the connection.
 */
import { createConnection } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface RuntimeCommandOptions {
  /** Whole exchange, connection retries included. Default 10 s. */
  readonly timeoutMs?: number;
  /**
   * Sent after the command with the 2.4+ payload syntax (`<command> <<`,
   * the payload lines, an empty line). HAProxy ends the payload at the first
   * empty line, so it must not contain one.
   */
  readonly payload?: string;
  /**
   * How long to keep retrying a refused or missing socket. Default 2 s: the
   * master socket disappears for a moment while the master re-executes
   * itself on a reload.
   */
  readonly retryForMs?: number;
}

/** Connection errors that mean "nobody listens right now", which a reload causes briefly. */
const RETRIED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOENT']);
const RETRY_INTERVAL_MS = 50;

/** Thrown when the socket could not be reached at all (as opposed to a command that failed). */
export class SocketUnavailableError extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.name = 'SocketUnavailableError';
    this.code = code;
  }
}

export async function runtimeCommand(socketPath: string, command: string, options: RuntimeCommandOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  const retryUntil = Date.now() + Math.min(options.retryForMs ?? 2_000, timeoutMs);
  const request = formatRequest(command, options.payload);
  for (;;) {
    try {
      return await exchange(socketPath, command, request, deadline - Date.now(), timeoutMs);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !RETRIED_CODES.has(code)) throw error;
      if (Date.now() + RETRY_INTERVAL_MS >= retryUntil) {
        throw new SocketUnavailableError(`HAProxy socket ${socketPath} is not available (${code}) for "${command}"`, code);
      }
      await delay(RETRY_INTERVAL_MS);
    }
  }
}

function formatRequest(command: string, payload: string | undefined): string {
  // A line break inside the command would make HAProxy run a second command.
  if (/[\r\n]/.test(command)) throw new Error(`HAProxy command must be a single line: ${JSON.stringify(command)}`);
  if (payload === undefined) return `${command}\n`;
  const body = payload.replace(/\n+$/, '');
  if (body === '' || /\n[ \t\r]*\n/.test(body) || /^[ \t\r]*\n/.test(body)) {
    throw new Error(`payload for "${command}" must be non-empty and free of empty lines (an empty line ends it)`);
  }
  return `${command} <<\n${body}\n\n`;
}

/** One connection's command and answer, given up after `remainingMs` (what is left of the call's `timeoutMs`, which the error names). */
function exchange(socketPath: string, command: string, request: string, remainingMs: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(
      () => {
        finish(new Error(`HAProxy socket ${socketPath} did not answer "${command}" within ${timeoutMs} ms`));
      },
      Math.max(remainingMs, 0),
    );
    socket.on('connect', () => {
      // Half-closing tells HAProxy there is nothing more to read: the master CLI
      // keeps the connection open after its answer until the client's side ends.
      socket.end(request);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(undefined));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after a complete answer is still an answer; a reset before any
      // byte (the master re-executing on reload) counts as "not listening".
      if (error.code === 'ECONNRESET' && chunks.length > 0) return finish(undefined);
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
        return finish(
          Object.assign(new Error(`HAProxy socket ${socketPath} reset the connection for "${command}"`), {
            code: 'ECONNRESET',
          }),
        );
      }
      finish(error);
    });
  });
}
