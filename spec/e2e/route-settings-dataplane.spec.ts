/**
 * Route policies through the Data Plane API (the emulator of
 * spec/support/dataplane-emulator in front of a real HAProxy, as in
 * dataplane-acceptance.spec.ts): a route whose settings a served route
 * already has is a runtime map entry "<backend>:<policy>", no reload; a new
 * distinct policy is configuration, one reload.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startLocalMode, type LocalMode } from '../../streams/local-mode.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { documents, ingress, service, slice } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { OutcomeLog, servedBy } from '../support/traffic.ts';

const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: '127.0.0.2' };
const redirect301 = { 'haproxy.org/ssl-redirect': 'true', 'haproxy.org/ssl-redirect-code': '301' };

type Deployed = Extract<Outcome, { type: 'deployed' }>;

function redirectOf(port: number, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: pod.address, port, path, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${res.statusCode} ${res.headers.location ?? ''}`));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('route policies through the Data Plane API', function () {
  this.timeout(90_000);
  let emulator: Emulator;
  let mode: LocalMode;
  let log: OutcomeLog;
  let manifests = '';
  let httpPort = 0;
  let web = 0;
  let stopBackends: () => Promise<void> = async () => undefined;

  const write = (file: string, text: string) => writeFile(join(manifests, file), text);
  const reloads = async () => (await emulator.processInfo()).reloads;
  const deployed = async (from: number): Promise<Deployed> => {
    const endpoint = mode.fleet.endpoints[0]!.id;
    return (await log.deployedOn(from, [endpoint])).get(endpoint)!;
  };
  const routed = (name: string, host: string, annotations?: Record<string, string>) =>
    ingress(name, host, [['/', 'Prefix', 'web', { number: 80 }]], undefined, annotations ? { annotations } : {});

  before(async () => {
    emulator = await startEmulator({ pod });
    const [https, status] = [await reservePort(pod.address), await reservePort(pod.address)];
    httpPort = await reservePort(pod.address);
    const backends = await startBackends([0]);
    [web] = backends.ports as [number];
    stopBackends = backends.stop;
    const dir = await mkdtemp(join(tmpdir(), 'route-policies-'));
    manifests = join(dir, 'manifests');
    await mkdir(manifests);
    const configPath = join(dir, 'config.yaml');
    const shipped = await readFile(defaultConfigPath(), 'utf8');
    await writeFile(
      configPath,
      shipped.replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`).replace('  httpsPort: 443\n', `  httpsPort: ${https}\n`).replace('  statusPort: 8404\n', `  statusPort: ${status}\n`),
    );
    await write(
      'web.yaml',
      documents(service('web', [{ port: 80, targetPort: web }]), slice('web-0', 'web', undefined, web), routed('a', 'a.example.com', redirect301), routed('plain', 'plain.example.com')),
    );
    mode = await startLocalMode({
      manifests,
      config: { path: configPath, watch: false },
      workDir: join(dir, 'work'),
      bindAddress: '127.0.0.1',
      httpPort,
      httpsPort: https,
      statusPort: status,
      healthPort: 0,
      metricsPort: 0,
      settleMs: 50,
      dataplane: { urls: [emulator.url], username: emulator.credentials.user, password: emulator.credentials.password },
      output: { out: () => undefined, err: () => undefined },
    });
    log = new OutcomeLog(mode.outcomes);
    expect((await deployed(0)).result.mode).to.equal('reload');
    await servedBy('plain.example.com', [web], [pod.address], httpPort);
    expect(await redirectOf(httpPort, 'a.example.com', '/x')).to.equal('301 https://a.example.com/x');
  });

  after(async () => {
    try {
      await mode?.stop();
    } finally {
      await emulator?.stop();
      await stopBackends();
    }
  });

  it('serves routes with an existing policy, or none, through runtime map entries: no reload', async () => {
    const before = await reloads();
    const from = log.mark();
    await write('more.yaml', documents(routed('b', 'b.example.com', redirect301), routed('c', 'c.example.com')));
    expect((await deployed(from)).result.mode).to.equal('runtime');
    expect(await redirectOf(httpPort, 'b.example.com', '/y?z=1')).to.equal('301 https://b.example.com/y?z=1');
    await servedBy('c.example.com', [web], [pod.address], httpPort);
    expect(await reloads()).to.equal(before);
  });

  it('renders a new distinct policy as configuration: one reload', async () => {
    const before = await reloads();
    const from = log.mark();
    await write('other.yaml', routed('d', 'd.example.com', { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' }));
    const result = (await deployed(from)).result;
    expect(result.mode).to.equal('reload');
    expect(await redirectOf(httpPort, 'd.example.com', '/')).to.equal('308 https://d.example.com/');
    expect(await reloads()).to.equal(before + 1);
  });
});
