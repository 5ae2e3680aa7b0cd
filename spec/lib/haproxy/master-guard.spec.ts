import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertNoMasterRunning, runningMaster } from '../../../lib/haproxy/master-guard.ts';
import { eventually } from '../../support/eventually.ts';

/** The guard against a second master, with real processes and a real socket standing in for HAProxy's. */
describe('master guard', () => {
  let dir: string;
  let pidFile: string;
  let socket: string;
  const children: ChildProcess[] = [];
  let server: Server | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'master-guard-'));
    pidFile = join(dir, 'haproxy.pid');
    socket = join(dir, 'master.sock');
  });

  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A long-lived process with these arguments, as a master's command line carries `-S <socket>`. */
  async function process(...args: string[]): Promise<number> {
    const child = spawn(globalThis.process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...args], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    // 'spawn' can come before the exec is visible in /proc: wait for the command line to be the new one.
    await eventually(
      () => readFile(`/proc/${child.pid}/cmdline`, 'utf8'),
      (cmdline) => cmdline.split('\0').includes(args.at(-1)!),
      'the process started',
    );
    return child.pid!;
  }

  it('lets HAProxy start where no master ran, or where one left only its pid file behind', async () => {
    expect(await runningMaster(pidFile, socket)).to.equal(undefined);
    const gone = await process('-S', socket);
    children[0]!.kill('SIGKILL');
    await once(children[0]!, 'exit');
    await writeFile(pidFile, `${gone}\n`);
    expect(await runningMaster(pidFile, socket)).to.equal(undefined);
  });

  it('lets HAProxy start when the pid file names a live process that is no master of this directory (a reused pid)', async () => {
    await writeFile(pidFile, `${await process('-S', '/elsewhere/master.sock')}\n`);
    expect(await runningMaster(pidFile, socket)).to.equal(undefined);
  });

  it('refuses while the pid file names a live master of this directory, stopped or not', async () => {
    const pid = await process('-S', socket);
    await writeFile(pidFile, `${pid}\n`);
    expect(await runningMaster(pidFile, socket)).to.equal(`HAProxy master ${pid} (${pidFile}) is still running`);
    children[0]!.kill('SIGSTOP');
    await assertNoMasterRunning(dir, pidFile, socket).then(
      () => expect.fail('a second master was allowed'),
      (error: Error) =>
        expect(error.message).to.equal(
          `not starting a second HAProxy on ${dir}: HAProxy master ${pid} (${pidFile}) is still running but does not answer on its master socket; it is left to recover`,
        ),
    );
    children[0]!.kill('SIGCONT');
  });

  it('refuses while a live process names the master socket, with no pid file and nothing listening (a master re-executing for a reload)', async () => {
    const pid = await process('-S', socket);
    expect(await runningMaster(pidFile, socket)).to.equal(`HAProxy process ${pid} (its command line names ${socket}) is still running`);
    children[0]!.kill('SIGKILL');
    await once(children[0]!, 'exit');
    expect(await runningMaster(pidFile, socket)).to.equal(undefined);
  });

  it('refuses while something accepts connections on the master socket, pid file or not', async () => {
    server = createServer((connection) => connection.destroy());
    await new Promise<void>((resolve) => server!.listen(socket, resolve));
    expect(await runningMaster(pidFile, socket)).to.equal(`a process accepts connections on ${socket}`);
  });
});
