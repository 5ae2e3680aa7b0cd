import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { haproxyBinary } from '../../lib/haproxy/check.ts';
import { runtimeCommand } from '../../lib/haproxy/runtime-socket.ts';
import { parseShowProc, type ShowProc } from '../../lib/haproxy/show-proc.ts';
import { eventually } from '../support/eventually.ts';
import { reservePort } from '../support/ports.ts';
import { renderChart, valueSets, type RenderedChart } from './helm.ts';
import { configMapData, container, type Container, type Workload } from './manifests.ts';

/**
 * The HAProxy pod as the chart renders it, run on this machine: the init
 * container's script, HAProxy with the container's command line on the
 * bootstrap configuration, the Data Plane API's start script (with a
 * stand-in for dataplaneapi, which is not installed here) and the reload
 * command it is given, against the real HAProxy master. Pod paths and
 * ports are mapped into a temporary directory and onto loopback.
 */

interface DataplaneSettings {
  readonly haproxy: {
    readonly config_file: string;
    readonly haproxy_bin: string;
    readonly master_worker_mode: boolean;
    readonly master_runtime: string;
    readonly reload: { readonly reload_cmd: string; readonly restart_cmd: string; readonly reload_delay: number };
  };
  readonly dataplaneapi: {
    readonly host: string;
    readonly port: number;
    readonly scheme: string[];
    readonly resources: Record<string, string>;
    readonly user: { name: string; password: string; insecure: boolean }[];
  };
}

class PodSandbox {
  readonly root: string;
  readonly ports: { readonly http: number; readonly status: number };
  readonly #replacements: [string, string][];

  private constructor(root: string, ports: { http: number; status: number }, replacements: [string, string][]) {
    this.root = root;
    this.ports = ports;
    this.#replacements = replacements;
  }

  static async create(): Promise<PodSandbox> {
    const root = await mkdtemp(join(tmpdir(), 'hti-pod-'));
    const ports = { http: await reservePort(), status: await reservePort() };
    return new PodSandbox(root, ports, [
      ['/usr/local/share/haproxy-template-ic', join(root, 'scripts')],
      ['/etc/haproxy', join(root, 'etc')],
      ['/var/run/haproxy', join(root, 'run')],
      ['/run/dataplaneapi', join(root, 'dataplaneapi')],
      ['/usr/local/sbin/haproxy', haproxyBinary()],
      ['*:8404', `127.0.0.1:${ports.status}`],
      ['*:80', `127.0.0.1:${ports.http}`],
    ]);
  }

  /** A pod path, port binding or the image's haproxy, as it is here. */
  map(text: string): string {
    return this.#replacements.reduce((mapped, [from, to]) => mapped.replaceAll(from, to), text);
  }

  env(c: Container, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const variables: NodeJS.ProcessEnv = { PATH: process.env['PATH'] };
    for (const variable of c.env ?? []) if (variable.value !== undefined) variables[variable.name] = this.map(variable.value);
    return { ...variables, ...extra };
  }

  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (error && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout, stderr });
    });
  });
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A socat that does what the reload script asks of the real one: stdin to a unix socket, the answer to stdout. */
const socatStandIn = `
import { createConnection } from 'node:net';
const target = process.argv.find((argument) => argument.startsWith('UNIX-CONNECT:'));
if (!target || !process.argv.includes('stdio')) { console.error('unexpected socat arguments', process.argv.slice(2)); process.exit(2); }
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const socket = createConnection(target.slice('UNIX-CONNECT:'.length), () => socket.end(Buffer.concat(chunks)));
socket.pipe(process.stdout);
socket.on('error', (error) => { console.error(error.message); process.exit(1); });
`;

describe('the HAProxy pod', function () {
  this.timeout(30_000);
  let chart: RenderedChart;
  let statefulSet: Workload;
  let sandbox: PodSandbox;
  let haproxy: ChildProcess | undefined;
  let haproxyOutput = '';
  const masterSocket = () => sandbox.map(container(statefulSet, 'haproxy').command![4]!.split(',')[0]!);
  const showProc = async (): Promise<ShowProc> => parseShowProc(await runtimeCommand(masterSocket(), 'show proc'));

  before(async () => {
    chart = await renderChart(valueSets.defaults);
    statefulSet = chart.one('StatefulSet') as Workload;
    sandbox = await PodSandbox.create();
    const configMap = chart.one('ConfigMap', '-haproxy');
    const scripts = join(sandbox.root, 'scripts');
    await mkdir(scripts);
    for (const item of statefulSet.spec.template.spec.volumes!.find((v) => v.name === 'scripts')!.configMap!.items!) {
      await writeFile(join(scripts, item.path), sandbox.map(configMapData(configMap, item.key)));
      await chmod(join(scripts, item.path), item.mode ?? 0o444);
    }
    await mkdir(join(sandbox.root, 'run'));
    await mkdir(join(sandbox.root, 'dataplaneapi'), { mode: 0o700 });
  });

  after(async () => {
    if (haproxy !== undefined && haproxy.exitCode === null) {
      haproxy.kill('SIGTERM');
      await once(haproxy, 'exit');
    }
    await sandbox.remove();
  });

  it('lays out the configuration volume in the init container: storage directories and the bootstrap configuration', async () => {
    const prepare = statefulSet.spec.template.spec.initContainers!.find((c) => c.name === 'prepare')!;
    const result = await run(
      '/bin/sh',
      prepare.command!.slice(1).map((arg) => sandbox.map(arg)),
      sandbox.env(prepare),
    );
    expect(result.code, result.stderr).to.equal(0);
    for (const dir of ['maps', 'ssl', 'general']) expect((await stat(join(sandbox.root, 'etc', dir))).isDirectory(), dir).to.equal(true);
    expect(await readFile(join(sandbox.root, 'etc', 'haproxy.cfg'), 'utf8')).to.equal(await readFile(join(sandbox.root, 'scripts', 'haproxy.cfg'), 'utf8'));
  });

  it('starts HAProxy with the container command on the bootstrap configuration: healthy, not ready, serving 503', async () => {
    const command = container(statefulSet, 'haproxy').command!.map((arg) => sandbox.map(arg));
    haproxy = spawn(command[0]!, command.slice(1), { cwd: join(sandbox.root, 'etc'), stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout!.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString()));
    haproxy.stderr!.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString()));
    // HAProxy's output as it is when a wait fails, not when the wait began.
    const withOutput = (error: unknown): never => {
      throw new Error(`${String(error)} (HAProxy output: ${haproxyOutput})`);
    };
    const started = await eventually(showProc, (proc) => proc.workers.length === 1, 'HAProxy to start').catch(withOutput);
    expect(started.reloads).to.equal(0);
    // From 3.1 `show proc` lists the worker once forked, before it has bound its listeners (refused meanwhile,
    // seen on 3.2 under load), and this command writes no pid file to say it is ready: the port is asked again, as
    // the kubelet's probes do. The worker binds every listener before it serves any.
    const healthz = await eventually(
      () => get(sandbox.ports.status, '/healthz'),
      (status) => status !== 0,
      'the status port to answer',
    ).catch(withOutput);
    expect(healthz).to.equal(200);
    expect(await get(sandbox.ports.status, '/ready')).to.equal(503);
    expect(await get(sandbox.ports.http, '/')).to.equal(503);
  });

  describe('the Data Plane API start script', () => {
    let settings: DataplaneSettings;
    let started: string;
    const password = `p"a\\ss w'$rd#: {x}`;

    before(async () => {
      const dataplane = container(statefulSet, 'dataplaneapi');
      const standIn = join(sandbox.root, 'dataplaneapi-stand-in');
      await writeFile(standIn, `#!/bin/sh\necho "$@" > "${join(sandbox.root, 'dataplaneapi-arguments')}"\n`);
      await chmod(standIn, 0o755);
      const result = await run(
        '/bin/sh',
        dataplane.command!.slice(1).map((arg) => sandbox.map(arg)),
        {
          ...sandbox.env(dataplane, { DATAPLANEAPI_BINARY: standIn }),
          DATAPLANE_USERNAME: 'admin',
          DATAPLANE_PASSWORD: password,
        },
      );
      expect(result.code, result.stderr).to.equal(0);
      const configFile = sandbox.map('/run/dataplaneapi/dataplaneapi.yaml');
      settings = load(await readFile(configFile, 'utf8')) as DataplaneSettings;
      expect((await stat(configFile)).mode & 0o777, 'the configuration holds the password').to.equal(0o600);
      started = (await readFile(join(sandbox.root, 'dataplaneapi-arguments'), 'utf8')).trim();
    });

    it('starts dataplaneapi on the configuration it wrote, with the credentials from the environment', () => {
      expect(started).to.equal(`-f ${sandbox.map('/run/dataplaneapi/dataplaneapi.yaml')}`);
      expect(settings.dataplaneapi.user).to.deep.equal([{ name: 'admin', password, insecure: true }]);
    });

    it('points the Data Plane API at the files, sockets and port HAProxy and the controller use', () => {
      const haproxyContainer = container(statefulSet, 'haproxy');
      const prepare = statefulSet.spec.template.spec.initContainers![0]!;
      const config = haproxyContainer.command!;
      expect(settings.haproxy.config_file).to.equal(sandbox.map(config[config.indexOf('-f') + 1]!));
      expect(settings.haproxy.master_runtime).to.equal(masterSocket());
      expect(settings.haproxy.master_worker_mode).to.equal(true);
      expect(settings.haproxy.haproxy_bin).to.equal(haproxyBinary());
      expect(settings.dataplaneapi.scheme).to.deep.equal(['http']);
      expect(settings.dataplaneapi.port).to.equal(container(statefulSet, 'dataplaneapi').ports![0]!.containerPort);
      expect(settings.dataplaneapi.resources).to.include({
        maps_dir: sandbox.env(prepare)['HAPROXY_MAPS_DIR'],
        ssl_certs_dir: sandbox.env(prepare)['HAPROXY_CERTIFICATES_DIR'],
        general_storage_dir: sandbox.env(prepare)['HAPROXY_GENERAL_DIR'],
      });
      expect(settings.haproxy.reload.restart_cmd).to.equal(settings.haproxy.reload.reload_cmd);
    });

    it('refuses credentials that cannot be one YAML line, without printing them', async () => {
      const dataplane = container(statefulSet, 'dataplaneapi');
      const result = await run(
        '/bin/sh',
        dataplane.command!.slice(1).map((arg) => sandbox.map(arg)),
        {
          ...sandbox.env(dataplane, { DATAPLANEAPI_BINARY: '/bin/false' }),
          DATAPLANE_USERNAME: 'admin',
          DATAPLANE_PASSWORD: 'first\nsecond',
        },
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal('the Data Plane API username and password must be single lines\n');
    });

    it("reloads HAProxy through the master socket with the Data Plane API's reload command", async () => {
      const bin = join(sandbox.root, 'bin');
      await mkdir(bin, { recursive: true });
      await writeFile(join(bin, 'socat'), `#!${process.execPath}\n${socatStandIn}`);
      await chmod(join(bin, 'socat'), 0o755);
      const before = await showProc();
      // As the Data Plane API runs it: split on spaces, no shell.
      const [file, ...args] = settings.haproxy.reload.reload_cmd.split(' ');
      const result = await run(file!, args, { PATH: `${bin}:${process.env['PATH']}` });
      expect(result.code, result.stderr).to.equal(0);
      const after = await eventually(showProc, (proc) => proc.reloads === before.reloads + 1 && proc.workers.length === 1, 'a reload', 10_000);
      expect(after.failed).to.equal(0);
      expect(after.workers[0]!.pid).to.not.equal(before.workers[0]!.pid);
      expect(await get(sandbox.ports.status, '/healthz')).to.equal(200);
    });
  });

  it('names the master socket the reload script needs when it is missing', async () => {
    const result = await run(join(sandbox.root, 'scripts', 'reload-haproxy.sh'), [], { PATH: process.env['PATH'] });
    expect(result.code).to.equal(2);
    expect(result.stderr).to.match(/usage: .*reload-haproxy\.sh MASTER_SOCKET/);
  });
});
