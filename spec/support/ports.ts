import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../../lib/haproxy/processes.ts';

/**
 * Ports for specs, without the race of "find a free port, close it, hope
 * nobody takes it before the real listener does".
 *
 * A server of the spec's own listens on port 0 and reads its port back
 * (`listenAnywhere`): nothing to race. A port something else must be told
 * before it binds (HAProxy's frontends, a controller run as a process) is
 * reserved (`reservePort`): taken from a range below the kernel's
 * ephemeral ports (net.ipv4.ip_local_port_range starts at 32768), so no
 * port-0 listener and no outgoing connection on the machine is ever given
 * it meanwhile; held by a lock file per port, so spec runs of other
 * processes at the same time (other worktrees' suites) leave it alone; and
 * bindable on every host asked for when handed out. Reservations last
 * until the process exits; the lock of a process that died is taken over.
 */

const FIRST = 20_000;
const COUNT = 10_000;
const LOCKS = join(tmpdir(), 'haproxy-template-ic-ports');

const held = new Set<number>();
let next = FIRST + Math.floor(Math.random() * COUNT);

process.once('exit', () => {
  for (const port of held) rmSync(lockFile(port), { force: true });
});

function lockFile(port: number): string {
  return join(LOCKS, String(port));
}

/** Takes the port's lock file, or that of a process no longer alive; false while a live process holds it. */
function lock(port: number): boolean {
  mkdirSync(LOCKS, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile(port), 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockFile(port), { encoding: 'utf8', flag: 'r' }) || '0');
      // Empty: its owner is between creating and writing it.
      if (owner === 0 || isAlive(owner)) return false;
      rmSync(lockFile(port), { force: true });
    }
  }
  return false;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function bindable(port: number, hosts: readonly string[]): Promise<boolean> {
  for (const host of hosts) {
    const probe = createServer();
    try {
      await listen(probe, port, host);
    } catch {
      return false;
    } finally {
      await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
    }
  }
  return true;
}

/** A port reserved for this process and free on every one of `hosts` (127.0.0.1 when none is named). */
export async function reservePort(...hosts: string[]): Promise<number> {
  const on = hosts.length > 0 ? hosts : ['127.0.0.1'];
  for (let tried = 0; tried < COUNT; tried++) {
    const port = next;
    next = next + 1 >= FIRST + COUNT ? FIRST : next + 1;
    if (held.has(port) || !lock(port)) continue;
    held.add(port);
    if (await bindable(port, on)) return port;
  }
  throw new Error(`no port left to reserve in ${FIRST}-${FIRST + COUNT - 1}`);
}

/** Listens on a port the kernel picks and says which. */
export async function listenAnywhere(server: Server, host = '127.0.0.1'): Promise<number> {
  await listen(server, 0, host);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a TCP port');
  return address.port;
}
