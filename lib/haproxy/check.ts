import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { findGuardedDirectives, type GuardFinding } from './directive-guard.ts';
import type { GuardedDirective } from '../config/guarded-directives.ts';

export interface CheckResult {
  readonly valid: boolean;
  /** HAProxy's own messages (ALERT and WARNING lines), for the user; the guard's refusals written as ALERT lines too. */
  readonly output: string;
  /**
   * Set when no judgement was made: HAProxy was killed or could not run,
   * or ran short of memory or file descriptors. The configuration may be
   * fine; it is worth checking again later.
   */
  readonly unavailable?: string;
}

export interface CheckOptions {
  /** Guarded directives the configuration may use (see lib/config/guarded-directives.ts); none by default. */
  readonly allowDirectives?: readonly GuardedDirective[];
  /** The local peer name to check as (`-L`): a peers section none of whose peers is HAProxy itself is dropped unchecked. */
  readonly localPeer?: string;
  /** The file's text, when the caller has just written it: the guard reads it instead of the file (a second copy of a large configuration). */
  readonly text?: string;
}

/** The haproxy binary: HAPROXY_BIN when set, else `haproxy` from PATH. */
export function haproxyBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env['HAPROXY_BIN'] || 'haproxy';
}

/**
 * The binary's path: HAProxy runs with an empty environment, so it is
 * looked up in this process's PATH, never in the child's.
 */
async function locate(binary: string): Promise<string | undefined> {
  const candidates = binary.includes('/')
    ? [binary]
    : (process.env['PATH'] ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, binary));
  for (const candidate of candidates) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/** An `httpclient.*` keyword at the start of a line: the configuration sets up HAProxy's httpclient itself. */
const HTTPCLIENT_KEYWORD = /^[ \t]*httpclient\./m;

/**
 * A configuration as `haproxy -c` is given it (by the validator and the
 * webhook): with a global section after its last line (so HAProxy's line
 * numbers still point into the rendered file) that spares each run loading
 * the system's CA store for HAProxy's httpclient, half of a run's time for
 * a small configuration. Unless the configuration sets up the httpclient itself,
 * that store never decides a verdict: HAProxy disables the httpclient's
 * TLS, silently, when it cannot load it, and fails only when an
 * `httpclient.ssl.*` keyword was given (haproxy/haproxy
 * src/http_client.c, httpclient_create_proxy: `hard_error_ssl`). A
 * configuration with an `httpclient.*` keyword is checked as written.
 */
export function configurationToCheck(config: string): string {
  if (HTTPCLIENT_KEYWORD.test(config)) return config;
  return `${config}${config === '' || config.endsWith('\n') ? '' : '\n'}global\n  httpclient.ssl.verify none\n`;
}

/** The directives the guard refuses, written the way HAProxy writes its alerts so one reader serves both. */
export function guardAlerts(configFile: string, refused: readonly GuardFinding[]): string {
  return refused
    .map(
      (finding) =>
        `[ALERT]    (guard) : config : parsing [${configFile}:${finding.line}] : ${finding.directive} ${finding.reason}: ${JSON.stringify(finding.text)}; ${
          finding.always ? 'never allowed' : 'allowDirectives does not allow it'
        }`,
    )
    .join('\n');
}

/** The guard's findings on a configuration that `allowDirectives` does not cover. */
export function refusedDirectives(config: string, allowDirectives: readonly GuardedDirective[] = []): GuardFinding[] {
  const allowed = new Set(allowDirectives);
  return findGuardedDirectives(config).filter((finding) => finding.always || !allowed.has(finding.directive));
}

/** strerror texts of a machine short of something: said without a place, they are about HAProxy, not the configuration. */
const SHORTAGE = /Cannot allocate memory|Not enough memory|out of memory|Too many open files|No space left on device|Disk quota exceeded|Resource temporarily unavailable/i;

function shortage(output: string): string | undefined {
  return output.split('\n').find((line) => line.includes('[ALERT]') && !/\[[^\]\s]+:\d+\]/.test(line) && SHORTAGE.test(line));
}

/**
 * Runs `haproxy -c` on a configuration file, behind the directive guard:
 * a configuration with a directive the guard refuses (`lua-load`, a file
 * outside the base directory, a keyword from an environment variable...)
 * never reaches HAProxy, since `haproxy -c` itself runs Lua and reads files.
 * HAProxy runs with an empty environment, so no variable of this process
 * (credentials, tokens) can be expanded into the configuration or quoted in
 * an error. Exit 0 is valid, 2 is valid but without a listener (still a
 * configuration HAProxy would load), 1 is invalid; a signal, another status
 * or a machine short of memory or descriptors is no judgement at all. A
 * missing binary is an error, never a pass.
 */
export async function checkConfig(configFile: string, binary = haproxyBinary(), options: CheckOptions = {}): Promise<CheckResult> {
  const refused = refusedDirectives(options.text ?? (await readFile(configFile, 'utf8')), options.allowDirectives);
  if (refused.length > 0) return { valid: false, output: guardAlerts(configFile, refused) };
  const path = await locate(binary);
  if (path === undefined) {
    throw Object.assign(new Error(`${binary} not found: install Debian's haproxy package (apt-get install haproxy) or set HAPROXY_BIN`), { code: 'ENOENT' });
  }
  return new Promise((resolve, reject) => {
    execFile(path, ['-c', ...(options.localPeer === undefined ? [] : ['-L', options.localPeer]), '-f', configFile], { env: {}, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (!error) return resolve({ valid: true, output });
      // execFile puts the exit status, or the spawn error's name, in `code`, and a signal in `signal`.
      const { code, signal } = error as { code?: unknown; signal?: unknown };
      if (typeof code !== 'number') {
        if (signal) return resolve({ valid: false, output, unavailable: `haproxy -c was killed by ${String(signal)}` });
        return reject(error);
      }
      if (code === 2) return resolve({ valid: true, output });
      const short = shortage(output);
      if (code !== 1 || short !== undefined) return resolve({ valid: false, output, unavailable: short?.replace(/^.*?\[ALERT\][^:]*:\s*/, '') ?? `haproxy -c exited with status ${code}` });
      resolve({ valid: false, output });
    });
  });
}
