/**
 * What the HAProxy binary in use can do, read from what it reports about
 * itself (`haproxy -vv`'s version line). Every behaviour that
 * differs between the supported versions (2.6 to 3.4) is decided here, once,
 * and the rest of the code asks for the capability, never for a version.
 */
import { execFile } from 'node:child_process';
import { haproxyBinary } from './check.ts';

export interface HaproxyVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** As the binary prints it, say `3.2.26-1`. */
  readonly text: string;
}

export interface HaproxyCapabilities {
  readonly version: HaproxyVersion;
  /**
   * The master CLI's `reload` waits for the new worker and answers
   * `Success=1` or `Success=0`, then `--` and the startup log (2.7+,
   * src/mworker.c cli_parse_reload); before, it answers nothing and the
   * outcome shows only in `show proc`.
   */
  readonly synchronousReload: boolean;
  /**
   * `add server` takes the `enabled` keyword. From 3.0 it is refused ("'enabled'
   * option is not accepted for dynamic server": its srv_kws entry in
   * src/server.c has dynamic_ok 0), and DPAPI stops sending it
   * (handlers/runtime_server.go SerializeRuntimeAddServer, v3.0.0+ checked
   * against the HAProxy version). A dynamic server starts in maintenance on
   * every version; `set server ... state ready` makes it ready.
   */
  readonly dynamicServerEnabledKeyword: boolean;
  /**
   * After a refused reload `show proc` lists the worker that keeps serving
   * under "old workers" (3.1+: the master forks before the worker parses the
   * new configuration), not under "workers" as 2.6 and 3.0 do.
   */
  readonly survivorListedAsOld: boolean;
}

const VERSION = /HAProxy version (\d+)\.(\d+)(?:\.(\d+))?(\S*)/;

function atLeast(version: HaproxyVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** Reads `haproxy -vv`'s output. */
export function parseCapabilities(output: string): HaproxyCapabilities {
  const match = VERSION.exec(output);
  if (!match) throw new Error(`not a "haproxy -vv" answer (no version line): ${JSON.stringify(output.slice(0, 200))}`);
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  const version = { major, minor, patch, text: `${major}.${minor}${match[3] === undefined ? '' : `.${patch}`}${match[4] ?? ''}` };
  return {
    version,
    synchronousReload: atLeast(version, 2, 7),
    dynamicServerEnabledKeyword: !atLeast(version, 3, 0),
    survivorListedAsOld: atLeast(version, 3, 1),
  };
}

/** The capabilities of `binary`, from its `haproxy -vv`. */
export function readCapabilities(binary: string = haproxyBinary()): Promise<HaproxyCapabilities> {
  return new Promise<HaproxyCapabilities>((resolve, reject) => {
    execFile(binary, ['-vv'], { timeout: 10_000 }, (error, stdout) => {
      if (error) return reject(new Error(`${binary} -vv failed: ${error.message}`));
      try {
        resolve(parseCapabilities(stdout));
      } catch (parseError) {
        reject(parseError as Error);
      }
    });
  });
}
