import { expect } from 'chai';
import { kubeConnectionFromFile } from '../../lib/kube/kube-connection.ts';
import { readFile } from 'node:fs/promises';
import { firstValueFrom, filter, map, race, timeout } from 'rxjs';
import { EventRecorder } from '../../lib/kube/event-recorder.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import { gateway, gatewayClass, httpListener, httpRoute } from '../lib/gateway/fixtures.ts';
import type { Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import type { ApiServerLink, AuditEvent } from '../support/kube-control-plane.ts';
import { LineLog } from '../support/line-log.ts';
import { documents, ingress, service } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { chartReplicaOptions, configOnPorts, controllerObjects, createHaproxyPod, haproxyAt, startChartCluster, type ChartCluster } from '../support/real-cluster.ts';
import { httpGet, OutcomeLog } from '../support/traffic.ts';

/**
 * Cluster mode against a real kube-apiserver and etcd (spec/support/kube-control-plane.ts):
 * the chart's RBAC applied with kubectl and the replicas authenticated as its
 * ServiceAccount, so a permission the chart lacks fails here; the Gateway API
 * CRDs as shipped, with their CEL validation; two replicas and the real Lease;
 * two HAProxy pods standing as Data Plane API emulators with real HAProxy on
 * their pod addresses, and real HTTP to them. No request reaches a backend:
 * the real API server refuses loopback addresses in EndpointSlices, so the
 * Services here have none (spec/e2e/cluster-mode.spec.ts routes to backends
 * through the fake API server, which lets loopback endpoints through).
 */

const POD_ADDRESSES = ['127.0.0.21', '127.0.0.22'];
const V1 = 'gateway.networking.k8s.io/v1';

type Rendered = Extract<Outcome, { type: 'rendered' }>;
type Condition = { type: string; status: string; reason: string; observedGeneration?: number };
type StoredEvent = { metadata: { namespace: string }; regarding: { kind: string; namespace?: string; name: string }; reason: string; note: string; type: string };

describe('cluster mode against a real kube-apiserver: the chart RBAC, two replicas, two HAProxy pods', function () {
  this.timeout(180_000);
  let cluster: ChartCluster;
  const emulators: Emulator[] = [];
  const replicas: { mode: ClusterMode; log: OutcomeLog; output: LineLog; name: string; link: ApiServerLink }[] = [];
  let leaseDurationMs = 0;
  let config = '';
  let endpoints: string[] = [];
  let httpPort = 0;

  /**
   * Until every HAProxy pod routes `host` to its backend, which has no server: the API server refuses
   * loopback endpoint addresses (ValidateEndpointIP), and HAProxy may reach nothing else here, so a routed
   * host answers 503 where an unknown one answers 404.
   */
  const routed = async (host: string, yes = true) => {
    for (const address of POD_ADDRESSES) {
      await eventually(
        () => httpGet(address, httpPort, host),
        (answer) => (yes ? /^503 / : /^404 /).test(answer),
        `${address}: ${host} ${yes ? 'routed' : 'unknown'}`,
        30_000,
      );
    }
  };
  const serviceAccountUser = () => `system:serviceaccount:${cluster.serviceAccount.namespace}:${cluster.serviceAccount.name}`;
  const kubectl = (...args: string[]) => cluster.plane.kubectlOk(...args);
  const route = (name: string, host: string, serviceName: string) => ingress(name, host, [['/', 'Prefix', serviceName, { number: 80 }]]);
  const apply = async (file: string, text: string) => {
    const result = await cluster.apply(file, text);
    if (result.code !== 0) throw new Error(`kubectl apply ${file} failed:\n${result.stderr}`);
    return result.stdout;
  };
  const events = async (namespace: string) => (JSON.parse(await kubectl('get', 'events.v1.events.k8s.io', '-n', namespace, '-o', 'json')) as { items: StoredEvent[] }).items;
  /** The replica holding the Lease, once one does: the API server's restart can move it, or leave it free a moment. */
  const leader = () =>
    firstValueFrom(
      race(
        replicas.map((replica) =>
          replica.mode.leading.pipe(
            filter(Boolean),
            map(() => replica),
          ),
        ),
      ).pipe(timeout(30_000)),
    );
  const startReplica = async (name: string) => {
    const output = new LineLog();
    const print = (text: string) => {
      output.write(text);
      if (process.env['DEBUG_E2E']) process.stdout.write(`${name} ${text}`);
    };
    // Each replica reaches the API server through a link of its own, which a spec can cut.
    const link = await cluster.plane.link(cluster.serviceAccount);
    const kubeConnection = kubeConnectionFromFile(link.kubeconfig);
    const options = await chartReplicaOptions(cluster, name, { kubeConnection, webhook: undefined, output: { out: print, err: print } });
    leaseDurationMs = options.lease!.durationMs;
    const mode = await startClusterMode(options);
    const replica = { mode, log: new OutcomeLog(mode.outcomes), output, name, link };
    replicas.push(replica);
    return replica;
  };

  before(async function () {
    // A cold cache builds kube-apiserver first (minutes); .ci/run builds it before the suite.
    this.timeout(45 * 60_000);
    cluster = await startChartCluster({}, { gatewayApiCrds: true, extraKinds: ['Service'], namespaces: ['infra'] });
    const { apiserver, etcd, gatewayApiCrds } = cluster.plane.peers;
    process.stdout.write(`      kube-apiserver ${apiserver.version}, etcd ${etcd.version}, Gateway API CRDs ${gatewayApiCrds.version}\n`);
    endpoints = POD_ADDRESSES.map((_, i) => `${cluster.namespace}/haproxy-${i}`);
    httpPort = await reservePort(...POD_ADDRESSES);
    const dataplanePort = await reservePort(...POD_ADDRESSES);
    for (const address of POD_ADDRESSES) emulators.push(await haproxyAt(address, dataplanePort));
    config = configOnPorts(cluster.chart, {
      '  httpPort: 80\n': `  httpPort: ${httpPort}\n`,
      '  statusPort: 8404\n': `  statusPort: ${await reservePort(...POD_ADDRESSES)}\n`,
      '  port: 5555\n': `  port: ${dataplanePort}\n`,
      '  minDeploymentInterval: 2s\n': '  minDeploymentInterval: 200ms\n',
      'debounce: 500ms\n': 'debounce: 100ms\n',
    });
    await apply('controller.yaml', controllerObjects(cluster, config, emulators[0]!.credentials));
    for (const [i, address] of POD_ADDRESSES.entries()) await createHaproxyPod(cluster, `haproxy-${i}`, address);
    const a = await startReplica('controller-a');
    await firstValueFrom(a.mode.leading.pipe(filter(Boolean)));
    await startReplica('controller-b');
  });

  after(async () => {
    for (const { mode } of replicas) await mode.stop();
    for (const emulator of emulators) await emulator.stop();
    await cluster?.stop();
  });

  it('routes an Ingress and Service applied with kubectl on every HAProxy pod, deployed by the leader only', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const from = a.log.mark();
    await routed('web.example.com', false);
    await apply('web.yaml', documents(route('web', 'web.example.com', 'web'), service('web', [{ port: 80, targetPort: 8080 }])));
    await a.log.deployedOn(from, endpoints);
    await routed('web.example.com');
    await b.log.waitFor(0, (o): o is Rendered => o.type === 'rendered', 'render on the follower');
    expect(b.log.since(0).filter((o) => o.type === 'deployed' || o.type === 'deployFailed')).to.deep.equal([]);
  });

  it("publishes the HAProxy Service's cluster IP, allocated by the API server, in the Ingress status", async () => {
    const clusterIP = (await cluster.plane.read('v1', 'Service', 'edge-haproxy-template-ic-haproxy', cluster.namespace))?.['spec'] as { clusterIP: string };
    expect(clusterIP.clusterIP).to.match(/^10\.0\.0\.\d+$/);
    const status = await eventually(
      async () => (await cluster.plane.read('networking.k8s.io/v1', 'Ingress', 'web', 'default'))?.['status'],
      (value) => JSON.stringify(value) === JSON.stringify({ loadBalancer: { ingress: [{ ip: clusterIP.clusterIP }] } }),
      'Ingress status',
      15_000,
    );
    expect(status).to.deep.equal({ loadBalancer: { ingress: [{ ip: clusterIP.clusterIP }] } });
  });

  it('reports an excluded Ingress with an Event in its namespace, naming the field, and takes back the address it published', async () => {
    const addresses = async () =>
      ((await cluster.plane.read('networking.k8s.io/v1', 'Ingress', 'evil', 'default'))?.['status'] as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer?.ingress ?? [];
    // Served first: it publishes the Service's address.
    await apply('evil.yaml', ingress('evil', 'evil.example.com', [['/x', 'Prefix', 'web', { number: 80 }]]));
    await eventually(addresses, (published) => published.length === 1, 'status of evil while served', 15_000);
    // The API server refuses a host that is no DNS name; a quote in a path it lets through.
    await apply('evil.yaml', ingress('evil', 'evil.example.com', [['/x"y', 'Prefix', 'web', { number: 80 }]]));
    const [event] = await eventually(
      async () => (await events('default')).filter((e) => e.reason === 'ObjectExcluded' && e.regarding.name === 'evil'),
      (found) => found.length > 0,
      'ObjectExcluded event',
      15_000,
    );
    expect(event!.regarding).to.deep.include({ kind: 'Ingress', namespace: 'default', name: 'evil' });
    expect(event!.note).to.contain('spec.rules[0].http.paths[0].path');
    expect(event!.type).to.equal('Warning');
    expect(await eventually(addresses, (published) => published.length === 0, 'status of evil cleared', 15_000)).to.deep.equal([]);
    await kubectl('delete', 'ingress', 'evil', '-n', 'default');
  });

  it("files Events about a cluster-scoped object in default, as the chart's ServiceAccount", async () => {
    const kubeConnection = kubeConnectionFromFile(cluster.plane.kubeconfigFor(cluster.serviceAccount));
    const recorder = new EventRecorder(kubeConnection, { controller: 'haproxy-template-ic', instance: 'controller-spec' });
    const record = {
      regarding: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', namespace: undefined, name: 'haproxy' },
      type: 'Warning' as const,
      reason: 'ObjectExcluded',
      action: 'Render',
      note: 'left out of the HAProxy configuration: a cluster-scoped spec object',
    };
    expect(await recorder.record(record)).to.equal('created');
    const written = (await events('default')).filter((e) => e.regarding.kind === 'IngressClass');
    expect(written.map((e) => [e.metadata.namespace, e.regarding.name, e.note])).to.deep.equal([['default', 'haproxy', record.note]]);
  });

  it('accepts its GatewayClass and programs a Gateway with observedGeneration, following a spec change to the next generation', async () => {
    await apply(
      'gateway.yaml',
      documents(JSON.stringify(gatewayClass()), JSON.stringify(gateway('gw', [httpListener('http', { hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } })]))),
    );
    await apply(
      'route.yaml',
      JSON.stringify(httpRoute('web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules: [{ backendRefs: [{ name: 'web', namespace: 'default', port: 80 }] }] })),
    );
    const read = async (kind: string, name: string, namespace?: string) => {
      const object = await cluster.plane.read(V1, kind, name, namespace);
      return {
        generation: (object?.metadata as { generation?: number } | undefined)?.generation,
        status: object?.['status'] as { conditions?: Condition[]; parents?: { conditions?: Condition[] }[] } | undefined,
      };
    };
    const current = (found: { generation?: number; status?: { conditions?: Condition[] } }, type: string) =>
      (found.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True' && c.observedGeneration === found.generation);
    await eventually(
      () => read('GatewayClass', 'haproxy'),
      (found) => current(found, 'Accepted'),
      'GatewayClass accepted',
      20_000,
    );
    await eventually(
      () => read('Gateway', 'gw', 'infra'),
      (found) => current(found, 'Programmed') && current(found, 'Accepted'),
      'Gateway programmed',
      20_000,
    );
    // The route refers across namespaces without a ReferenceGrant: accepted, its reference unresolved.
    const httpRouteStatus = await eventually(
      () => read('HTTPRoute', 'web', 'infra'),
      (found) => (found.status?.parents?.[0]?.conditions ?? []).some((c) => c.type === 'ResolvedRefs' && c.reason === 'RefNotPermitted' && c.observedGeneration === found.generation),
      'HTTPRoute status',
      20_000,
    );
    expect(httpRouteStatus.generation).to.equal(1);
    // A spec change: the API server moves the generation, and the controller's conditions follow it.
    await kubectl(
      'patch',
      'gateway',
      'gw',
      '-n',
      'infra',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*.example.org', allowedRoutes: { namespaces: { from: 'All' } } }] } }),
    );
    const patched = await eventually(
      () => read('Gateway', 'gw', 'infra'),
      (found) => found.generation === 2 && current(found, 'Programmed'),
      'Gateway at generation 2',
      20_000,
    );
    expect(patched.status!.conditions!.map((c) => [c.type, c.observedGeneration])).to.deep.equal([
      ['Accepted', 2],
      ['Programmed', 2],
    ]);
  });

  it('writes GRPCRoute and TLSRoute status the real CRDs accept: accepted by their listeners, the reference to another namespace unresolved', async () => {
    const listeners = [
      httpListener('grpc', { hostname: 'grpc.example.net', allowedRoutes: { namespaces: { from: 'All' } } }),
      { name: 'tls', port: 8443, protocol: 'TLS', hostname: '*.example.net', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'All' } } },
    ];
    await apply('kinds-gateway.yaml', documents(JSON.stringify(gatewayClass()), JSON.stringify(gateway('kinds', listeners))));
    const routeOf = (kind: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: V1, kind, metadata: { name, namespace: 'infra' }, spec });
    const backendRefs = [{ name: 'web', namespace: 'default', port: 80 }];
    await apply(
      'kinds-routes.yaml',
      documents(
        JSON.stringify(
          routeOf('GRPCRoute', 'cart', {
            parentRefs: [{ name: 'kinds', sectionName: 'grpc' }],
            hostnames: ['grpc.example.net'],
            rules: [{ matches: [{ method: { service: 'shop.Cart' } }], backendRefs }],
          }),
        ),
        JSON.stringify(routeOf('TLSRoute', 'secure', { parentRefs: [{ name: 'kinds', sectionName: 'tls' }], hostnames: ['secure.example.net'], rules: [{ backendRefs }] })),
      ),
    );
    for (const kind of ['GRPCRoute', 'TLSRoute']) {
      const name = kind === 'GRPCRoute' ? 'cart' : 'secure';
      const found = await eventually(
        async () => {
          const object = await cluster.plane.read(V1, kind, name, 'infra');
          const generation = (object?.metadata as { generation?: number } | undefined)?.generation;
          const parents = (object?.['status'] as { parents?: { controllerName?: string; conditions?: Condition[] }[] } | undefined)?.parents ?? [];
          return { generation, parent: parents[0] };
        },
        ({ generation, parent }) => (parent?.conditions ?? []).some((c) => c.type === 'ResolvedRefs' && c.observedGeneration === generation),
        `${kind} status`,
        20_000,
      );
      expect(found.parent!.controllerName, kind).to.equal('haproxy-template-ic.io/gateway-controller');
      expect(
        found.parent!.conditions!.map((c) => [c.type, c.status, c.reason]),
        kind,
      ).to.deep.equal([
        ['Accepted', 'True', 'Accepted'],
        ['ResolvedRefs', 'False', 'RefNotPermitted'],
      ]);
    }
  });

  it("refuses, by the CRD's own CEL rules, a Gateway the Gateway API forbids, before the controller ever sees it", async () => {
    const tlsOnHttp = httpListener('http', { tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] } });
    const refused = await cluster.apply('bad-gateway.yaml', JSON.stringify(gateway('bad', [tlsOnHttp])));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include("The Gateway \"bad\" is invalid: spec.listeners: Invalid value: \"array\": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']");
  });

  it('rejects an invalid ConfigMap edit with an Event on the ConfigMap while HAProxy keeps its routes, and applies a valid one', async () => {
    const a = await leader();
    const configMap = { kind: 'ConfigMap', namespace: cluster.namespace, name: String(cluster.env['CONFIGMAP_NAME']) };
    const edit = (text: string) => kubectl('patch', 'configmap', configMap.name, '-n', configMap.namespace, '--type=merge', '-p', JSON.stringify({ data: { 'config.yaml': text } }));
    const from = a.log.mark();
    await edit(config.replace('debounce: 100ms', 'debounce: soon'));
    const rejected = await a.log.waitFor(from, (o): o is Extract<Outcome, { type: 'configRejected' }> => o.type === 'configRejected', 'rejection');
    expect(rejected.errors.join('\n')).to.match(/ConfigMap haproxy-config: debounce: /);
    const [event] = await eventually(
      async () => (await events(cluster.namespace)).filter((e) => e.reason === 'ConfigRejected'),
      (found) => found.length > 0,
      'ConfigRejected event',
      15_000,
    );
    expect(event!.regarding).to.deep.include(configMap);
    await routed('web.example.com');
    await edit(config.replace('timeout client 30s', 'timeout client 31s'));
    // Waited for on the pods' files: a deployment logged after the edit may still be of the configuration before it.
    for (const emulator of emulators) {
      await eventually(
        () => readFile(emulator.configFile, 'utf8'),
        (text) => text.includes('timeout client 31s'),
        `${emulator.configFile} to hold the edit`,
        30_000,
      );
    }
    await routed('web.example.com');
  });

  it('takes a template from a Secret of its namespace (as Flux syncs it) and says so with an Event on that Secret', async () => {
    await leader();
    const page = 'HTTP/1.1 404 Not Found\nContent-Type: text/plain\nConnection: close\n\nsynced from git\n';
    await apply('flux-pages.yaml', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: cluster.namespace, name: 'flux-pages' }, stringData: { '404.http': page } }));
    const referencing = config.replace(/    404\.http: \|\n(?:      .*\n|\n)*?(?=    503\.http)/, '    404.http:\n      fromSecret: { name: flux-pages, key: 404.http }\n');
    expect(referencing).to.contain('fromSecret');
    await kubectl('patch', 'configmap', String(cluster.env['CONFIGMAP_NAME']), '-n', cluster.namespace, '--type=merge', '-p', JSON.stringify({ data: { 'config.yaml': referencing } }));
    // Waited for on the pods' answers: a deployment logged after the edit may still be of a render before the Secret's page was read.
    for (const address of POD_ADDRESSES) {
      await eventually(
        () => httpGet(address, httpPort, 'nowhere.example.com'),
        (answer) => answer === '404 synced from git',
        `${address} to answer with the Secret's page`,
        30_000,
      );
    }
    const [accepted] = await eventually(
      async () => (await events(cluster.namespace)).filter((e) => e.reason === 'ConfigAccepted' && e.regarding.name === 'flux-pages'),
      (found) => found.length > 0,
      'ConfigAccepted on the Secret',
      15_000,
    );
    expect(accepted!.regarding.kind).to.equal('Secret');
  });

  it('drops a HAProxy pod deleted from the fleet, and deploys in full to one created again', async () => {
    const a = await leader();
    // Unscheduled, the Pod goes at once: no kubelet has to confirm its end (its grace period is 0).
    await kubectl('delete', 'pod', 'haproxy-1', '-n', cluster.namespace);
    let from = a.log.mark();
    await apply('four.yaml', route('four', 'four.example.com', 'web'));
    await a.log.deployedOn(from, [endpoints[0]!]);
    expect(a.log.since(from).filter((o) => 'endpoint' in o && o.endpoint === endpoints[1])).to.deep.equal([]);
    from = a.log.mark();
    await createHaproxyPod(cluster, 'haproxy-1', POD_ADDRESSES[1]!);
    const [deployed] = (await a.log.deployedOn(from, [endpoints[1]!])).values();
    expect(deployed!.reason).to.equal('discovered');
    await routed('four.example.com');
  });

  it("was refused nothing by the chart's RBAC while the API server ran: no request of its ServiceAccount answered 403", async () => {
    const requests = (await cluster.plane.audit()).filter((event) => event.user.username === serviceAccountUser());
    expect(requests.length).to.be.above(20);
    const forbidden = requests.filter((event) => event.responseStatus?.code === 403);
    expect(forbidden.map((event) => `${event.verb} ${event.objectRef?.apiGroup ?? ''}/${event.objectRef?.resource ?? ''}/${event.objectRef?.subresource ?? ''}`)).to.deep.equal([]);
  });

  it('keeps its view equal to the API through an API server restart whose etcd history was compacted meanwhile, retrying what the restarted server denied at first', async () => {
    // Whole milliseconds, as the audit's timestamps are read: nothing of this case is received before it.
    const startedAt = Date.now() - 1;
    const listsBefore = (await cluster.plane.audit()).filter((event) => event.verb === 'list' && event.user.username.startsWith('system:serviceaccount:')).length;
    // Changes the informers see, then the server goes away, etcd moves on and forgets the history the watches would resume from.
    await apply('one.yaml', route('one', 'one.example.com', 'web'));
    await routed('one.example.com');
    let compactedAt = 0;
    await cluster.plane.restartApiServer(async () => {
      compactedAt = await cluster.plane.compactEtcd();
    });
    expect(compactedAt).to.be.above(0);
    // Changes made after the restart reach HAProxy, so the informers live on (the Lease may have moved meanwhile).
    await apply('two.yaml', route('two', 'two.example.com', 'web'));
    await routed('two.example.com');
    // Their watches resumed from versions that neither the new server's watch cache nor the compacted etcd holds: they listed again.
    const relisted = await eventually(
      async () => (await cluster.plane.audit()).filter((event) => event.verb === 'list' && event.user.username.startsWith('system:serviceaccount:')).length,
      (lists) => lists >= listsBefore + replicas.length * 3,
      'relists after the restart',
      30_000,
    );
    expect(relisted).to.be.at.least(listsBefore + replicas.length * 3);
    const apiView = async (resource: string) =>
      (JSON.parse(await kubectl('get', resource, '-A', '-o', 'json')) as { items: { metadata: { namespace: string; name: string; resourceVersion: string } }[] }).items
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
    const controllerView = async (mode: ClusterMode, store: string) =>
      ((await firstValueFrom(mode.state)).stores?.get(store)?.list() ?? []).map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
    // A restarted API server serves before its RBAC informers have synced and denies what it allows a moment later
    // (seen here at every restart); every request so refused is made again, and allowed. A watch allowed again is
    // audited as started long before it completes, and an informer retries after a backoff: wait for it.
    const request = (event: AuditEvent) =>
      `${event.verb} ${event.objectRef?.apiGroup ?? ''}/${event.objectRef?.resource ?? ''}/${event.objectRef?.namespace ?? ''}/${event.objectRef?.name ?? ''}`;
    const neverAllowedAgain = async () => {
      const since = (await cluster.plane.audit(['ResponseStarted', 'ResponseComplete'])).filter(
        (event) => event.user.username === serviceAccountUser() && Date.parse(event.requestReceivedTimestamp) >= startedAt,
      );
      const received = (event: AuditEvent) => Date.parse(event.requestReceivedTimestamp);
      return since
        .filter((event) => event.stage === 'ResponseComplete' && event.responseStatus?.code === 403)
        .filter((event) => !since.some((later) => request(later) === request(event) && later.responseStatus?.code !== 403 && received(later) >= received(event)))
        .map(request);
    };
    expect(await eventually(neverAllowedAgain, (left) => left.length === 0, 'every refused request made again and allowed', 60_000)).to.deep.equal([]);
    for (const { mode, name } of replicas) {
      for (const [store, resource] of [
        ['ingresses', 'ingresses.networking.k8s.io'],
        ['services', 'services'],
      ] as const) {
        const expected = await apiView(resource);
        await eventually(
          () => controllerView(mode, store),
          (view) => JSON.stringify(view) === JSON.stringify(expected),
          `${name}'s ${store} to equal the API's`,
          15_000,
        );
      }
    }
  });

  it('hands over the Lease once it expires when the leader is cut off from the API server, which steps down first', async () => {
    const a = await leader();
    const b = replicas.find((replica) => replica !== a)!;
    const from = b.log.mark();
    const led = firstValueFrom(b.mode.leading.pipe(filter(Boolean)));
    const cutAt = Date.now();
    a.link.cut();
    await led;
    const failoverMs = Date.now() - cutAt;
    process.stdout.write(`      leader failover after a partition on kube-apiserver ${cluster.plane.peers.apiserver.version}: ${failoverMs} ms (lease duration ${leaseDurationMs} ms)\n`);
    // Not before the lease ran out: its last renewal was at most a retry period (2 s) before the cut.
    expect(failoverMs).to.be.at.least(leaseDurationMs - 2_000);
    // The cut-off leader stopped leading at its renew deadline, before the lease let another take over.
    expect(await firstValueFrom(a.mode.leading)).to.equal(false);
    const restored = a.log.mark();
    a.link.restore();
    await b.log.deployedOn(from, endpoints, 60_000);
    const next = b.log.mark();
    await apply('three.yaml', route('three', 'three.example.com', 'web'));
    await b.log.deployedOn(next, endpoints, 60_000);
    await routed('three.example.com');
    // Back in touch, the old leader follows: it deploys nothing.
    expect(a.log.since(restored).filter((o) => o.type === 'deployed')).to.deep.equal([]);
    expect(await firstValueFrom(a.mode.leading)).to.equal(false);
  });

  it('hands over the Lease to the other replica when the leader stops, and the new leader deploys', async () => {
    const a = await leader();
    const b = replicas.find((replica) => replica !== a)!;
    const from = b.log.mark();
    const led = firstValueFrom(b.mode.leading.pipe(filter(Boolean)));
    const stopped = Date.now();
    await a.mode.stop();
    replicas.splice(replicas.indexOf(a), 1);
    await led;
    const failoverMs = Date.now() - stopped;
    process.stdout.write(`      leader failover on a stop (the Lease released) on kube-apiserver ${cluster.plane.peers.apiserver.version}: ${failoverMs} ms\n`);
    const lease = await cluster.plane.read('coordination.k8s.io/v1', 'Lease', cluster.env['LEASE_NAME']!, cluster.namespace);
    expect((lease?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity).to.equal(b.name);
    await b.log.deployedOn(from, endpoints, 60_000);
    // And it deploys changes from now on.
    const next = b.log.mark();
    await kubectl('delete', 'ingress', 'two', '-n', 'default');
    await b.log.deployedOn(next, endpoints, 60_000);
    await routed('two.example.com', false);
  });
});
