/**
 * The real dataplaneapi in front of HAProxy 2.6, as the chart's image pairs
 * them (haproxytech/haproxy-debian 2.6 bundles a 3.x dataplaneapi): below
 * HAProxy 2.7 dataplaneapi reloads with its `reload_cmd`, a signal to the
 * master, and takes the command's exit status for the reload's outcome
 * (haproxy/reload_agent.go reloadHAProxy). What that means for a client,
 * pinned here because the emulator (which waits for the master's `show proc`)
 * does not show it: a reload HAProxy refuses is reported succeeded, and
 * force_reload answers 201 for it. And with `master_runtime` set, as the
 * chart sets it, dataplaneapi sends runtime commands through the 2.6 master,
 * where reading a backend's servers fails; through the stats socket it works.
 */
import { expect } from 'chai';
import { createServer } from 'node:net';
import { readFile } from 'node:fs/promises';
import { eventually } from '../support/eventually.ts';
import { listenAnywhere, reservePort } from '../support/ports.ts';
import { haproxyOf, startRealDataplane, type RealDataplane } from '../support/real-dataplaneapi.ts';
import { call, currentVersion, postRaw, waitReload } from '../support-contract/emulator-kit.ts';

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

describe('the real dataplaneapi 3.4 in front of HAProxy 2.6: runtime reads by the socket it is given', function () {
  this.timeout(60_000);

  /** A dataplaneapi on 2.6 serving backend `b` with server `s1`; the runtime servers of `b` as it answers them. */
  async function runtimeServers(masterRuntime: boolean): Promise<{ status: number; body: string }> {
    const real = await startRealDataplane({ release: '3.4', haproxy: await haproxyOf('2.6'), masterRuntime });
    try {
      const port = await reservePort();
      const config = `${await readFile(real.configFile, 'utf8')}\nfrontend f\n  bind 127.0.0.1:${port}\n  default_backend b\n\nbackend b\n  balance roundrobin\n  server s1 127.0.0.1:1\n`;
      const before = await real.processInfo();
      const written = await postRaw(real, config, { version: String(await currentVersion(real)), force_reload: 'true' });
      expect(written.status, written.text).to.equal(201);
      // The reload is asynchronous behind 2.6 (above): wait for the new worker before asking its runtime.
      await eventually(
        () => real.processInfo(),
        (info) => info.reloads > before.reloads && info.workers.every((worker) => !before.workers.some((old) => old.pid === worker.pid)),
        'the new worker',
      );
      const reply = await call(real, 'GET', '/services/haproxy/runtime/backends/b/servers');
      return { status: reply.status, body: reply.text };
    } finally {
      await real.stop();
    }
  }

  it('fails to read a backend’s servers through the master socket (master_runtime, as in the chart)', async () => {
    expect(await runtimeServers(true)).to.deep.equal({ status: 404, body: '{"code":404,"message":"no data for b: not found"}\n' });
  });

  it('reads them through the stats socket without master_runtime', async () => {
    const { status, body } = await runtimeServers(false);
    expect(status).to.equal(200);
    const servers = JSON.parse(body) as Record<string, unknown>[];
    expect(servers).to.have.length(1);
    expect(servers[0]).to.include({ name: 's1', address: '127.0.0.1', port: 1, admin_state: 'ready' });
  });
});
