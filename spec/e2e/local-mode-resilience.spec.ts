import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { isAlive, sendSignal } from '../../lib/haproxy/processes.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness, type HarnessOptions } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice } from '../support/manifest-builders.ts';
import { within } from '../support/pace.ts';
import { reservePort } from '../support/ports.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';

/**
 * Local mode as a user meets it: editors and tools that replace files, a
 * folder removed and restored, symlinks, Secrets written as kubectl takes
 * them, an HAProxy that dies or stops answering, and the controller stopped
 * with SIGTERM. Real HAProxy, real HTTP. Every "within 2 s" is the timeout of
 * an awaited event, never a pause.
 */

const run = promisify(execFile);
type Rendered = Extract<Outcome, { type: 'rendered' }>;

/** The HAProxy master processes serving `workDir`: those started on its master socket whose parent is not one of them. */
async function mastersOf(workDir: string): Promise<number[]> {
  const socket = join(workDir, 'master.sock');
  const found = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.split('\0').includes(socket)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised name: state, ppid.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!/\)\s+Z\s/.test(stat)) found.set(Number(entry), ppid);
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

describe('local mode follows its manifests and its HAProxy', function () {
  this.timeout(90_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  /** web (named port http, 80) on the first backend, served at shop.example.com/. */
  async function shop(backends = 4, options: Pick<HarnessOptions, 'rereadMs' | 'logLevel'> = {}): Promise<LocalHarness> {
    const started = await LocalHarness.start({ manifests: {}, backends, ...options });
    const [web] = started.backends as [number];
    const mark = started.mark();
    await started.write(
      'shop.yaml',
      docs(ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { name: 'http' }]]), service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }])),
    );
    await started.write('web-1.yaml', slice('web-1', 'web', 'http', web));
    await started.next(mark, 'deployed');
    await started.until('shop.example.com', '/', [web]);
    return started;
  }

  /** The first render after `mark` whose configuration `accept` takes, within 2 s. */
  const renderedWithin2s = (h: LocalHarness, mark: number, accept: (config: string) => boolean, what: string): Promise<Rendered> =>
    h.log.waitFor(mark, (o): o is Rendered => o.type === 'rendered' && accept(o.files.config), what, 2_000);
  const serves = (port: number) => (config: string) => config.includes(`127.0.0.1:${port} check`);
  const servesNone = (ports: readonly number[]) => (config: string) => ports.every((port) => !config.includes(`127.0.0.1:${port} check`));

  it('follows sed -i, in-place rewrites and the removal of a replaced file within 2 s, every time', async () => {
    harness = await shop();
    const [web, second, third] = harness.backends as [number, number, number];
    const file = join(harness.manifestDir, 'web-1.yaml');
    for (let round = 0; round < 4; round++) {
      // sed -i writes a new file and renames it over the old one.
      let mark = harness.mark();
      await run('sed', ['-i', `s/port: ${web}/port: ${second}/`, file]);
      await renderedWithin2s(harness, mark, serves(second), `round ${round}: sed -i seen`);
      // Then an in-place rewrite of the file that replaced it (cat > file).
      mark = harness.mark();
      await writeFile(file, slice('web-1', 'web', 'http', third));
      await renderedWithin2s(harness, mark, serves(third), `round ${round}: in-place rewrite seen`);
      // A second sed -i, then the removal of the file it left.
      mark = harness.mark();
      await run('sed', ['-i', `s/port: ${third}/port: ${web}/`, file]);
      await renderedWithin2s(harness, mark, serves(web), `round ${round}: second sed -i seen`);
      mark = harness.mark();
      await rm(file);
      await renderedWithin2s(harness, mark, servesNone([web, second, third]), `round ${round}: rm seen`);
      mark = harness.mark();
      await writeFile(file, slice('web-1', 'web', 'http', web));
      await renderedWithin2s(harness, mark, serves(web), `round ${round}: file written again seen`);
    }
    await harness.until('shop.example.com', '/', [web]);
  });

  it('says so on /healthz while the folder is gone, and follows it within 2 s of its return', async () => {
    // Read every second whatever the watch says, each read logged (debug).
    harness = await shop(4, { rereadMs: 1_000, logLevel: 'debug' });
    const [web, other] = harness.backends as [number, number];
    const saved = join(dirname(harness.manifestDir), 'saved');
    await cp(harness.manifestDir, saved, { recursive: true });
    await writeFile(join(saved, 'web-1.yaml'), slice('web-1', 'web', 'http', other));
    let mark = harness.mark();
    const gone = harness.lines.length;
    await rm(harness.manifestDir, { recursive: true });
    await harness.log.waitFor(mark, (o): o is Outcome => o.type === 'resourceError' && o.error.includes(harness!.manifestDir), 'the missing folder reported', 5_000);
    const unhealthy = await eventually(
      () => harness!.health('/healthz'),
      (r) => r.status === 503,
      '/healthz to fail',
      2_000,
    );
    expect(unhealthy.body).to.contain(harness.manifestDir);
    // What served keeps serving.
    await harness.until('shop.example.com', '/', [web]);
    // Gone for a while: two periodic re-reads (a second apart, longer than any retry of a watch) find it missing.
    await harness.lineCount(gone, /"msg":"read [^"]* \(periodic re-read\): manifests could not be read: [^"]*ENOENT/, 2);
    mark = harness.mark();
    await cp(saved, harness.manifestDir, { recursive: true });
    await renderedWithin2s(harness, mark, serves(other), 'the restored folder read');
    await eventually(
      () => harness!.health('/healthz'),
      (r) => r.status === 200,
      '/healthz to pass again',
      2_000,
    );
    // And it keeps following: a later edit is seen too.
    mark = harness.mark();
    await run('sed', ['-i', `s/port: ${other}/port: ${web}/`, join(harness.manifestDir, 'web-1.yaml')]);
    await renderedWithin2s(harness, mark, serves(web), 'an edit after the return');
    await harness.until('shop.example.com', '/', [web]);
  });

  it('follows symlinked files and folders, and is not caught by a symlink loop', async () => {
    const started = await LocalHarness.start({ manifests: {}, backends: 2 });
    harness = started;
    const [web, other] = started.backends as [number, number];
    const outside = join(dirname(started.manifestDir), 'outside');
    await mkdir(join(outside, 'slices'), { recursive: true });
    await writeFile(
      join(outside, 'shop.yaml'),
      docs(ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { name: 'http' }]]), service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }])),
    );
    await writeFile(join(outside, 'slices', 'web-1.yaml'), slice('web-1', 'web', 'http', web));
    let mark = started.mark();
    await symlink(join(outside, 'shop.yaml'), join(started.manifestDir, 'shop.yaml'));
    await symlink(join(outside, 'slices'), join(started.manifestDir, 'slices'));
    await symlink(started.manifestDir, join(started.manifestDir, 'loop'));
    await started.next(mark, 'deployed');
    await started.until('shop.example.com', '/', [web]);
    // Edits to the targets, made where they live, are followed.
    mark = started.mark();
    await writeFile(join(outside, 'slices', 'web-1.yaml'), slice('web-1', 'web', 'http', other));
    await renderedWithin2s(started, mark, serves(other), 'an edit inside a symlinked folder');
    mark = started.mark();
    await writeFile(join(outside, 'shop.yaml'), (await readFile(join(outside, 'shop.yaml'), 'utf8')).replace('shop.example.com', 'store.example.com'));
    await renderedWithin2s(started, mark, () => true, 'an edit of a symlinked file');
    await started.until('store.example.com', '/', [other]);
    // The loop is read once: no object is defined twice.
    const twice = started.log.since(0).filter((o) => o.type === 'resourceError' && o.error.includes('also defined'));
    expect(twice).to.deep.equal([]);
  });

  it('reads Secrets as the API server stores them: stringData, and base64 wrapped as base64 prints it', async () => {
    harness = await shop();
    const [web] = harness.backends as [number];
    const wrapped = Buffer.from(SELF_SIGNED_CERT).toString('base64').replace(/.{76}/g, '$&\n');
    const secret = [
      'apiVersion: v1',
      'kind: Secret',
      'metadata: { name: shop-tls, namespace: default }',
      'type: kubernetes.io/tls',
      'data:',
      '  tls.crt: |',
      ...wrapped
        .trimEnd()
        .split('\n')
        .map((line) => `    ${line}`),
      'stringData:',
      '  tls.key: |',
      ...SELF_SIGNED_KEY.trimEnd()
        .split('\n')
        .map((line) => `    ${line}`),
      '',
    ].join('\n');
    const mark = harness.mark();
    await harness.write('tls.yaml', secret);
    await harness.write(
      'shop.yaml',
      docs(ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { name: 'http' }]], 'shop-tls'), service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }])),
    );
    const rendered = await harness.log.waitFor(mark, (o): o is Rendered => o.type === 'rendered' && Object.keys(o.files.certificates).length > 0, 'a certificate rendered', 10_000);
    expect(rendered.excluded).to.deep.equal([]);
    await harness.next(mark, 'deployed');
    const body = await eventually(
      () =>
        new Promise<string>((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port: harness!.ports.https, path: '/', servername: 'shop.example.com', headers: { host: 'shop.example.com' }, rejectUnauthorized: false, agent: false },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (text += chunk));
              res.on('end', () => resolve(text));
            },
          );
          req.on('error', reject);
          req.end();
        }),
      (text) => text.startsWith(`backend ${web} `),
      'HTTPS served with the certificate',
    );
    expect(body).to.match(new RegExp(`^backend ${web} `));
  });

  it('gives one Service port one backend however Ingresses name it: the second Ingress needs no reload', async () => {
    harness = await shop();
    const [web] = harness.backends as [number];
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('store.yaml', ingress('store', 'store.example.com', [['/', 'Prefix', 'web', { number: 80 }]]));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    await harness.until('store.example.com', '/', [web]);
    expect(await harness.reloads()).to.equal(reloads);
    const config = await readFile(join(harness.workDir, 'haproxy.cfg'), 'utf8');
    expect(config.match(/^backend default_web_/gm)).to.deep.equal(['backend default_web_']);
  });

  it('answers with a Server header', async () => {
    harness = await shop();
    const served = await harness.get('shop.example.com', '/');
    expect(served.headers['server']).to.equal('haproxy-template-ic');
    const notFound = await harness.get('nowhere.example.com', '/');
    expect(notFound.status).to.equal(404);
    expect(notFound.headers['server']).to.equal('haproxy-template-ic');
  });

  it('starts HAProxy again within 2 s when its worker or its master is killed, and counts it', async () => {
    harness = await shop();
    const [web] = harness.backends as [number];
    for (const [round, victim] of [
      [1, 'worker'],
      [2, 'master'],
    ] as const) {
      const info = await harness.mode.target!.processInfo();
      const pid = victim === 'worker' ? info.workers[0]!.pid : info.masterPid;
      const from = harness.lines.length;
      const left = within(2_000);
      sendSignal(pid, 'SIGKILL');
      // Noticed, started again and serving, all within 2 s of the kill.
      await harness.line(from, /HAProxy master \d+ exited; starting it again/, left());
      await harness.line(from, /started HAProxy again: master \d+/, left());
      await harness.until('shop.example.com', '/', [web], left());
      expect(await harness.metric('haproxy_restarts_total')).to.equal(round);
      expect((await mastersOf(harness.workDir)).length).to.equal(1);
      expect((await harness.health('/readyz')).status).to.equal(200);
    }
  });

  it('never starts a second master while one lives without answering, and carries on once it answers', async () => {
    harness = await shop();
    const [web, other] = harness.backends as [number, number];
    const [master] = await mastersOf(harness.workDir);
    expect(master).to.be.a('number');
    // Stopped, with its socket gone: what a master re-executing for a reload looks like to a probe, for longer than any probe waits.
    const socket = join(harness.workDir, 'master.sock');
    sendSignal(master!, 'SIGSTOP');
    await rename(socket, `${socket}.away`);
    try {
      const mark = harness.mark();
      await harness.write('web-1.yaml', slice('web-1', 'web', 'http', other));
      await harness.log.waitFor(mark, (o): o is Outcome => o.type === 'deployFailed', 'a failed deployment', 30_000);
      expect(await mastersOf(harness.workDir)).to.deep.equal([master]);
    } finally {
      await rename(`${socket}.away`, socket);
      sendSignal(master!, 'SIGCONT');
    }
    await harness.until('shop.example.com', '/', [other], 30_000);
    expect(await mastersOf(harness.workDir)).to.deep.equal([master]);
    void web;
  });
});

describe('local mode when it stops: on SIGTERM, or on a fault nothing caught', function () {
  this.timeout(60_000);
  const entry = new URL('../../streams/main.ts', import.meta.url).pathname;

  /** Runs `local` as a user would, until it has deployed; returns the process and its work dir. */
  async function runLocal(extra: readonly string[], node: { readonly flags?: readonly string[]; readonly env?: NodeJS.ProcessEnv } = {}) {
    const root = await (await import('node:fs/promises')).mkdtemp(join((await import('node:os')).tmpdir(), 'local-sigterm-'));
    const manifests = join(root, 'manifests');
    const workDir = join(root, 'work');
    await mkdir(manifests);
    await writeFile(join(manifests, 'shop.yaml'), ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { number: 80 }]]));
    const ports = { http: await reservePort(), https: await reservePort(), status: await reservePort(), health: await reservePort(), metrics: await reservePort() };
    const child = spawn(
      process.execPath,
      [
        ...(node.flags ?? []),
        entry,
        'local',
        '--manifests',
        manifests,
        '--work-dir',
        workDir,
        '--http-port',
        String(ports.http),
        '--https-port',
        String(ports.https),
        '--status-port',
        String(ports.status),
        '--health-port',
        String(ports.health),
        '--metrics-port',
        String(ports.metrics),
        ...extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...node.env } },
    );
    let output = '';
    const deployed = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('deployed revision')) resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`local exited with ${code} before deploying:\n${output}`)));
    });
    await deployed;
    const master = Number((await readFile(join(workDir, 'haproxy.pid'), 'utf8')).trim());
    return { child, workDir, master, ports, output: () => output };
  }

  it('stops HAProxy with the controller by default', async () => {
    const { child, master } = await runLocal([]);
    expect(isAlive(master)).to.equal(true);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).to.equal(0);
    expect(isAlive(master)).to.equal(false);
  });

  for (const fault of ['exception', 'rejection'] as const) {
    it(`logs an uncaught ${fault}, exits 1, and leaves HAProxy serving for the controller started next`, async () => {
      const planted = new URL('../support/planted-fault.ts', import.meta.url).pathname;
      const { child, master, workDir, output } = await runLocal([], { flags: ['--import', planted], env: { PLANTED_FAULT: fault } });
      try {
        const exited = once(child, 'exit');
        child.kill('SIGUSR2');
        const [code] = (await exited) as [number | null];
        expect(code, output()).to.equal(1);
        const fatal = output()
          .split('\n')
          .find((line) => line.includes('"level":60'));
        expect(fatal, output()).to.include(fault === 'exception' ? 'uncaught exception: a planted fault nothing catches' : 'unhandled promise rejection: a planted rejection');
        expect(JSON.parse(fatal!).err.stack).to.include('planted-fault.ts');
        expect(await mastersOf(workDir)).to.deep.equal([master]);
        expect(output()).to.match(/leaving HAProxy master \d+ running/);
      } finally {
        sendSignal(master, 'SIGTERM');
        await eventually(
          async () => isAlive(master),
          (alive) => !alive,
          'HAProxy to stop',
        );
      }
    });
  }

  it('leaves HAProxy serving with --keep-haproxy, for the next controller to attach to', async () => {
    const { child, master, workDir, output } = await runLocal(['--keep-haproxy']);
    try {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code, output()).to.equal(0);
      expect(isAlive(master)).to.equal(true);
      expect(await mastersOf(workDir)).to.deep.equal([master]);
      expect(output()).to.match(/leaving HAProxy master \d+ running/);
    } finally {
      sendSignal(master, 'SIGTERM');
      await eventually(
        async () => isAlive(master),
        (alive) => !alive,
        'HAProxy to stop',
      );
    }
  });
});
