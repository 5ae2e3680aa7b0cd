import { execFile } from 'node:child_process';

export interface CheckResult {
  readonly valid: boolean;
  /** HAProxy's own messages (ALERT and WARNING lines), for the user. */
  readonly output: string;
}

/** The haproxy binary: HAPROXY_BIN when set, else `haproxy` from PATH. */
export function haproxyBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env['HAPROXY_BIN'] || 'haproxy';
}

/**
 * Runs `haproxy -c` on a configuration file. Exit 0 is valid, 2 is valid but
 * without a listener (still a configuration HAProxy would load), anything
 * else is invalid. A missing binary is an error, never a pass.
 */
export function checkConfig(configFile: string, binary = haproxyBinary()): Promise<CheckResult> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-c', '-f', configFile], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (!error) return resolve({ valid: true, output });
      // execFile puts the exit status, or the spawn error's name, in `code`.
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOENT') {
        return reject(
          new Error(`${binary} not found: install Debian's haproxy package (apt-get install haproxy) or set HAPROXY_BIN`),
        );
      }
      resolve({ valid: code === 2, output });
    });
  });
}
