import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { firstValueFrom, filter, timeout } from 'rxjs';
import { startBackends } from '../../examples/backends.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { createControllerObjects, createHaproxyPod, replicaOptions } from '../support/cluster-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { kubeTool } from '../support/kube-tools.ts';
import { LineLog } from '../support/line-log.ts';
import { reservePort } from '../support/ports.ts';
import { documents, ingress, service, slice } from '../support/manifest-builders.ts';
import { Notifier } from '../support/notifier.ts';
import { httpGet, OutcomeLog, servedBy } from '../support/traffic.ts';

/**
 * The in-cluster controller end to end: two replicas of `run`'s mode
 * against the fake API server (real client-node informers, leases, events
 * and status writes over HTTP; objects created with the real kubectl), two
 * HAProxy pods standing as Data Plane API emulators with real HAProxy on
 * their pod addresses, and real HTTP through them to loopback backends.
 */

const NAMESPACE = 'haproxy';
const POD_ADDRESSES = ['127.0.0.5', '127.0.0.6'];
const ENDPOINTS = ['haproxy/haproxy-0', 'haproxy/haproxy-1'];
const LEASE_MS = 3_000;
const PUBLISHED_IP = '10.96.0.50';
/** The API server's clock (and the informers', the same) runs this much faster: the five-minute watchdog takes 2 s. */
const SERVER_TIME_SCALE = 150;

const exec = promisify(execFile);
const b64 = (text: string) => Buffer.from(text).toString('base64');
const route = (name: string, host: string, serviceName: string) => ingress(name, host, [['/', 'Prefix', serviceName, { number: 80 }]]);
const svc = (name: string, target: number) => service(name, [{ port: 80, targetPort: target }]);

type Rendered = Extract<Outcome, { type: 'rendered' }>;

describe('in a cluster: two controller replicas, a fake API server and two HAProxy pods', function () {
  this.timeout(120_000);
  let fake: FakeApiServer;
  const emulators: Emulator[] = [];
  const replicas: { mode: ClusterMode; log: OutcomeLog; output: LineLog; name: string }[] = [];
  let httpPort = 0;
  let backends: readonly number[] = [];
  let stopBackends: () => Promise<void> = async () => undefined;
  let manifests = '';
  let configText = '';

  const kubectl = async (...args: string[]) => (await exec(kubeTool('kubectl'), ['--kubeconfig', fake.kubeconfigPath, ...args])).stdout;
  const apply = async (file: string, text: string) => {
    await writeFile(join(manifests, file), text);
    return kubectl('apply', '-f', join(manifests, file));
  };
  /** The LIST requests made since the request log held `at` entries, as resource and namespace. */
  const listsSince = (at: number) =>
    fake.requests.entries
      .slice(at)
      .filter((request) => request.verb === 'list')
      .map((request) => `${request.resource} ${request.namespace ?? '*'}`);
  const served = (host: string, ports: readonly number[]) => servedBy(host, ports, POD_ADDRESSES, httpPort);
  const reloads = () => Promise.all(emulators.map(async (e) => (await e.processInfo()).reloads));
  const events = (reason: string) =>
    fake.list('events.k8s.io/v1', 'Event').filter((event) => event['reason'] === reason) as (KubeObject & { regarding: { kind: string; namespace?: string; name: string }; note: string })[];
  const startReplica = async (name: string) => {
    const output = new LineLog();
    const print = (text: string) => {
      output.write(text);
      if (process.env['DEBUG_E2E']) process.stdout.write(`${name} ${text}`);
    };
    const mode = await startClusterMode(
      replicaOptions(
        fake,
        NAMESPACE,
        name,
        { leaseMs: LEASE_MS },
        {
          publishService: { namespace: NAMESPACE, name: 'haproxy' },
          eventSeries: { burst: 10, refillMs: 1_000, updateIntervalMs: 200, seriesWindowMs: 60_000 },
          output: { out: print, err: print },
        },
      ),
    );
    const replica = { mode, log: new OutcomeLog(mode.outcomes), output, name };
    replicas.push(replica);
    return replica;
  };

  before(async () => {
    fake = await startFakeApiServer({ timeScale: SERVER_TIME_SCALE });
    manifests = await mkdtemp(join(tmpdir(), 'cluster-e2e-'));
    httpPort = await reservePort(...POD_ADDRESSES);
    const dataplanePort = await reservePort(...POD_ADDRESSES);
    for (const address of POD_ADDRESSES) {
      emulators.push(
        await startEmulator({
          pod: { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock', address },
          listen: { host: address, port: dataplanePort },
        }),
      );
    }
    ({ ports: backends, stop: stopBackends } = await startBackends([0, 0, 0, 0]));
    configText = (await readFile(defaultConfigPath(), 'utf8'))
      .replace('  httpPort: 80\n', `  httpPort: ${httpPort}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(...POD_ADDRESSES)}\n`)
      .replace('  port: 5555\n', `  port: ${dataplanePort}\n`)
      .replace('  minDeploymentInterval: 2s\n', '  minDeploymentInterval: 200ms\n')
      .replace('debounce: 500ms\n', 'debounce: 100ms\n')
      .replace('maxWait: 5s\n', 'maxWait: 1s\n');
    const { user, password } = emulators[0]!.credentials;
    createControllerObjects(fake, NAMESPACE, { config: configText, secret: 'dataplane-credentials', username: user, password });
    fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: NAMESPACE, name: 'haproxy' }, spec: { clusterIP: PUBLISHED_IP, ports: [{ port: 80 }] } });
    POD_ADDRESSES.forEach((podIP, i) => createHaproxyPod(fake, NAMESPACE, `haproxy-${i}`, podIP));
    // Replica a starts first and takes the lease; b follows.
    const a = await startReplica('controller-a');
    await firstValueFrom(a.mode.leading.pipe(filter(Boolean)));
    await startReplica('controller-b');
  });

  after(async () => {
    for (const { mode } of replicas) await mode.stop();
    for (const emulator of emulators) await emulator.stop();
    await stopBackends();
    await fake?.close();
  });

  it('routes Ingresses, Services and EndpointSlices created with kubectl through every HAProxy pod, deployed by the leader only', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const from = a.log.mark();
    await apply('web.yaml', documents(route('web', 'web.example.com', 'web'), svc('web', backends[0]!), slice('web-0', 'web', undefined, backends[0]!)));
    await a.log.deployedOn(from, ENDPOINTS);
    await served('web.example.com', [backends[0]!]);
    await a.log.settledOn(ENDPOINTS);
    // The follower watched and rendered the same, and deployed nothing.
    await b.log.waitFor(0, (o): o is Rendered => o.type === 'rendered', 'render on the follower');
    expect(b.log.since(0).filter((o) => o.type === 'deployed' || o.type === 'deployFailed')).to.deep.equal([]);
    expect(await kubectl('get', 'ingress', 'web', '-n', 'default', '-o', 'jsonpath={.metadata.name}')).to.equal('web');
  });

  it('leaves the Gateway API kinds unwatched where their CRDs are not installed, saying so once, never restarting a watch for them', () => {
    for (const { output, mode } of replicas) {
      for (const kind of ['gatewayclasses', 'gateways', 'listenersets', 'httproutes', 'grpcroutes', 'tlsroutes', 'tcproutes', 'backendtlspolicies', 'referencegrants']) {
        expect(output.lines.filter((line) => line.includes(`watchedResources.${kind}: the API server does not serve`))).to.have.length(1);
        expect(mode.restarts.get(kind) ?? 0).to.equal(0);
      }
    }
    expect(fake.requests.entries.filter((request) => request.group === 'gateway.networking.k8s.io').map((request) => request.verb)).to.deep.equal([]);
  });

  it('scales an EndpointSlice with zero reloads on every pod', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const before = await reloads();
    const from = a.log.mark();
    await apply('web-1.yaml', slice('web-1', 'web', undefined, backends[1]!));
    const deployed = await a.log.deployedOn(from, ENDPOINTS);
    expect([...deployed.values()].map((o) => o.result.mode)).to.deep.equal(['runtime', 'runtime']);
    await served('web.example.com', [backends[0]!, backends[1]!]);
    expect(await reloads()).to.deep.equal(before);
  });

  it('publishes the HAProxy Service address in the status of the Ingresses it serves', async () => {
    const status = await eventually(
      async () => fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name: 'web' })?.['status'],
      (value) => JSON.stringify(value) === JSON.stringify({ loadBalancer: { ingress: [{ ip: PUBLISHED_IP }] } }),
      'Ingress status',
    );
    expect(status).to.deep.equal({ loadBalancer: { ingress: [{ ip: PUBLISHED_IP }] } });
  });

  it('renders nothing for its own status writes: the Ingress status it wrote comes back as a watch event and is only stored', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const from = a.log.mark();
    await apply('fresh.yaml', route('fresh', 'fresh.example.com', 'web'));
    await eventually(
      async () => fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name: 'fresh' })?.['status'],
      (value) => JSON.stringify(value) === JSON.stringify({ loadBalancer: { ingress: [{ ip: PUBLISHED_IP }] } }),
      'Ingress status of fresh',
    );
    // One watch delivers an Ingress's events in order: once an Ingress applied after the status write is
    // rendered, the status write's event has reached the controller too.
    await apply('after-status.yaml', route('after-status', 'after-status.example.com', 'web'));
    const isRendered = (outcome: Outcome): outcome is Rendered => outcome.type === 'rendered';
    const last = await a.log.waitFor(from, (o): o is Rendered => isRendered(o) && o.changes.refs.some((ref) => ref.name === 'after-status'), 'render of after-status');
    const renders = a.log.since(from).filter(isRendered);
    const changes = renders.slice(0, renders.indexOf(last) + 1).flatMap((r) => r.changes.refs.map((ref) => `${ref.type} ${ref.kind} ${ref.name}`));
    expect(changes).to.deep.equal(['added ingresses fresh', 'added ingresses after-status']);
  });

  it('writes the status of what a render changed alone: of ten published Ingresses, one edited, one left out, one new', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const names = Array.from({ length: 10 }, (_, i) => `many-${i}`);
    const statusOf = (name: string) =>
      fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name })?.['status'] as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined;
    const publishes = (name: string) =>
      statusOf(name)
        ?.loadBalancer?.ingress?.map((entry) => entry.ip)
        .join(',') === PUBLISHED_IP;
    /** The Ingresses each status PATCH since the request log held `at` entries wrote, by name. */
    const writtenSince = (at: number) =>
      fake.requests.entries
        .slice(at)
        .filter((request) => request.verb === 'patch' && request.resource === 'ingresses' && request.subresource === 'status')
        .map((request) => request.path.split('/').at(-2));
    await apply('many.yaml', documents(...names.map((name) => route(name, `${name}.example.com`, 'web'))));
    await eventually(
      async () => names.filter(publishes).length,
      (count) => count === names.length,
      'status of ten Ingresses',
    );
    // An edit that keeps many-0 served: after its deployment, its status stands, and no other Ingress's is written again.
    const from = a.log.mark();
    const at = fake.requests.entries.length;
    await apply(
      'many-0.yaml',
      ingress('many-0', 'many-0.example.com', [
        ['/', 'Prefix', 'web', { number: 80 }],
        ['/more', 'Prefix', 'web', { number: 80 }],
      ]),
    );
    await a.log.deployedOn(from, ENDPOINTS);
    // many-1 edited into an Ingress the map model leaves out: the address it published is taken back.
    await apply('many-1.yaml', ingress('many-1', 'many-1.example.com', [['/x"y', 'Prefix', 'web', { number: 80 }]]));
    await eventually(
      async () => statusOf('many-1')?.loadBalancer?.ingress ?? [],
      (entries) => entries.length === 0,
      'status of many-1 cleared',
    );
    // A new one after that: applied after the clearing came back, so the controller stores it before this render.
    await apply('many-10.yaml', route('many-10', 'many-10.example.com', 'web'));
    await eventually(
      async () => publishes('many-10'),
      (done) => done,
      'status of many-10',
    );
    expect(writtenSince(at)).to.deep.equal(['many-1', 'many-10']);
    await kubectl('delete', '-f', join(manifests, 'many.yaml'));
    await kubectl('delete', 'ingress', 'many-10', '-n', 'default');
  });

  it('reports an excluded Ingress with an Event on it, naming the field', async () => {
    // The API server refuses a host that is no DNS name (as the fake does); a quote in a path it lets through.
    await apply('evil.yaml', ingress('evil', 'evil.example.com', [['/x"y', 'Prefix', 'web', { number: 80 }]]));
    const [event] = await eventually(
      async () => events('ObjectExcluded').filter((e) => e.regarding.name === 'evil'),
      (found) => found.length > 0,
      'ObjectExcluded event',
    );
    expect(event!.regarding).to.deep.include({ kind: 'Ingress', namespace: 'default', name: 'evil' });
    expect(event!.note).to.contain('spec.rules[0].http.paths[0].path');
    expect(event!['type']).to.equal('Warning');
    await kubectl('delete', 'ingress', 'evil', '-n', 'default');
    await served('web.example.com', [backends[0]!, backends[1]!]);
  });

  it('keeps its view equal to the API through a dropped watch, a stalled watch, a 410 and a 5xx on watch, under constant change', async () => {
    // A change every 50 ms throughout: Services created, relabelled and deleted.
    let written = 0;
    const changed = new Notifier();
    const churn = setInterval(() => {
      const name = `churn-${written % 7}`;
      const existing = fake.get({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name });
      if (existing === undefined)
        fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name, labels: { round: String(written) } }, spec: { ports: [{ port: 80 }] } });
      else if (written % 3 === 0) fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name });
      else fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name }, { metadata: { labels: { round: String(written) } } });
      written += 1;
      changed.changed();
    }, 50);
    const restartsBefore = replicas.map((r) => [...r.mode.restarts.values()].reduce((x, y) => x + y, 0));
    /** A fault, then what shows the controllers met it, and fifteen more changes before the next. */
    const phase = async (fault: () => void, met: () => Promise<unknown>) => {
      const from = written;
      fault();
      await met();
      await changed.until(
        () => (written >= from + 15 ? true : undefined),
        () => `${written - from} of 15 changes`,
        5_000,
      );
    };
    const requests = (verb: 'list' | 'watch', resource?: string) => fake.requests.matching({ verb, ...(resource ? { resource } : {}) }).length;
    /**
     * Waits for `count` restarts of watches (of `resource`, or any) the replicas log from now on, whose
     * line matches `reason`; checked at every change of the churn, which goes on throughout.
     */
    const restarts = (resource: string | undefined, reason: RegExp, count: number) => {
      const marks = replicas.map(({ output }) => output.mark());
      const restart = new RegExp(`watch of ${resource ?? '\\S+'} restarted: .*${reason.source}`);
      const found = () => replicas.flatMap(({ output }, i) => output.lines.slice(marks[i]).filter((line) => restart.test(line)));
      return () =>
        changed.until(
          () => (found().length >= count ? true : undefined),
          () => `${found().length} of ${count} restarts of ${resource} (${reason})`,
          10_000,
        );
    };

    try {
      // Every open watch dropped: each is opened again.
      let reopened = 0;
      await phase(
        () => {
          const dropped = fake.faults.dropWatches();
          expect(dropped).to.be.above(0);
          reopened = requests('watch') + dropped;
        },
        () => fake.requests.until({ verb: 'watch' }, reopened),
      );
      // The Service watches go silent: each replica's watchdog relists after five minutes of server time.
      const relisted = restarts('services', /nothing received/, replicas.length);
      await phase(() => fake.faults.stallWatches(true, 'services'), relisted);
      fake.faults.stallWatches(false, 'services');
      // History compacted under dropped watches: they resume from versions gone (410), and relist.
      const lists = requests('list', 'services');
      await phase(
        () => {
          fake.compactHistory();
          fake.faults.dropWatches();
        },
        () => fake.requests.until({ verb: 'list', resource: 'services' }, lists + replicas.length),
      );
      // Two watches answered with a 500: client-node gives up on those informers, which start again.
      const restarted = restarts(undefined, /Internal Server Error/, 2);
      await phase(() => {
        fake.faults.failNext(2, { verb: 'watch', status: 500 });
        fake.faults.dropWatches();
      }, restarted);
    } finally {
      clearInterval(churn);
    }

    const apiView = (kind: 'Ingress' | 'Service' | 'EndpointSlice', apiVersion: string) =>
      fake
        .list(apiVersion, kind)
        .map((o) => `${(o['metadata'] as { namespace?: string }).namespace}/${(o['metadata'] as { name: string }).name}@${(o['metadata'] as { resourceVersion: string }).resourceVersion}`)
        .sort();
    const controllerView = async (mode: ClusterMode, store: string) =>
      ((await firstValueFrom(mode.state)).stores?.get(store)?.list() ?? []).map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
    for (const { mode, name } of replicas) {
      for (const [store, kind, apiVersion] of [
        ['services', 'Service', 'v1'],
        ['ingresses', 'Ingress', 'networking.k8s.io/v1'],
        ['endpointslices', 'EndpointSlice', 'discovery.k8s.io/v1'],
      ] as const) {
        await eventually(
          () => controllerView(mode, store),
          (view) => JSON.stringify(view) === JSON.stringify(apiView(kind, apiVersion)),
          `${name}'s ${store} to equal the API's`,
          15_000,
        );
      }
    }
    // The 5xx stopped informers (client-node gives up on them) and the silent watch tripped the watchdog: both restarted.
    const restartsAfter = replicas.map((r) => [...r.mode.restarts.values()].reduce((x, y) => x + y, 0));
    restartsAfter.forEach((after, i) => expect(after).to.be.above(restartsBefore[i]!));
    expect(written).to.be.above(50);
    await served('web.example.com', [backends[0]!, backends[1]!]);
  });

  it('rejects an invalid ConfigMap edit with an Event while traffic keeps flowing, and applies a valid one', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    let from = a.log.mark();
    fake.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' }, { data: { 'config.yaml': configText.replace('debounce: 100ms', 'debounce: soon') } });
    const rejected = await a.log.waitFor(from, (o): o is Extract<Outcome, { type: 'configRejected' }> => o.type === 'configRejected', 'rejection');
    expect(rejected.errors.join('\n')).to.match(/ConfigMap haproxy-config: debounce: /);
    const [event] = await eventually(
      async () => events('ConfigRejected'),
      (found) => found.length > 0,
      'ConfigRejected event',
    );
    expect(event!.regarding).to.deep.include({ kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' });
    await served('web.example.com', [backends[0]!, backends[1]!]);

    from = a.log.mark();
    const editedAt = fake.requests.entries.length;
    fake.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' },
      { data: { 'config.yaml': configText.replace('timeout client 30s', 'timeout client 31s') } },
    );
    await a.log.deployedOn(from, ENDPOINTS);
    for (const emulator of emulators) expect(await readFile(emulator.configFile, 'utf8')).to.contain('timeout client 31s');
    await served('web.example.com', [backends[0]!, backends[1]!]);
    // A template edit keeps every watch, the HAProxy pods' included: neither replica listed anything again.
    expect(listsSince(editedAt)).to.deep.equal([]);
  });

  it('lists only the resource a ConfigMap edit adds to the watched resources, and keeps watching the others', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const from = a.log.mark();
    const editedAt = fake.requests.entries.length;
    const listed = fake.requests.matching({ verb: 'list' }).length;
    const added = configText.replace('timeout client 30s', 'timeout client 32s').replace(/^ignoreFields:/m, '  allconfigmaps:\n    apiVersion: v1\n    kind: ConfigMap\n\nignoreFields:');
    expect(added).to.contain('allconfigmaps:');
    fake.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' }, { data: { 'config.yaml': added } });
    // Each replica lists the new resource before it renders; only the leader deploys.
    await a.log.deployedOn(from, ENDPOINTS);
    await fake.requests.until({ verb: 'list' }, listed + replicas.length);
    expect(listsSince(editedAt)).to.deep.equal(replicas.map(() => 'configmaps *'));
    await served('web.example.com', [backends[0]!, backends[1]!]);
  });

  it('takes a template from a Secret (as Flux syncs it) and says so with an Event on that Secret', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const page = 'HTTP/1.1 404 Not Found\nContent-Type: text/plain\nConnection: close\n\nsynced from git\n';
    fake.create({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: NAMESPACE, name: 'flux-pages' }, data: { '404.http': b64(page) } });
    const referencing = configText.replace(/    404\.http: \|\n(?:      .*\n|\n)*?(?=    503\.http)/, '    404.http:\n      fromSecret: { name: flux-pages, key: 404.http }\n');
    expect(referencing).to.contain('fromSecret');
    const from = a.log.mark();
    fake.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, name: 'haproxy-config' }, { data: { 'config.yaml': referencing } });
    await a.log.deployedOn(from, ENDPOINTS);
    expect(await httpGet(POD_ADDRESSES[0]!, httpPort, 'nowhere.example.com')).to.equal('404 synced from git');
    const accepted = await eventually(
      async () => events('ConfigAccepted').filter((e) => e.regarding.name === 'flux-pages'),
      (found) => found.length > 0,
      'ConfigAccepted on the Secret',
    );
    expect(accepted[0]!.regarding.kind).to.equal('Secret');
  });

  it('drops a HAProxy pod that goes away from the fleet, and deploys in full to one that comes back', async () => {
    const [a] = replicas as [(typeof replicas)[0]];
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: NAMESPACE, name: 'haproxy-1' };
    fake.delete(podRef);
    let from = a.log.mark();
    await apply('web-2.yaml', slice('web-2', 'web', undefined, backends[2]!));
    await a.log.deployedOn(from, [ENDPOINTS[0]!]);
    await servedBy('web.example.com', [backends[0]!, backends[1]!, backends[2]!], [POD_ADDRESSES[0]!], httpPort);
    expect(a.log.since(from).filter((o) => 'endpoint' in o && o.endpoint === ENDPOINTS[1])).to.deep.equal([]);

    from = a.log.mark();
    createHaproxyPod(fake, NAMESPACE, 'haproxy-1', POD_ADDRESSES[1]!);
    const [deployed] = (await a.log.deployedOn(from, [ENDPOINTS[1]!])).values();
    expect(deployed!.reason).to.equal('discovered');
    await served('web.example.com', [backends[0]!, backends[1]!, backends[2]!]);
    await kubectl('delete', 'endpointslice', 'web-2', '-n', 'default');
    await served('web.example.com', [backends[0]!, backends[1]!]);
  });

  it('hands over to the other replica within the lease duration, and the new leader deploys without rendering again', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const from = b.log.mark();
    // Within the lease duration of a's stop: the wait starts with it.
    const led = firstValueFrom(b.mode.leading.pipe(filter(Boolean), timeout({ first: LEASE_MS })));
    await a.mode.stop();
    replicas.shift();
    await led;
    const deployed = await b.log.deployedOn(from, ENDPOINTS);
    expect([...deployed.values()].map((o) => o.reason)).to.deep.equal(['discovered', 'discovered']);
    // What it deploys is what it had rendered while following: no render between the handover and the deployments.
    expect(b.log.since(from).filter((o) => o.type === 'rendered')).to.deep.equal([]);
    // And it deploys changes from now on.
    const next = b.log.mark();
    await apply('web-2.yaml', slice('web-2', 'web', undefined, backends[2]!));
    await b.log.deployedOn(next, ENDPOINTS);
    await served('web.example.com', [backends[0]!, backends[1]!, backends[2]!]);
  });
});
