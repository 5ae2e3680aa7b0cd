import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.ts';
import { reservePort } from '../../support/ports.ts';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A GET to 127.0.0.1:port, with basic credentials when given. */
export function get(port: number, path: string, auth?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, ...(auth === undefined ? {} : { auth }) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

export interface RunningHaproxy {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * A real HAProxy (the Debian package) serving `sections` (the lines after
 * `defaults`, with `BIND` standing for the bind address) until stopped.
 * Fails, never skips, when the haproxy binary is missing or the
 * configuration does not start.
 */
export async function startHaproxy(sections: (bind: string) => readonly string[], ready: (port: number) => Promise<boolean>): Promise<RunningHaproxy> {
  const dir = await mkdtemp(join(tmpdir(), 'annotations-haproxy-'));
  const port = await reservePort();
  const config = ['defaults', '  mode http', '  timeout connect 2s', '  timeout client 5s', '  timeout server 5s', ...sections(`127.0.0.1:${port}`), ''].join('\n');
  await writeFile(join(dir, 'haproxy.cfg'), config);
  const haproxy: ChildProcess = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  haproxy.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = async () => {
    if (haproxy.exitCode === null && haproxy.signalCode === null) {
      haproxy.kill();
      await once(haproxy, 'exit');
    }
    await rm(dir, { recursive: true, force: true });
  };
  const failed = once(haproxy, 'error').then(([error]) => {
    throw new Error(`HAProxy could not start (these specs need the haproxy binary): ${String(error)}`);
  });
  try {
    await Promise.race([
      failed,
      eventually(
        () => ready(port),
        (up) => up,
        `HAProxy serving the configuration (stderr: ${stderr})`,
      ),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}
