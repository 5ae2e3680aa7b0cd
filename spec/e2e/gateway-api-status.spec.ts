import { expect } from 'chai';
import { firstValueFrom, filter } from 'rxjs';
import { SUPPORTED_FEATURES } from '../../lib/gateway/features.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import { haproxyPodWithShippedConfig, replicaOptions } from '../support/cluster-fixtures.ts';
import type { Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { GATEWAY_API_TYPES } from '../support/fake-apiserver/gateway-api-types.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { OutcomeLog } from '../support/traffic.ts';
import { gateway, gatewayClass, grpcRoute, httpListener, httpRoute, listenerSet, referenceGrant, service } from '../lib/gateway/fixtures.ts';

/**
 * The controller in cluster mode where the Gateway API CRDs are installed:
 * it watches the kinds (the shipped configuration marks them optional, and
 * discovery finds them), and its leader writes their status through the
 * status subresource as objects come and go, with Programmed following the
 * deployment to a HAProxy pod (a Data Plane API emulator with real HAProxy).
 * HTTPRoutes are not routed by the shipped template yet: this is status only.
 */

const NAMESPACE = 'haproxy';
const POD_ADDRESS = '127.0.0.7';
const PUBLISHED_IP = '10.96.0.60';
const V1 = 'gateway.networking.k8s.io/v1';

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
}

describe('Gateway API status in a cluster with its CRDs', function () {
  this.timeout(60_000);
  let fake: FakeApiServer;
  let emulator: Emulator;
  let mode: ClusterMode;
  let log: OutcomeLog;

  const conditions = (value: unknown) => ((value as { conditions?: Condition[] } | undefined)?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
  const routeConditions = (name: string, namespace = 'infra', kind = 'HTTPRoute') => {
    const parents = (fake.get({ apiVersion: V1, kind, namespace, name })?.['status'] as { parents?: unknown[] } | undefined)?.parents ?? [];
    return conditions(parents[0]);
  };
  const until = <T>(read: () => T, expected: T, what: string) =>
    eventually(
      async () => read(),
      (value) => JSON.stringify(value) === JSON.stringify(expected),
      what,
    );

  before(async () => {
    fake = await startFakeApiServer({ timeScale: 60, customResources: GATEWAY_API_TYPES });
    emulator = await haproxyPodWithShippedConfig(fake, NAMESPACE, POD_ADDRESS);
    fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: NAMESPACE, name: 'haproxy' }, spec: { clusterIP: PUBLISHED_IP, ports: [{ port: 80 }] } });
    for (const name of ['infra', 'apps', 'team']) fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    fake.create(gatewayClass());
    fake.create(gateway('gw', [httpListener('http', { hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } })]));
    fake.create(service('infra', 'web'));
    mode = await startClusterMode(replicaOptions(fake, NAMESPACE, 'controller-a', { leaseMs: 3_000 }, { lease: undefined, publishService: { namespace: NAMESPACE, name: 'haproxy' } }));
    log = new OutcomeLog(mode.outcomes);
    await firstValueFrom(mode.outcomes.pipe(filter((outcome) => outcome.type === 'deployed')));
  });

  after(async () => {
    await mode?.stop();
    await emulator?.stop();
    await fake?.close();
  });

  it('accepts its GatewayClass and programs the Gateway once deployed, with the published address', async () => {
    await until(() => conditions(fake.get({ apiVersion: V1, kind: 'GatewayClass', name: 'haproxy' })?.['status']), ['Accepted=True/Accepted'], 'GatewayClass status');
    const classStatus = fake.get({ apiVersion: V1, kind: 'GatewayClass', name: 'haproxy' })?.['status'] as { supportedFeatures?: { name: string }[] };
    expect(classStatus.supportedFeatures?.map((feature) => feature.name)).to.deep.equal(SUPPORTED_FEATURES);
    const gw = await eventually(
      async () => fake.get({ apiVersion: V1, kind: 'Gateway', namespace: 'infra', name: 'gw' })?.['status'] as { addresses?: unknown; conditions?: Condition[] } | undefined,
      (status) => conditions(status).includes('Programmed=True/Programmed'),
      'Gateway programmed',
    );
    expect(conditions(gw)).to.deep.equal(['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    expect(gw!.addresses).to.deep.equal([{ type: 'IPAddress', value: PUBLISHED_IP }]);
  });

  it('follows routes as they come: accepted, refused by hostname, and unresolved until the ReferenceGrant', async () => {
    fake.create(httpRoute('web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    fake.create(httpRoute('elsewhere', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.org'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    fake.create(httpRoute('cross', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'web', namespace: 'infra', port: 8080 }] }] }, 'apps'));
    await until(() => routeConditions('web'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'], 'route web');
    await until(() => routeConditions('elsewhere'), ['Accepted=False/NoMatchingListenerHostname', 'ResolvedRefs=True/ResolvedRefs'], 'route elsewhere');
    await until(() => routeConditions('cross', 'apps'), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted'], 'route cross');
    fake.create(referenceGrant('infra', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }]));
    await until(() => routeConditions('cross', 'apps'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'], 'route cross granted');
    // web and cross attach to the listener; elsewhere does not.
    const attached = () =>
      (fake.get({ apiVersion: V1, kind: 'Gateway', namespace: 'infra', name: 'gw' })?.['status'] as { listeners?: { attachedRoutes: number }[] } | undefined)?.listeners?.[0]?.attachedRoutes;
    expect(await until(attached, 2, 'attached routes')).to.equal(2);
  });

  it('writes GRPCRoutes their status: accepted, or not where an older HTTPRoute shares a hostname on the listener', async () => {
    const rules = [{ matches: [{ method: { service: 'shop.v1.Cart' } }], backendRefs: [{ name: 'web', port: 8080 }] }];
    // A Gateway of its own: on gw, the HTTPRoute cross (no hostnames: the listener's *.example.com) is as old or older, and first by name.
    fake.create(gateway('grpc-gw', [httpListener('grpc', { hostname: '*.example.net' })]));
    fake.create(grpcRoute('api', { parentRefs: [{ name: 'grpc-gw' }], hostnames: ['api.example.net'], rules }));
    // Made within the second web was (the API server's timestamps are whole seconds), or later: web wins on age or, tied, on name.
    fake.create(grpcRoute('zz-web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules }));
    await until(() => routeConditions('api', 'infra', 'GRPCRoute'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'], 'GRPCRoute api');
    await until(() => routeConditions('zz-web', 'infra', 'GRPCRoute'), ['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=True/ResolvedRefs'], 'GRPCRoute zz-web');
    expect(routeConditions('web')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  });

  it('renders nothing for its own status writes: the HTTPRoute status it wrote comes back as a watch event and is only stored', async () => {
    const from = log.mark();
    fake.create(httpRoute('quiet', { parentRefs: [{ name: 'gw' }], hostnames: ['quiet.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    await until(() => routeConditions('quiet'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'], 'route quiet');
    // One watch delivers the HTTPRoutes' events in order: once a route created after the status write is
    // rendered, the status write's event has reached the controller too.
    fake.create(httpRoute('after-status', { parentRefs: [{ name: 'gw' }], hostnames: ['after-status.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    type Rendered = Extract<Outcome, { type: 'rendered' }>;
    const isRendered = (outcome: Outcome): outcome is Rendered => outcome.type === 'rendered';
    const last = await log.waitFor(from, (o): o is Rendered => isRendered(o) && o.changes.refs.some((ref) => ref.name === 'after-status'), 'render of after-status');
    const renders = log.since(from).filter(isRendered);
    const changes = renders.slice(0, renders.indexOf(last) + 1).flatMap((r) => r.changes.refs.map((ref) => `${ref.type} ${ref.kind} ${ref.name}`));
    expect(changes).to.deep.equal(['added httproutes quiet', 'added httproutes after-status']);
  });

  it('says PartiallyInvalid while a match of an accepted route is left out as not routed yet', async () => {
    const served = { backendRefs: [{ name: 'web', port: 8080 }] };
    // A RegularExpression path holding '#' cannot be a map key: the render leaves that match out.
    const unroutable = { matches: [{ path: { type: 'RegularExpression', value: '/a#b' } }], ...served };
    fake.create(httpRoute('partly', { parentRefs: [{ name: 'gw' }], hostnames: ['partly.example.com'], rules: [served, unroutable] }));
    await until(() => routeConditions('partly'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'PartiallyInvalid=True/UnsupportedValue'], 'route partly');
    fake.patch({ apiVersion: V1, kind: 'HTTPRoute', namespace: 'infra', name: 'partly' }, { spec: { rules: [served] } });
    await until(() => routeConditions('partly'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'], 'route partly fixed');
  });

  it('refuses a listener on a port the template does not serve (PortUnavailable), and the routes that select it by port', async () => {
    fake.create(
      gateway('ports', [httpListener('http', { allowedRoutes: { namespaces: { from: 'All' } } }), httpListener('alt', { port: 8080, allowedRoutes: { namespaces: { from: 'All' } } })]),
    );
    fake.create(httpRoute('alt', { parentRefs: [{ name: 'ports', port: 8080 }], hostnames: ['alt.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    const listeners = () =>
      ((fake.get({ apiVersion: V1, kind: 'Gateway', namespace: 'infra', name: 'ports' })?.['status'] as { listeners?: { name: string }[] } | undefined)?.listeners ?? []).map((listener) => [
        listener.name,
        ...conditions(listener),
      ]);
    await until(
      listeners,
      [
        ['http', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Conflicted=False/NoConflicts', 'Programmed=True/Programmed'],
        ['alt', 'Accepted=False/PortUnavailable', 'ResolvedRefs=True/ResolvedRefs', 'Conflicted=False/NoConflicts', 'Programmed=False/Invalid'],
      ],
      'listener status',
    );
    expect(conditions(fake.get({ apiVersion: V1, kind: 'Gateway', namespace: 'infra', name: 'ports' })?.['status'])).to.include('Accepted=True/ListenersNotValid');
    await until(() => routeConditions('alt'), ['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=True/ResolvedRefs'], 'route alt');
  });

  it('admits a ListenerSet per allowedListeners: its status, its listeners, the routes on it, and the Gateway counting it', async () => {
    const listeners = [httpListener('shop', { hostname: 'shop.example.com' })];
    const sets = gateway('sets', [httpListener('http', { hostname: 'sets.example.com' })]);
    fake.create({ ...sets, spec: { ...(sets['spec'] as object), allowedListeners: { namespaces: { from: 'All' } } } });
    // Gateway gw admits no ListenerSet (no allowedListeners).
    fake.create(listenerSet('team', 'infra/sets', listeners, 'team'));
    fake.create(listenerSet('refused', 'infra/gw', listeners, 'team'));
    fake.create(
      httpRoute(
        'shop',
        { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'team' }], rules: [{ backendRefs: [{ name: 'web', namespace: 'infra', port: 8080 }] }] },
        'team',
      ),
    );
    const set = (name: string) =>
      fake.get({ apiVersion: V1, kind: 'ListenerSet', namespace: 'team', name })?.['status'] as { listeners?: { name: string; attachedRoutes: number }[] } | undefined;
    await until(() => conditions(set('team')), ['Accepted=True/Accepted', 'Programmed=True/Programmed'], 'ListenerSet team');
    await until(
      () => set('team')?.listeners?.map((entry) => [entry.name, entry.attachedRoutes, ...conditions(entry)]),
      [['shop', 1, 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Conflicted=False/NoConflicts', 'Programmed=True/Programmed']],
      'ListenerSet listeners',
    );
    await until(() => conditions(set('refused')), ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed'], 'ListenerSet refused');
    await until(() => routeConditions('shop', 'team'), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted'], 'route on the ListenerSet');
    const gatewayStatus = (name: string) => fake.get({ apiVersion: V1, kind: 'Gateway', namespace: 'infra', name })?.['status'] as { attachedListenerSets?: number } | undefined;
    expect(gatewayStatus('sets')!.attachedListenerSets).to.equal(1);
    expect(gatewayStatus('gw')).not.to.have.property('attachedListenerSets');
  });
});
