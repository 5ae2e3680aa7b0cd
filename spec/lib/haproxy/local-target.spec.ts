/**
 * LocalTarget against the real HAProxy 2.6: every test starts its own
 * HAProxy in a fresh work directory on free loopback ports, in front of
 * small HTTP backends that answer their own name, and counts reloads with
 * the master CLI's `show proc`.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import { request } from 'node:http';
import { LocalTarget } from '../../../lib/haproxy/local-target.ts';
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';
import { parseShowProc } from '../../../lib/haproxy/show-proc.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';
import { eventually } from '../../support/eventually.ts';

const run = promisify(execFile);
const dirs = { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };

/** A port nothing listens on right now: the kernel's pick for port 0, released. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An HTTP backend answering its own name. */
async function backend(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/plain');
    response.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** One request on a fresh connection, so every request is balanced anew. */
function get(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The names answering `count` requests in a row for `host`. */
async function answers(port: number, host: string, count = 6): Promise<string[]> {
  const names: string[] = [];
  for (let index = 0; index < count; index++) names.push((await get(port, host)).body);
  return names;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function peerCommonName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'site.test' }, () => {
      const subject = socket.getPeerCertificate().subject;
      socket.destroy();
      resolve(String(subject?.CN));
    });
    socket.on('error', reject);
  });
}

interface Ports {
  readonly http: number;
  readonly https: number;
}

/** A minimal configuration in the shape the shipped template renders. */
function haproxyConfig(
  workDir: string,
  ports: Ports,
  backends: Readonly<Record<string, readonly string[]>>,
  extra = '',
): string {
  const sections = Object.entries(backends).map(
    ([name, servers]) =>
      `backend ${name}\n  balance roundrobin\n${servers.map((server) => `  server ${server}\n`).join('')}`,
  );
  return `global
  default-path origin ${workDir}
  stats socket ${workDir}/stats.sock level admin
  stats timeout 30s

defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s

frontend web
  bind 127.0.0.1:${ports.http}
  bind 127.0.0.1:${ports.https} ssl crt ssl/site.pem
  use_backend %[req.hdr(host),field(1,:),map(maps/host.map)]

${sections.join('\n')}${extra}`;
}

describe('LocalTarget (real HAProxy 2.6)', function () {
  this.timeout(20_000);

  let root: string;
  const names = ['a1', 'a2', 'b1', 'c1'] as const;
  const backends = new Map<string, { server: Server; port: number }>();
  const port = (name: (typeof names)[number]): number => backends.get(name)!.port;
  let certA: string;
  let certB: string;

  let workDir: string;
  let ports: Ports;
  let target: LocalTarget;
  /** Every target a test created, so afterEach stops all of them. */
  let targets: LocalTarget[];
  let messages: string[];

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'local-target-'));
    for (const name of names) backends.set(name, await backend(name));
    const certificate = async (cn: string): Promise<string> => {
      const key = join(root, `${cn}.key`);
      const crt = join(root, `${cn}.crt`);
      await run('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
        '-subj', `/CN=${cn}`, '-keyout', key, '-out', crt,
      ]);
      return `${await readFile(crt, 'utf8')}${await readFile(key, 'utf8')}`;
    };
    [certA, certB] = await Promise.all([certificate('first.test'), certificate('second.test')]);
  });

  after(async () => {
    for (const { server } of backends.values()) server.close();
    await rm(root, { recursive: true, force: true });
  });

  let counter = 0;
  beforeEach(async () => {
    workDir = join(root, `w${++counter}`);
    ports = { http: await freePort(), https: await freePort() };
    messages = [];
    target = new LocalTarget({ workDir, dirs, log: (message) => messages.push(message) });
    targets = [target];
  });

  afterEach(async () => {
    for (const each of targets) await each.stop().catch(() => undefined);
    // Whatever stop() missed (a failing test, a bug): no HAProxy may outlive the spec.
    const pid = Number((await readFile(join(workDir, 'haproxy.pid'), 'utf8').catch(() => '')).trim());
    if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
  });

  /** The starting point: be_a with a1, be_b with b1, a.test and b.test routed to them. */
  function files(
    servers: Readonly<Record<string, readonly string[]>> = {
      be_a: [`s1 127.0.0.1:${port('a1')} check`],
      be_b: [`s1 127.0.0.1:${port('b1')} check`],
    },
    overrides: Partial<RenderedFiles> = {},
    extra = '',
  ): RenderedFiles {
    return {
      config: haproxyConfig(workDir, ports, servers, extra),
      maps: { 'host.map': 'a.test be_a\nb.test be_b\n' },
      certificates: { 'site.pem': certA },
      files: {},
      ...overrides,
    };
  }

  async function started(initial: RenderedFiles = files()): Promise<number> {
    expect(await target.deploy(initial)).to.include({ mode: 'reload', reloadReason: 'HAProxy started', operations: 0 });
    await eventually(() => get(ports.http, 'a.test'), (response) => response.body === 'a1', 'a.test to reach a1');
    return (await target.processInfo()).reloads;
  }

  it('starts HAProxy daemon-like in the work directory and serves the rendered files', async () => {
    const reloads = await started();
    expect(reloads).to.equal(0);
    expect((await get(ports.http, 'b.test')).body).to.equal('b1');
    const info = await target.processInfo();
    expect(info.workers).to.have.length(1);
    expect(Number(await readFile(join(workDir, 'haproxy.pid'), 'utf8'))).to.equal(info.masterPid);
    expect(await readFile(join(workDir, 'maps', 'host.map'), 'utf8')).to.equal('a.test be_a\nb.test be_b\n');
  });

  it('rejects a start HAProxy refuses with its own message', async () => {
    const broken = files();
    const error = await target
      .deploy({ ...broken, config: broken.config.replace('balance roundrobin', 'balance no-such-algorithm') })
      .then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
    expect(error?.message).to.match(/^HAProxy failed to start: \[ALERT\].*balance only supports/s);
    expect(await target.attach()).to.equal(false);
  });

  it('adds, removes, moves and reweights servers at runtime without a reload', async () => {
    await started();
    const add = await target.deploy(
      files({
        be_a: [`s1 127.0.0.1:${port('a1')} check`, `s2 127.0.0.1:${port('a2')} check`],
        be_b: [`s1 127.0.0.1:${port('b1')} check`],
      }),
    );
    expect(add).to.deep.equal({ mode: 'runtime', operations: 1 });
    await eventually(
      () => answers(ports.http, 'a.test', 4),
      (seen) => seen.includes('a2') && seen.includes('a1'),
      'a1 and a2 both serving',
    );

    // Weight 0 takes a server out of the rotation: only a2 answers.
    const weight = await target.deploy(
      files({
        be_a: [`s1 127.0.0.1:${port('a1')} check weight 0`, `s2 127.0.0.1:${port('a2')} check`],
        be_b: [`s1 127.0.0.1:${port('b1')} check`],
      }),
    );
    expect(weight).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(await runtimeCommand(target.statsSocket, 'get weight be_a/s1')).to.match(/^0 \(initial 1\)/);
    expect(await answers(ports.http, 'a.test')).to.deep.equal(Array(6).fill('a2'));

    const remove = await target.deploy(
      files({ be_a: [`s2 127.0.0.1:${port('a2')} check`], be_b: [`s1 127.0.0.1:${port('b1')} check`] }),
    );
    expect(remove).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(await answers(ports.http, 'a.test')).to.deep.equal(Array(6).fill('a2'));
    expect(await runtimeCommand(target.statsSocket, 'show servers state be_a')).not.to.match(/ s1 /);

    // Same server name, another address: the c1 backend answers from now on.
    const move = await target.deploy(
      files({ be_a: [`s2 127.0.0.1:${port('c1')} check`], be_b: [`s1 127.0.0.1:${port('b1')} check`] }),
    );
    expect(move).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(await answers(ports.http, 'a.test')).to.deep.equal(Array(6).fill('c1'));

    expect((await target.processInfo()).reloads).to.equal(0);
    // The files on disk say what the runtime does, so a later reload keeps it.
    expect(await readFile(join(workDir, 'haproxy.cfg'), 'utf8')).to.include(`server s2 127.0.0.1:${port('c1')} check`);
  });

  it('swaps a map atomically at runtime: traffic follows the new entry without a reload', async () => {
    await started();
    const result = await target.deploy(files(undefined, { maps: { 'host.map': 'a.test be_b\nb.test be_a\n' } }));
    expect(result).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect((await get(ports.http, 'a.test')).body).to.equal('b1');
    expect((await get(ports.http, 'b.test')).body).to.equal('a1');
    const dump = await runtimeCommand(target.statsSocket, 'show map maps/host.map');
    expect(dump).to.match(/a\.test be_b\n.*b\.test be_a\n/s);
    expect((await target.processInfo()).reloads).to.equal(0);
    expect(await readFile(join(workDir, 'maps', 'host.map'), 'utf8')).to.equal('a.test be_b\nb.test be_a\n');
  });

  it('sends a map larger than the CLI buffer in chunks, keeping the file order', async () => {
    await started();
    // About 90 kB: several times tune.bufsize (16 kB), which bounds one CLI request.
    const filler = Array.from({ length: 3_000 }, (_, index) => `host-${index}.example.test be_b`);
    const content = `${filler.join('\n')}\na.test be_b\nb.test be_a\n`;
    const result = await target.deploy(files(undefined, { maps: { 'host.map': content } }));
    expect(result).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(await runtimeCommand(target.statsSocket, 'show map')).to.match(/\(maps\/host\.map\).* entry_cnt=3002\b/);
    const dump = await runtimeCommand(target.statsSocket, 'show map maps/host.map');
    const keys = dump.trim().split('\n').map((line) => line.split(' ')[1]);
    expect(keys.slice(0, 2)).to.deep.equal(['host-0.example.test', 'host-1.example.test']);
    expect(keys.slice(-2)).to.deep.equal(['a.test', 'b.test']);
    expect((await get(ports.http, 'a.test')).body).to.equal('b1');
    expect((await target.processInfo()).reloads).to.equal(0);
  });

  it('replaces a certificate at runtime without a reload', async () => {
    await started();
    const serial = (text: string): string | undefined => /^Serial: (\w+)$/m.exec(text)?.[1];
    const before = await runtimeCommand(target.statsSocket, 'show ssl cert ssl/site.pem');
    expect(before).to.include('Subject: /CN=first.test');
    expect(await peerCommonName(ports.https)).to.equal('first.test');
    const result = await target.deploy(files(undefined, { certificates: { 'site.pem': certB } }));
    expect(result).to.deep.equal({ mode: 'runtime', operations: 1 });
    const shown = await runtimeCommand(target.statsSocket, 'show ssl cert ssl/site.pem');
    expect(shown).to.include('Subject: /CN=second.test');
    expect(serial(shown)).to.be.a('string').and.not.equal(serial(before));
    expect(await peerCommonName(ports.https)).to.equal('second.test');
    expect((await target.processInfo()).reloads).to.equal(0);
  });

  it('reloads exactly once for a new backend, and traffic reaches it', async () => {
    await started();
    const before = await target.processInfo();
    const result = await target.deploy(
      files(
        {
          be_a: [`s1 127.0.0.1:${port('a1')} check`],
          be_b: [`s1 127.0.0.1:${port('b1')} check`],
          be_c: [`s1 127.0.0.1:${port('c1')} check`],
        },
        { maps: { 'host.map': 'a.test be_a\nb.test be_b\nc.test be_c\n' } },
      ),
    );
    expect(result).to.include({ mode: 'reload', reloadReason: 'backend be_c added', operations: 0 });
    const after = await target.processInfo();
    expect(after.reloads).to.equal(before.reloads + 1);
    expect(after.failed).to.equal(0);
    expect(after.workers.map((worker) => worker.pid)).not.to.include(before.workers[0]!.pid);
    expect((await get(ports.http, 'c.test')).body).to.equal('c1');
  });

  it('falls back to a reload when a runtime operation fails', async () => {
    // A map file no configuration line loads: HAProxy has nothing to update at runtime.
    await started(files(undefined, { maps: { 'host.map': 'a.test be_a\nb.test be_b\n', 'spare.map': 'x y\n' } }));
    const result = await target.deploy(
      files(undefined, { maps: { 'host.map': 'a.test be_a\nb.test be_b\n', 'spare.map': 'x z\n' } }),
    );
    expect(result.mode).to.equal('reload');
    expect(result.reloadReason).to.equal(
      'runtime update failed: map maps/spare.map is not loaded by the running HAProxy',
    );
    expect((await target.processInfo()).reloads).to.equal(1);
  });

  it('reports a reload HAProxy rejects, restores the files and keeps serving the old configuration', async () => {
    await started();
    const before = await target.processInfo();
    const good = files();
    // Validation passes (haproxy -c does not bind); only the running reload finds the port taken.
    const occupied = `\nlisten extra\n  bind 127.0.0.1:${port('c1')}\n  server x 127.0.0.1:${port('c1')}\n`;
    const error = await target.deploy(files(undefined, {}, occupied)).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).to.match(
      /^HAProxy rejected the reload \(listen extra added\): \[ALERT\].*cannot bind socket \(Address already in use\)/s,
    );
    const after = await target.processInfo();
    expect(after.failed).to.equal(before.failed + 1);
    expect(after.workers.map((worker) => worker.pid)).to.deep.equal(before.workers.map((worker) => worker.pid));
    expect(await readFile(join(workDir, 'haproxy.cfg'), 'utf8')).to.equal(good.config);
    expect((await get(ports.http, 'a.test')).body).to.equal('a1');
    expect(await target.deploy(good)).to.deep.equal({ mode: 'unchanged', operations: 0 });
  });

  it('attaches to a running HAProxy from a new LocalTarget and finds nothing to change', async () => {
    expect(await target.attach()).to.equal(false);
    await started();
    const before = await target.processInfo();
    const adopter = new LocalTarget({ workDir, dirs });
    targets.push(adopter);
    expect(await adopter.attach()).to.equal(true);
    expect(await adopter.deploy(files())).to.deep.equal({ mode: 'unchanged', operations: 0 });
    // A first deploy without attach() adopts as well, rather than starting a second HAProxy.
    const late = new LocalTarget({ workDir, dirs });
    targets.push(late);
    expect(await late.deploy(files())).to.deep.equal({ mode: 'unchanged', operations: 0 });
    const after = await target.processInfo();
    expect(after.reloads).to.equal(before.reloads);
    expect(after.masterPid).to.equal(before.masterPid);
  });

  it('starts HAProxy again when it died since the last deploy', async () => {
    await started();
    const info = await target.processInfo();
    for (const pid of [info.masterPid, ...info.workers.map((worker) => worker.pid)]) process.kill(pid, 'SIGKILL');
    await eventually(async () => isAlive(info.masterPid), (alive) => !alive, 'the killed master to be gone');
    const result = await target.deploy(files(undefined, { maps: { 'host.map': 'a.test be_b\n' } }));
    expect(result).to.include({ mode: 'reload', reloadReason: 'HAProxy started' });
    expect((await target.processInfo()).masterPid).not.to.equal(info.masterPid);
    await eventually(() => get(ports.http, 'a.test'), (response) => response.body === 'b1', 'a.test to reach b1');
  });

  it('queues overlapping deploys instead of interleaving them', async () => {
    await started();
    const moved = files(undefined, { maps: { 'host.map': 'a.test be_b\nb.test be_b\n' } });
    const [first, second] = await Promise.all([target.deploy(moved), target.deploy(moved)]);
    expect(first).to.deep.equal({ mode: 'runtime', operations: 1 });
    expect(second).to.deep.equal({ mode: 'unchanged', operations: 0 });
  });

  it('stops HAProxy and leaves no process behind', async () => {
    await started();
    const info = await target.processInfo();
    const pids = [info.masterPid, ...info.workers.map((worker) => worker.pid)];
    expect(pids.every(isAlive)).to.equal(true);
    await target.stop();
    expect(pids.filter(isAlive)).to.deep.equal([]);
    expect(await target.attach()).to.equal(false);
  });
});

describe('parseShowProc', () => {
  it('reads the master, its failed reloads, the workers and the old workers (2.6 layout)', () => {
    // Captured from 2.6.12 after a reload while a client kept a connection to the first worker.
    const text =
      '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
      '3995            master          3 [failed: 1]   0d00h00m02s     2.6.12-1+deb12u4\n' +
      '# workers\n' +
      '4023            worker          0               0d00h00m01s     2.6.12-1+deb12u4\n' +
      '# old workers\n' +
      '3998            worker          1               0d00h00m02s     2.6.12-1+deb12u4\n' +
      '# programs\n\n';
    expect(parseShowProc(text)).to.deep.equal({
      masterPid: 3995,
      reloads: 3,
      failed: 1,
      workers: [{ pid: 4023, reloads: 0 }],
      oldWorkers: [{ pid: 3998, reloads: 1 }],
    });
  });

  it('rejects an answer without a master line', () => {
    expect(() => parseShowProc('Unknown command.\n')).to.throw(/not a "show proc" answer/);
  });
});

describe('runtimeCommand', () => {
  it('refuses payloads HAProxy would cut at an empty line, and multi-line commands', async () => {
    const missing = join(tmpdir(), 'no-such-haproxy.sock');
    for (const [command, payload] of [
      ['add map @1 #2', 'a b\n\nc d'],
      ['add map @1 #2', ''],
      ['show info\nshow proc', undefined],
    ] as const) {
      const options = payload === undefined ? {} : { payload };
      const error = await runtimeCommand(missing, command, options).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.match(/payload|single line/);
    }
  });

  it('times out naming the socket and the command when the answer never comes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'silent-socket-'));
    const path = join(dir, 'silent.sock');
    const silent = createNetServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    try {
      const error = await runtimeCommand(path, 'show proc', { timeoutMs: 100 }).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.equal(`HAProxy socket ${path} did not answer "show proc" within 100 ms`);
    } finally {
      silent.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the socket and the command when nobody listens', async () => {
    const missing = join(tmpdir(), 'no-such-haproxy.sock');
    const error = await runtimeCommand(missing, 'show proc', { retryForMs: 100 }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).to.equal(`HAProxy socket ${missing} is not available (ENOENT) for "show proc"`);
  });
});
