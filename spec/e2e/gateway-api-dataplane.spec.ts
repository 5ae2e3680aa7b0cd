/**
 * HTTPRoutes through the Data Plane API (the emulator of
 * spec/support/dataplane-emulator in front of a real HAProxy, as in
 * dataplane-acceptance.spec.ts): the first configuration, with an exact
 * hostname, a wildcard one (host-suffix.map) and a weighted split, is one
 * reload; then a new HTTPRoute to a served Service, a new wildcard
 * hostname and a weight change are runtime map entries and server
 * weights, no reload. Real HTTP through the HAProxy proves each.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { startLocalMode, type LocalMode } from '../../streams/local-mode.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { documents, service, slice } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { httpGet, OutcomeLog, servedBy, type Deployed } from '../support/traffic.ts';

const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address: '127.0.0.2' };

const GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: haproxy }
spec: { controllerName: haproxy-template-ic.io/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: haproxy
  listeners: [ { name: http, port: 80, protocol: HTTP } ]
`;

/** An HTTPRoute on the Gateway for one hostname, with one rule's backendRefs. */
function httpRoute(name: string, hostname: string, backendRefs: readonly { readonly name: string; readonly weight?: number }[]): string {
  const refs = backendRefs.map((ref) => `{ name: ${ref.name}, port: 80${ref.weight === undefined ? '' : `, weight: ${ref.weight}`} }`).join(', ');
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ "${hostname}" ]
  rules: [ { backendRefs: [ ${refs} ] } ]
`;
}

describe('HTTPRoutes through the Data Plane API', function () {
  this.timeout(90_000);
  let emulator: Emulator;
  let mode: LocalMode;
  let log: OutcomeLog;
  let manifests = '';
  let httpPort = 0;
  let a = 0;
  let b = 0;
  let stopBackends: () => Promise<void> = async () => undefined;

  const write = (file: string, text: string) => writeFile(join(manifests, file), text);
  const reloads = async () => (await emulator.processInfo()).reloads;
  const deployed = async (from: number): Promise<Deployed> => {
    const endpoint = mode.fleet.endpoints[0]!.id;
    return (await log.deployedOn(from, [endpoint])).get(endpoint)!;
  };
  const served = (host: string, ports: readonly number[]) => servedBy(host, ports, [pod.address], httpPort);
  const mapFile = (name: string) => readFile(join(emulator.mapsDir, name), 'utf8');

  before(async () => {
    emulator = await startEmulator({ pod });
    const [https, status] = [await reservePort(pod.address), await reservePort(pod.address)];
    httpPort = await reservePort(pod.address);
    const backends = await startBackends([0, 0]);
    [a, b] = backends.ports as [number, number];
    stopBackends = backends.stop;
    const dir = await mkdtemp(join(tmpdir(), 'gateway-api-dataplane-'));
    manifests = join(dir, 'manifests');
    await mkdir(manifests);
    const configPath = join(dir, 'config.yaml');
    const shipped = await readFile(defaultConfigPath(), 'utf8');
    await writeFile(
      configPath,
      shipped.replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`).replace('  httpsPort: 443\n', `  httpsPort: ${https}\n`).replace('  statusPort: 8404\n', `  statusPort: ${status}\n`),
    );
    await write('gateway.yaml', GATEWAY);
    await write(
      'services.yaml',
      documents(
        service('web-a', [{ port: 80, targetPort: a }]),
        slice('web-a-0', 'web-a', undefined, a),
        service('web-b', [{ port: 80, targetPort: b }]),
        slice('web-b-0', 'web-b', undefined, b),
      ),
    );
    await write(
      'routes.yaml',
      documents(
        httpRoute('first', 'first.example.com', [{ name: 'web-a' }]),
        httpRoute('wild', '*.wild.example.com', [{ name: 'web-b' }]),
        httpRoute('canary', 'canary.example.com', [
          { name: 'web-a', weight: 1 },
          { name: 'web-b', weight: 1 },
        ]),
      ),
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
    await served('first.example.com', [a]);
    await served('canary.example.com', [a, b]);
  });

  after(async () => {
    try {
      await mode?.stop();
    } finally {
      await emulator?.stop();
      await stopBackends();
    }
  });

  it('serves a wildcard hostname from host-suffix.map, for names any number of labels below its domain', async () => {
    expect(await mapFile('host-suffix.map')).to.match(/^\S*wild\.example\.com\s/m);
    await served('one.wild.example.com', [b]);
    await served('two.levels.wild.example.com', [b]);
    // The domain itself is not under its wildcard: the specification's `*.` needs one label at least.
    expect(await httpGet(pod.address, httpPort, 'wild.example.com')).to.not.match(/^200 backend/);
  });

  it('serves a new HTTPRoute to a served Service, and a new wildcard hostname, through runtime map entries: no reload', async () => {
    const before = await reloads();
    const from = log.mark();
    await write('more.yaml', documents(httpRoute('second', 'second.example.com', [{ name: 'web-b' }]), httpRoute('other-wild', '*.other.example.com', [{ name: 'web-a' }])));
    expect((await deployed(from)).result.mode).to.equal('runtime');
    await served('second.example.com', [b]);
    await served('deep.er.other.example.com', [a]);
    expect(await mapFile('host-suffix.map')).to.match(/^\S*other\.example\.com\s/m);
    expect(await reloads()).to.equal(before);
  });

  it('changes the weights of a split through the runtime: no reload', async () => {
    const before = await reloads();
    const from = log.mark();
    await write(
      'routes.yaml',
      documents(
        httpRoute('first', 'first.example.com', [{ name: 'web-a' }]),
        httpRoute('wild', '*.wild.example.com', [{ name: 'web-b' }]),
        httpRoute('canary', 'canary.example.com', [
          { name: 'web-a', weight: 0 },
          { name: 'web-b', weight: 1 },
        ]),
      ),
    );
    expect((await deployed(from)).result.mode).to.equal('runtime');
    // Weight 0 takes web-a out of the split: every request of a run goes to web-b.
    await served('canary.example.com', [b]);
    await eventually(
      async () => Promise.all(Array.from({ length: 20 }, () => httpGet(pod.address, httpPort, 'canary.example.com'))),
      (answers) => answers.every((answer) => answer === `200 backend ${b} GET /`),
      'every canary request to web-b',
    );
    expect(await reloads()).to.equal(before);
  });
});
