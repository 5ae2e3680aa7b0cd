/**
 * The worker's stats socket as DPAPI uses it (§6): every command is sent as
 * `set severity-output number;<cmd>`, an answer starting `[0]:`..`[3]:` is an
 * error (`[4]:` warning, `[5]:` notice, `[6]:` info are successes), and the
 * error text reads `<socket> [N] <haproxy message> [<cmd>]`.
 */
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';
import { ApiError } from './http-kit.ts';
import type { ApiRequest, ApiResponse } from './http-kit.ts';

/** A command HAProxy answered with an error severity. */
export class RuntimeCommandError extends Error {
  readonly severity: number;
  /** HAProxy's own words, without the severity tag. */
  readonly reason: string;

  constructor(socket: string, command: string, severity: number, reason: string) {
    super(`${socket} [${severity}] ${reason} [${command}]`);
    this.name = 'RuntimeCommandError';
    this.severity = severity;
    this.reason = reason;
  }
}

export class RuntimeSocket {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /**
   * The answer without the leading empty line of `set severity-output` and
   * without a success severity tag; throws RuntimeCommandError on an error
   * severity and a 500 ApiError when the socket cannot be used at all.
   */
  async execute(command: string, payload?: string): Promise<string> {
    let answer: string;
    try {
      answer = await runtimeCommand(this.path, `set severity-output number;${command}`, payload === undefined ? { timeoutMs: 10_000 } : { timeoutMs: 10_000, payload });
    } catch (error) {
      throw new ApiError(500, `${this.path}: ${(error as Error).message}`);
    }
    const text = answer.replace(/^\n+/, '').replace(/\n+$/, '');
    const tagged = /^\[(\d)\]: ([^]*)$/.exec(text);
    if (tagged === null) return text;
    const severity = Number(tagged[1]);
    const reason = tagged[2]!.trim();
    if (severity <= 3) throw new RuntimeCommandError(this.path, command, severity, reason);
    return reason;
  }
}

/**
 * The status DPAPI answers for a runtime error (§6, §8): 404 for HAProxy's
 * not-found answers, 409 for duplicates, 500 for anything else.
 */
export function runtimeFailure(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (!(error instanceof RuntimeCommandError)) return new ApiError(500, (error as Error).message);
  const reason = error.reason;
  if (/No such backend|Can't find backend|No such server|Unknown map identifier|not found/i.test(reason)) {
    return new ApiError(404, error.message);
  }
  if (/Already exists|already exists/.test(reason)) return new ApiError(409, error.message);
  return new ApiError(500, error.message);
}

/** A handler whose errors are answered as `answer` maps them (runtimeFailure for most runtime endpoints). */
export function answeringErrors(answer: (error: unknown) => ApiError, handler: (request: ApiRequest) => Promise<ApiResponse>): (request: ApiRequest) => Promise<ApiResponse> {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      throw answer(error);
    }
  };
}
