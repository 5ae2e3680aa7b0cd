/**
 * The local target (a HAProxy 2.6 on this machine, driven through its master
 * and stats sockets) under the convergence algorithm: the shared deploy
 * target contract, then what only a local HAProxy does (starting it, finding
 * it dead, stopping it). Every HAProxy runs in a fresh work directory on free
 * loopback ports; reloads are counted with the master CLI's `show proc`.
 */
import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../../examples/backends.ts';
import { Converger } from '../../../lib/deploy/converge.ts';
import { LocalTarget, type LocalState } from '../../../lib/deploy/local-target.ts';
import { MasterProcess } from '../../../lib/haproxy/master-process.ts';
import { reloadMaster } from '../../../lib/haproxy/master-reload.ts';
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';
import { writeRenderedFiles } from '../../../lib/render/write-files.ts';
import { eventually } from '../../support/eventually.ts';
import { reservePort } from '../../support/ports.ts';
import { httpGet } from '../../support/traffic.ts';
import { contractFiles, describeTargetContract, FIRST_CERTIFICATE, type ContractWorld, type Ports, type Shape } from './target-contract.ts';

const dirs = { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };

/** Files a deploy writes (the sockets, the pid file and HAProxy's log are HAProxy's own). */
async function fileTimes(workDir: string): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  for (const entry of await readdir(workDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || /\.(sock|pid|log)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    times.set(path, (await stat(path)).mtimeMs);
  }
  return times;
}

async function localWorld(): Promise<ContractWorld & { readonly workDir: string }> {
  const workDir = await mkdtemp(join(tmpdir(), 'local-target-'));
  const master = new MasterProcess({ workDir });
  let marked = new Map<string, number>();
  return {
    workDir,
    baseDir: workDir,
    statsSocket: join(workDir, 'stats.sock'),
    certificatesAtRuntime: true,
    controller: () => new Converger({ target: new LocalTarget({ workDir, dirs }) }),
    reloads: async () => (await master.showProc()).reloads,
    markWrites: async () => {
      marked = await fileTimes(workDir);
    },
    writesSinceMark: async () => {
      const now = await fileTimes(workDir);
      return [...now].filter(([path, time]) => marked.get(path) !== time).length + [...marked.keys()].filter((path) => !now.has(path)).length;
    },
    tamper: async (files) => {
      await writeRenderedFiles(workDir, files, dirs);
      expect(await reloadMaster(master)).to.include({ loaded: true });
    },
    stop: async () => {
      await master.stop();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

describeTargetContract('a local HAProxy through its sockets', localWorld);

describe('local target: a HAProxy of its own', function () {
  this.timeout(20_000);
  let world: Awaited<ReturnType<typeof localWorld>>;
  let target: LocalTarget;
  let converger: Converger<LocalState>;
  let ports: Ports;
  let backends: readonly number[];
  let stopBackends: () => Promise<void>;
  let messages: string[];
  let shape: Shape;
  let hash = 0;

  const files = (next: Shape, extra = ''): RenderedFiles => contractFiles(world, ports, next, extra);
  const deploy = (rendered: RenderedFiles) => converger.deploy(rendered, `h${++hash}`, 'change');
  /** Kills the master and its workers, as a crash would, and waits until they are gone; what ran. */
  const kill = async () => {
    const info = await target.processInfo();
    for (const pid of [info.masterPid, ...info.workers.map((worker) => worker.pid)]) process.kill(pid, 'SIGKILL');
    await eventually(
      () => target.read(),
      (state) => state === undefined,
      'the killed master to be gone',
    );
    return info;
  };

  before(async () => {
    ({ ports: backends, stop: stopBackends } = await startBackends([0, 0]));
  });

  after(async () => {
    await stopBackends();
  });

  beforeEach(async () => {
    world = await localWorld();
    ports = { http: await reservePort(), https: await reservePort(), taken: 0 };
    messages = [];
    target = new LocalTarget({ workDir: world.workDir, dirs, log: (message) => messages.push(message) });
    converger = new Converger({ target, log: (message) => messages.push(message) });
    shape = { backends: { web: [backends[0]!] }, hosts: ['a.test'], routes: { 'a.test/': 'web' }, certificate: FIRST_CERTIFICATE };
  });

  afterEach(async () => {
    await world.stop();
  });

  it('starts HAProxy detached in the work directory, serving the files written there', async () => {
    expect(await target.read()).to.equal(undefined);
    expect(await deploy(files(shape))).to.include({ mode: 'reload', reloadReason: 'HAProxy started', operations: 0 });
    const info = await target.processInfo();
    expect(info.workers).to.have.length(1);
    expect(Number(await readFile(join(world.workDir, 'haproxy.pid'), 'utf8'))).to.equal(info.masterPid);
    expect(await readFile(join(world.workDir, 'maps', 'host.map'), 'utf8')).to.equal('a.test a.test\n');
    expect(await httpGet('127.0.0.1', ports.http, 'a.test')).to.equal(`200 backend ${backends[0]} GET /`);
    expect(messages.join('\n')).to.match(/started HAProxy master \d+, worker \d+/);
  });

  it('reports a start HAProxy refuses with its own message', async () => {
    const broken = files(shape);
    const error = await deploy({ ...broken, config: broken.config.replace('balance roundrobin', 'balance no-such-algorithm') }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).to.match(/^HAProxy failed to start: \[ALERT\].*balance only supports/s);
    expect(await target.read()).to.equal(undefined);
  });

  it('swaps a map larger than the CLI buffer at runtime, in chunks, keeping the file order', async () => {
    await deploy(files(shape));
    // About 90 kB: several times tune.bufsize (16 kB), which bounds one CLI request.
    const filler = Array.from({ length: 3_000 }, (_, index) => `host-${index}.example.test`);
    const result = await deploy(files({ ...shape, hosts: [...filler, 'a.test'] }));
    expect(result).to.deep.equal({ mode: 'runtime', operations: 1 });
    const dump = await runtimeCommand(target.statsSocket, `show map ${world.workDir}/maps/host.map`);
    const keys = dump
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1]);
    expect(keys).to.have.length(3_001);
    expect(keys.slice(0, 2)).to.deep.equal(['host-0.example.test', 'host-1.example.test']);
    expect(keys.at(-1)).to.equal('a.test');
    expect((await target.processInfo()).reloads).to.equal(0);
  });

  it('falls back to a reload, with the reason, when a runtime operation fails', async () => {
    // A map file no configuration line loads: HAProxy has nothing to update at runtime.
    const spare = (content: string) => {
      const rendered = files(shape);
      return { ...rendered, maps: { ...rendered.maps, 'spare.map': content } };
    };
    await deploy(spare('x y\n'));
    const result = await deploy(spare('x z\n'));
    expect(result).to.include({ mode: 'reload', reloadReason: 'runtime update failed: map maps/spare.map is not loaded by the running HAProxy' });
    expect(messages.join('\n')).to.include('runtime update failed: map maps/spare.map is not loaded by the running HAProxy; reloading instead');
    expect((await target.processInfo()).reloads).to.equal(1);
  });

  it('health-checks a server added at runtime at once and drains it when it fails, without a reload', async () => {
    await deploy(files(shape));
    const reloads = (await target.processInfo()).reloads;
    const dead = await reservePort();
    const result = await deploy(files({ ...shape, backends: { web: [backends[0]!, dead] } }));
    expect(result).to.include({ mode: 'runtime' });
    // Every version leaves the checks of a server added at runtime off until `enable health`, which
    // the applier sends for a line with `check`: nothing listens on the dead port, so it goes DOWN.
    const status = async (server: string) => {
      const row = (await runtimeCommand(world.statsSocket, 'show stat')).split('\n').find((line) => line.startsWith(`web,${server},`));
      return row?.split(',')[17];
    };
    await eventually(
      () => status(`s${dead}`),
      (value) => value === 'DOWN',
      `s${dead} marked DOWN by its health check`,
      15_000,
    );
    for (let request = 0; request < 4; request++) expect(await httpGet('127.0.0.1', ports.http, 'a.test')).to.equal(`200 backend ${backends[0]} GET /`);
    expect((await target.processInfo()).reloads).to.equal(reloads);
  });

  it('adopts an HAProxy already running on the work directory: a new controller finds nothing to do', async () => {
    await deploy(files(shape));
    const before = await target.processInfo();
    const adopter = new Converger({ target: new LocalTarget({ workDir: world.workDir, dirs }) });
    expect(await adopter.deploy(files(shape), 'again', 'change')).to.deep.equal({ mode: 'unchanged', operations: 0 });
    const after = await target.processInfo();
    expect(after.masterPid).to.equal(before.masterPid);
    expect(after.reloads).to.equal(before.reloads);
  });

  it('starts HAProxy again when it died since the last deploy', async () => {
    await deploy(files(shape));
    const info = await kill();
    const result = await deploy(files({ ...shape, backends: { web: [backends[1]!] } }));
    expect(result).to.include({ mode: 'reload', reloadReason: 'HAProxy started' });
    expect(messages).to.include('HAProxy does not answer: starting it again');
    expect((await target.processInfo()).masterPid).to.not.equal(info.masterPid);
    expect(await httpGet('127.0.0.1', ports.http, 'a.test')).to.equal(`200 backend ${backends[1]} GET /`);
  });

  it('converges again on what was deployed last when its turn comes, not when it was asked for, and starts a dead HAProxy on it', async () => {
    expect(await converger.redeploy('drift'), 'nothing deployed yet').to.equal(undefined);
    await deploy(files(shape));
    // Asked for while a deploy is queued (as a start is when the master dies during one): it follows that deploy.
    const [, again] = await Promise.all([converger.deploy(files({ ...shape, backends: { web: [backends[1]!] } }), 'moved', 'change'), converger.redeploy('drift')]);
    expect(again).to.deep.equal({ mode: 'unchanged', operations: 0 });
    expect(converger.status.deployedHash).to.equal('moved');
    await kill();
    expect(await converger.redeploy('drift')).to.include({ mode: 'reload', reloadReason: 'HAProxy started' });
    expect(await httpGet('127.0.0.1', ports.http, 'a.test')).to.equal(`200 backend ${backends[1]} GET /`);
  });

  describe('a configuration deployed before its verdict (runtime-first)', () => {
    const onDisk = () => readFile(join(world.workDir, 'haproxy.cfg'), 'utf8');
    const unconfirmed = (rendered: RenderedFiles, reason: 'change' | 'drift' = 'change') => converger.deploy(rendered, `h${++hash}`, reason, false);
    const servedBy = async (ports_: readonly number[]) => {
      const seen = new Set<string>();
      for (let request = 0; request < 8; request++) seen.add(await httpGet('127.0.0.1', ports.http, 'a.test'));
      expect([...seen].sort()).to.deep.equal(ports_.map((port) => `200 backend ${port} GET /`).sort());
    };

    it('is applied at runtime only, a drift check takes its files for lagging, and its confirmation writes them', async () => {
      const valid = files(shape);
      await deploy(valid);
      const moved = files({ ...shape, backends: { web: backends } });
      await world.markWrites();
      expect(await unconfirmed(moved)).to.deep.equal({ mode: 'runtime', operations: 1 });
      await servedBy(backends);
      expect(await onDisk()).to.equal(valid.config);
      // The files say what was valid; the same HAProxy runs what was applied: no drift, nothing applied again.
      expect(await unconfirmed(moved, 'drift')).to.deep.equal({ mode: 'unchanged', operations: 0 });
      expect(await world.writesSinceMark()).to.equal(0);
      expect(await converger.deploy(moved, `h${hash}`, 'confirmed')).to.deep.equal({ mode: 'persisted', operations: 0 });
      expect(await onDisk()).to.equal(moved.config);
      expect(await converger.deploy(moved, `h${hash}`, 'drift')).to.deep.equal({ mode: 'unchanged', operations: 0 });
      expect((await target.processInfo()).reloads).to.equal(0);
    });

    it('is undone at runtime by the last valid configuration, which writes nothing: the files never held it', async () => {
      const valid = files(shape);
      await deploy(valid);
      await world.markWrites();
      expect(await unconfirmed(files({ ...shape, backends: { web: backends } }))).to.include({ mode: 'runtime' });
      expect(await deploy(valid)).to.deep.equal({ mode: 'runtime', operations: 1 });
      await servedBy([backends[0]!]);
      expect(await world.writesSinceMark()).to.equal(0);
      expect((await target.processInfo()).reloads).to.equal(0);
    });

    it('keeps its files lagging through a refused reload: the files go back to the valid ones, and the revert still undoes it at runtime', async () => {
      const valid = files(shape);
      await deploy(valid);
      await unconfirmed(files({ ...shape, backends: { web: backends } }));
      // Refused when it loads: its port is a backend's.
      const broken = files({ ...shape, backends: { web: backends } }, `\nlisten clash\n  bind 127.0.0.1:${backends[0]!}\n`);
      const refused = await unconfirmed(broken).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(refused?.message).to.match(/HAProxy rejected the reload/);
      expect(await onDisk()).to.equal(valid.config);
      expect(await deploy(valid)).to.deep.equal({ mode: 'runtime', operations: 1 });
      await servedBy([backends[0]!]);
    });

    it('is written by a reload, which loads what it wrote, and by the start of a master that died', async () => {
      await deploy(files(shape));
      const added = files({ ...shape, backends: { web: [backends[0]!], api: [backends[1]!] } });
      expect(await unconfirmed(added)).to.include({ mode: 'reload' });
      expect(await onDisk()).to.equal(added.config);
      const moved = files({ ...shape, backends: { web: backends, api: [backends[1]!] } });
      expect(await unconfirmed(moved)).to.include({ mode: 'runtime' });
      await kill();
      expect(await converger.redeploy('drift')).to.include({ mode: 'reload', reloadReason: 'HAProxy started' });
      expect(await onDisk()).to.equal(moved.config);
      await servedBy(backends);
    });
  });

  it('tells of the death of a master it started the moment Node reaps it', async () => {
    await deploy(files(shape));
    const info = await target.processInfo();
    let exits = 0;
    const exited = new Promise<void>((resolve) =>
      target.master.onExit(() => {
        exits++;
        resolve();
      }),
    );
    process.kill(info.masterPid, 'SIGKILL');
    // An event, no look: it comes, or the spec times out.
    await exited;
    expect(exits).to.equal(1);
  });

  it('queues overlapping deploys: the second one plans against what the first one left', async () => {
    await deploy(files(shape));
    const moved = files({ ...shape, backends: { web: backends } });
    const [first, second] = await Promise.all([deploy(moved), deploy(moved)]);
    expect(first).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(second).to.deep.equal({ mode: 'unchanged', operations: 0 });
  });

  it('stops HAProxy between deploys and leaves no process behind', async () => {
    await deploy(files(shape));
    const info = await target.processInfo();
    const pids = [info.masterPid, ...info.workers.map((worker) => worker.pid)];
    await converger.exclusive(() => target.stop());
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(pids.filter(alive)).to.deep.equal([]);
    expect(await target.read()).to.equal(undefined);
    expect(messages).to.include(`stopped HAProxy master ${info.masterPid}`);
  });
});
