/**
 * The real dataplaneapi in front of HAProxy 2.6, as the chart's image pairs
 * them (haproxytech/haproxy-debian 2.6 bundles a 3.x dataplaneapi): below
 * HAProxy 2.7 dataplaneapi reloads with its `reload_cmd`, a signal to the
 * master, and takes the command's exit status for the reload's outcome
 * (haproxy/reload_agent.go reloadHAProxy). What that means for a client,
 * pinned here because the emulator (which waits for the master's `show proc`)
 * does not show it: a reload HAProxy refuses is reported succeeded, and
 * force_reload answers 201 for it.
 */
import { expect } from 'chai';
import { createServer } from 'node:net';
import { readFile } from 'node:fs/promises';
import { eventually } from '../support/eventually.ts';
import { listenAnywhere } from '../support/ports.ts';
import { haproxyOf, startRealDataplane, type RealDataplane } from '../support/real-dataplaneapi.ts';
import { currentVersion, postRaw, waitReload } from '../support-contract/emulator-kit.ts';

describe('the real dataplaneapi 3.4 in front of HAProxy 2.6 (reload_cmd)', function () {
  this.timeout(60_000);
  let real: RealDataplane;
  const holder = createServer((socket) => socket.destroy());
  let taken = 0;

  before(async () => {
    real = await startRealDataplane({ release: '3.4', haproxy: await haproxyOf('2.6') });
    taken = await listenAnywhere(holder);
  });

  after(async () => {
    await real?.stop();
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  /** The running configuration with a listener on a port another process holds: valid for `haproxy -c`, refused at reload. */
  const clashing = async (): Promise<string> => `${await readFile(real.configFile, 'utf8')}\nfrontend clash\n  bind 127.0.0.1:${taken}\n`;

  it('reloads with its reload_cmd', () => {
    expect(real.name).to.match(/\+ HAProxy 2\.6\.\S+ \(reload_cmd\)$/);
  });

  it('reports a reload HAProxy refuses as succeeded; only the master counts it as failed', async () => {
    const before = await real.processInfo();
    const reply = await postRaw(real, await clashing(), { version: String(await currentVersion(real)) });
    expect(reply.status, reply.text).to.equal(202);
    const reload = await waitReload(real, reply.headers.get('reload-id')!);
    expect(reload.status).to.equal('succeeded');
    const after = await eventually(
      () => real.processInfo(),
      (info) => info.failed > before.failed,
      'the master to count the refused reload',
    );
    expect(after.workers.map((worker) => worker.pid)).to.deep.equal(before.workers.map((worker) => worker.pid));
  });

  it('answers force_reload of a configuration HAProxy refuses with 201, as if it had loaded', async () => {
    const before = await real.processInfo();
    const reply = await postRaw(real, await clashing(), { version: String(await currentVersion(real)), force_reload: 'true' });
    expect(reply.status, reply.text).to.equal(201);
    await eventually(
      () => real.processInfo(),
      (info) => info.failed > before.failed,
      'the master to count the refused reload',
    );
  });
});
