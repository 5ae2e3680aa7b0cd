import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenAnywhere, reservePort } from './ports.ts';

/** The spec helper every spec takes its ports from. */
describe('spec ports', () => {
  const locks = join(tmpdir(), 'haproxy-template-ic-ports');

  it('reserves distinct ports below the ephemeral range, each under a lock file naming this process', async () => {
    const ports = await Promise.all(Array.from({ length: 5 }, () => reservePort()));
    expect(new Set(ports).size).to.equal(5);
    for (const port of ports) {
      expect(port).to.be.within(20_000, 29_999);
      expect(await readFile(join(locks, String(port)), 'utf8')).to.equal(String(process.pid));
    }
  });

  /** A reserved port with a few after it before the range ends. */
  const reserveAwayFromTheEnd = async () => {
    let port = await reservePort();
    while (port > 29_990) port = await reservePort();
    return port;
  };

  it('skips a port another live process holds, and takes over the lock of one that died', async () => {
    const probe = await reserveAwayFromTheEnd();
    // The ports after it: one held by a live process, one by a process that is gone.
    const [held, stale] = [probe + 1, probe + 2];
    const sleeper = spawn('sleep', ['30']);
    const dead = spawn('true');
    await once(dead, 'exit');
    try {
      await mkdir(locks, { recursive: true });
      await writeFile(join(locks, String(held)), String(sleeper.pid));
      await writeFile(join(locks, String(stale)), String(dead.pid));
      const next = await reservePort();
      expect(next).to.equal(stale);
      expect(await readFile(join(locks, String(held)), 'utf8')).to.equal(String(sleeper.pid));
    } finally {
      sleeper.kill();
    }
  });

  it('skips a reserved port something already listens on', async () => {
    const probe = await reserveAwayFromTheEnd();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(probe + 1, '127.0.0.1', resolve));
    try {
      expect(await reservePort()).to.be.above(probe + 1);
    } finally {
      squatter.close();
    }
  });

  it('lets a server of the spec listen anywhere and says where', async () => {
    const server = createServer();
    const port = await listenAnywhere(server);
    expect((server.address() as { port: number }).port).to.equal(port);
    server.close();
  });
});
