import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultConfigPath, packageRoot } from '../../lib/cli/package-root.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { createControllerObjects, createHaproxyPod } from '../support/cluster-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { reservePort } from '../support/ports.ts';
import { httpGet } from '../support/traffic.ts';

/**
 * `haproxy-template-ic run` as the process a pod runs: flags and
 * environment, the kubeconfig, JSON logs, health on its own port, the lease,
 * and SIGTERM ending it cleanly with the lease given back. One HAProxy pod
 * (an emulator with a real HAProxy) and the fake API server.
 */

const POD_ADDRESS = '127.0.0.8';

describe('the run command as a process', function () {
  this.timeout(60_000);
  let fake: FakeApiServer;
  let emulator: Emulator;
  let controller: ChildProcess | undefined;
  const lines: string[] = [];

  before(async () => {
    fake = await startFakeApiServer();
    const dataplanePort = await reservePort(POD_ADDRESS);
    emulator = await startEmulator({
      pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: POD_ADDRESS },
      listen: { host: POD_ADDRESS, port: dataplanePort },
    });
    const config = (await readFile(defaultConfigPath(), 'utf8'))
      .replace('  httpPort: 80\n', `  httpPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(POD_ADDRESS)}\n`)
      .replace('  port: 5555\n', `  port: ${dataplanePort}\n`);
    const { user, password } = emulator.credentials;
    createControllerObjects(fake, 'edge', { config, secret: 'creds', username: user, password });
    createHaproxyPod(fake, 'edge', 'haproxy-0', POD_ADDRESS);
  });

  after(async () => {
    if (controller && controller.exitCode === null) controller.kill('SIGKILL');
    await emulator?.stop();
    await fake?.close();
  });

  it('deploys from the cluster, answers on its health port, and on SIGTERM gives the lease back and exits 0', async () => {
    const healthPort = await reservePort();
    const metricsPort = await reservePort();
    const started = spawn(
      process.execPath,
      [
        join(packageRoot(), 'streams', 'main.ts'),
        'run',
        '--kubeconfig',
        fake.kubeconfigPath,
        '--secret',
        'creds',
        '--bind-address',
        '127.0.0.1',
        '--health-port',
        String(healthPort),
        '--metrics-port',
        String(metricsPort),
        '--webhook-port',
        String(await reservePort()),
        '--retry-period',
        '250ms',
      ],
      // The downward API's variables, as the chart sets them.
      { env: { ...process.env, POD_NAMESPACE: 'edge', POD_NAME: 'controller-0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    controller = started;
    createInterface({ input: started.stdout! }).on('line', (line) => lines.push(line));
    createInterface({ input: started.stderr! }).on('line', (line) => lines.push(line));
    const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));

    const deployed = await eventually(
      async () => lines.find((line) => line.includes('deployed revision')),
      (line) => line !== undefined,
      'a deployment',
      30_000,
    );
    // Logs are JSON lines off a terminal; the container's limits come first.
    expect(JSON.parse(deployed!)).to.deep.include({ stage: 'deploy', endpoint: 'edge/haproxy-0' });
    expect(JSON.parse(lines[0]!).msg).to.match(/^(container limits|no cgroup found)/);
    expect(await httpGet('127.0.0.1', healthPort, 'localhost', '/readyz')).to.equal('200 ready');
    const holder = () =>
      (fake.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'edge', name: 'haproxy-template-ic-leader' })?.['spec'] as { holderIdentity?: string } | undefined)
        ?.holderIdentity;
    expect(holder()).to.equal('controller-0');
    // The observability of issue 7, in this mode too: leadership and resources in the metrics, redacted debug views.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).to.match(/^haproxy_template_ic_leader 1$/m);
    expect(metrics).to.match(/^haproxy_template_ic_resources\{type="ingresses"\} 0$/m);
    const debugConfig = await (await fetch(`http://127.0.0.1:${healthPort}/debug/config`)).text();
    expect(JSON.parse(debugConfig)).to.have.nested.property('settings.mode', 'cluster');
    const debugEndpoints = await (await fetch(`http://127.0.0.1:${healthPort}/debug/endpoints`)).text();
    expect(debugEndpoints).to.contain('edge/haproxy-0');
    for (const text of [metrics, debugConfig, debugEndpoints]) expect(text).to.not.contain(emulator.credentials.password);

    started.kill('SIGTERM');
    expect(await exited).to.equal(0);
    expect(holder()).to.equal('');
    // Nothing secret reached the log.
    expect(lines.join('\n')).to.not.contain(emulator.credentials.password);
  });

  it('prints the usage and exits 2 on a wrong flag, naming it', async () => {
    const wrong = spawn(process.execPath, [join(packageRoot(), 'streams', 'main.ts'), 'run', '--lease-duration', 'soon'], {
      env: { ...process.env, POD_NAMESPACE: 'edge', POD_NAME: 'controller-0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    wrong.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => wrong.once('exit', (c) => resolve(c)));
    expect(code).to.equal(2);
    expect(stderr).to.match(/run: --lease-duration: "soon" is not a duration/);
    expect(stderr).to.contain('Usage: haproxy-template-ic <command>');
  });
});
