/**
 * `haproxy -c` as DPAPI runs it on a candidate configuration (§3), and the
 * error message DPAPI builds from its stderr.
 */
import { execFile } from 'node:child_process';

/**
 * Runs `haproxy -W -f <file> -c` (master-worker mode adds `-W`, §3) and
 * returns undefined when it exits 0, else DPAPI's message without the
 * `validation error: ` prefix: `exit status N: <details>`, the details
 * naming `transaction` when the check runs in one.
 */
export function checkCandidate(binary: string, file: string, transaction?: string): Promise<string | undefined> {
  // DPAPI removes these from the environment of the check (client-native configuration/check.go).
  const env = { ...process.env };
  for (const name of ['HAPROXY_STARTUPLOGS_FD', 'HAPROXY_MWORKER_WAIT_ONLY', 'HAPROXY_PROCESSES']) delete env[name];
  return new Promise((resolve, reject) => {
    execFile(binary, ['-W', '-f', file, '-c'], { env, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'number') {
        // Not an exit status: the binary is missing or was killed; never a pass.
        return reject(new Error(`could not run ${binary} -c: ${error.message}`));
      }
      resolve(`exit status ${code}: ${parseCheckError(stderr, transaction)}`);
    });
  });
}

/**
 * DPAPI's parseHAProxyCheckError: only `[ALERT]` lines count; each is split
 * on " : "; when the second field starts with `parsing [` the line number is
 * extracted (`line=N msg="..."`), else the fields from the second on are
 * joined with spaces (`msg="..."`). HAProxy 2.6 puts `config` in the second
 * field, so 2.6 always takes the `msg=` branch (§3). The two filters are
 * case-sensitive and miss 2.6's capitalised summary lines, which therefore
 * appear in the message, as with the real DPAPI. A check inside a
 * transaction (every raw POST but only_validate) starts with
 * `err transactionId=<id> ` on a line of its own (client-native v6.2
 * configuration/check.go; seen from dataplaneapi v3.2.15 and v3.4.2).
 */
export function parseCheckError(stderr: string, transaction?: string): string {
  const details: string[] = transaction === undefined || transaction === '' ? [] : [`err transactionId=${transaction} `];
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('[ALERT]')) continue;
    if (line.endsWith('fatal errors found in configuration.')) continue;
    if (line.includes('error(s) found in configuration file : ')) continue;
    const parts = line.split(' : ');
    if (parts.length > 2 && parts[1]!.trim().startsWith('parsing [')) {
      const fileParts = parts[1]!.trim().split(':');
      const message = parts.slice(2).join(' ').trim();
      if (fileParts.length > 1) {
        const number = fileParts[1]!.replace(/\]$/, '');
        details.push(/^-?\d+$/.test(number) ? `line=${Number(number)} msg="${message}"` : `msg="${message}"`);
      }
    } else if (parts.length > 1) {
      details.push(`msg="${parts.slice(1).join(' ').trim()}"`);
    }
  }
  return details.join('\n');
}
