import { expect } from 'chai';
import { certificateClaims } from '../../../lib/gateway/certificates.ts';
import { readGatewayApi, type GatewayApiModel } from '../../../lib/gateway/gateway-api.ts';
import { statusWrites } from '../../../lib/gateway/status-writer.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { caConfigMap, gateway, httpListener, httpRoute, listenerSet, namespaceObject, referenceGrant, service, sources, tlsSecret, toService } from './fixtures.ts';

/**
 * ListenerSets (apis/v1/listenerset_types.go), after the upstream
 * conformance scenarios conformance/tests/listenerset-*.go of Gateway API
 * v1.6: admitted per the Gateway's spec.allowedListeners, their listeners
 * merged after the Gateway's (a conflict is the later listener's), routes
 * attached by parentRef kind ListenerSet, and the status each object gets.
 */

const NS = 'gateway-conformance-infra';
const ALL_ROUTES = { allowedRoutes: { namespaces: { from: 'All' } } };
const ADDRESS = [{ ip: '192.0.2.1' }];

function allowing(object: KubeObject, namespaces: Record<string, unknown>): KubeObject {
  return { ...object, spec: { ...(object['spec'] as object), allowedListeners: { namespaces } } };
}

const listener = (name: string, hostname: string, extra: Record<string, unknown> = {}) => httpListener(name, { hostname, ...ALL_ROUTES, ...extra });

interface Written {
  readonly conditions: readonly { readonly type: string; readonly status: string; readonly reason: string }[];
  readonly listeners?: readonly {
    readonly name: string;
    readonly attachedRoutes: number;
    readonly conditions: readonly { readonly type: string; readonly status: string; readonly reason: string }[];
  }[];
  readonly attachedListenerSets?: number;
}

/** Every status write of the model, by "resource namespace/name". */
function statuses(model: GatewayApiModel): Map<string, Written> {
  const writes = statusWrites({ model, controllerName: 'haproxy-template-ic.io/gateway', addresses: ADDRESS, deployment: 'deployed', now: Date.parse('2026-11-28T00:00:00Z') });
  return new Map(writes.map((write) => [`${write.resource} ${write.object.metadata.namespace}/${write.object.metadata.name}`, write.status as unknown as Written]));
}

const condition = (status: Written | undefined, type: string) => {
  const found = status?.conditions.find((entry) => entry.type === type);
  return found && `${found.status}/${found.reason}`;
};

const listenerConditions = (status: Written | undefined, name: string) =>
  status?.listeners
    ?.find((entry) => entry.name === name)
    ?.conditions.map((entry) => `${entry.type}=${entry.status}/${entry.reason}`)
    .join(' ');

describe('ListenerSets', () => {
  it('are refused by a Gateway without allowedListeners: NotAllowed, none attached (listenerset-default-not-allowed)', () => {
    const model = readGatewayApi(
      sources({ gateways: [gateway('gw', [listener('gw-listener', 'gw.example.com')], NS)], listenerSets: [listenerSet('ls', 'gw', [listener('ls-listener', 'ls.example.com')], NS)] }),
    );
    const written = statuses(model);
    expect(condition(written.get(`listenersets ${NS}/ls`), 'Accepted')).to.equal('False/NotAllowed');
    expect(condition(written.get(`listenersets ${NS}/ls`), 'Programmed')).to.equal('False/NotAllowed');
    expect(condition(written.get(`gateways ${NS}/gw`), 'Accepted')).to.equal('True/Accepted');
    expect(written.get(`gateways ${NS}/gw`)!.attachedListenerSets ?? 0).to.equal(0);
    expect(model.gateways.get(`ListenerSet ${NS}/ls`)!.served).to.equal(undefined);
  });

  it('from Same: only the Gateway namespace, each listener accepted (listenerset-allowed-namespace-same)', () => {
    const model = readGatewayApi(
      sources({
        gateways: [allowing(gateway('gw', [listener('gw-listener', 'gw.example.com')], NS), { from: 'Same' })],
        listenerSets: [
          listenerSet('same', `${NS}/gw`, [listener('same-listener', 'same.example.com')], NS),
          listenerSet('other', `${NS}/gw`, [listener('other-listener', 'other.example.com')], 'not-allowed-ns'),
        ],
      }),
    );
    const written = statuses(model);
    expect(written.get(`gateways ${NS}/gw`)!.attachedListenerSets).to.equal(1);
    expect(condition(written.get(`listenersets ${NS}/same`), 'Accepted')).to.equal('True/Accepted');
    expect(condition(written.get(`listenersets ${NS}/same`), 'Programmed')).to.equal('True/Programmed');
    expect(listenerConditions(written.get(`listenersets ${NS}/same`), 'same-listener')).to.equal(
      'Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts Programmed=True/Programmed',
    );
    expect(condition(written.get('listenersets not-allowed-ns/other'), 'Accepted')).to.equal('False/NotAllowed');
    expect(condition(written.get('listenersets not-allowed-ns/other'), 'Programmed')).to.equal('False/NotAllowed');
  });

  it('from Selector: the namespaces whose labels it selects; from All: every namespace (listenerset-allowed-namespace-selector)', () => {
    const sets = [listenerSet('a', `${NS}/gw`, [listener('a', 'a.example.com')], 'team-a'), listenerSet('b', `${NS}/gw`, [listener('b', 'b.example.com')], 'team-b')];
    const namespaces = [namespaceObject('team-a', { 'listenerset-allowed': 'true' }), namespaceObject('team-b')];
    const selected = statuses(
      readGatewayApi(
        sources({
          gateways: [allowing(gateway('gw', [listener('gw', 'gw.example.com')], NS), { from: 'Selector', selector: { matchLabels: { 'listenerset-allowed': 'true' } } })],
          listenerSets: sets,
          namespaces,
        }),
      ),
    );
    expect(selected.get(`gateways ${NS}/gw`)!.attachedListenerSets).to.equal(1);
    expect(condition(selected.get('listenersets team-a/a'), 'Accepted')).to.equal('True/Accepted');
    expect(condition(selected.get('listenersets team-b/b'), 'Accepted')).to.equal('False/NotAllowed');
    const all = statuses(readGatewayApi(sources({ gateways: [allowing(gateway('gw', [listener('gw', 'gw.example.com')], NS), { from: 'All' })], listenerSets: sets, namespaces })));
    expect(all.get(`gateways ${NS}/gw`)!.attachedListenerSets).to.equal(2);
  });

  it('say ParentNotAccepted while their Gateway is not served, and are left alone when it is not this controller’s', () => {
    const refused = { ...gateway('gw', [listener('gw', 'gw.example.com')], NS), spec: { gatewayClassName: 'haproxy', listeners: [], allowedListeners: { namespaces: { from: 'All' } } } };
    const written = statuses(readGatewayApi(sources({ gateways: [refused], listenerSets: [listenerSet('ls', 'gw', [listener('l', 'l.example.com')], NS)] })));
    expect(condition(written.get(`listenersets ${NS}/ls`), 'Accepted')).to.equal('False/ParentNotAccepted');
    const foreign = readGatewayApi(
      sources({
        gateways: [allowing(gateway('gw', [listener('gw', 'gw.example.com')], NS, 'someone-else'), { from: 'All' })],
        listenerSets: [listenerSet('ls', 'gw', [listener('l', 'l.example.com')], NS)],
      }),
    );
    expect(foreign.gateways.size).to.equal(0);
  });

  for (const [scenario, reason, conflicting] of [
    ['listenerset-hostname-conflict', 'HostnameConflict', (name: string, hostname: string) => listener(name, hostname)],
    ['listenerset-protocol-conflict', 'ProtocolConflict', (name: string) => httpListener(name, { protocol: 'TCP', ...ALL_ROUTES })],
  ] as const) {
    it(`keep a conflict to the later listener: the Gateway's first, then ListenerSets oldest first, then by name; a set with no listener left is not accepted (${scenario})`, () => {
      const gw = allowing(gateway('gw', [listener('gateway-listener', 'gateway-listener.com'), listener('conflict-with-gateway', 'conflict-with-gateway.com')], NS), { from: 'Same' });
      const sets = [
        listenerSet(
          'with-gateway-1',
          'gw',
          [listener('ls-1-listener', 'ls-1-listener.com'), conflicting('conflict-with-gateway', 'conflict-with-gateway.com'), listener('conflict-with-set', 'conflict-with-set.com')],
          NS,
        ),
        listenerSet('with-gateway-2', 'gw', [conflicting('conflict-with-gateway', 'conflict-with-gateway.com')], NS),
        listenerSet('with-set-1', 'gw', [listener('ls-2-listener', 'ls-2-listener.com'), conflicting('conflict-with-set', 'conflict-with-set.com')], NS),
        listenerSet('with-set-2', 'gw', [conflicting('conflict-with-set', 'conflict-with-set.com')], NS),
      ];
      // Listed newest first: the order is the sets' creation time and names, not the list's.
      const written = statuses(readGatewayApi(sources({ gateways: [gw], listenerSets: sets.toReversed() })));
      const accepted = 'Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts Programmed=True/Programmed';
      const conflicted = `Accepted=False/${reason} ResolvedRefs=True/ResolvedRefs Conflicted=True/${reason} Programmed=False/${reason}`;
      const gatewayStatus = written.get(`gateways ${NS}/gw`);
      expect(gatewayStatus!.attachedListenerSets).to.equal(2);
      expect(listenerConditions(gatewayStatus, 'gateway-listener')).to.equal(accepted);
      expect(listenerConditions(gatewayStatus, 'conflict-with-gateway')).to.equal(accepted);
      const set = (name: string) => written.get(`listenersets ${NS}/${name}`);
      expect(condition(set('with-gateway-1'), 'Accepted')).to.equal('True/ListenersNotValid');
      expect(condition(set('with-gateway-1'), 'Programmed')).to.equal('True/Programmed');
      expect(listenerConditions(set('with-gateway-1'), 'ls-1-listener')).to.equal(accepted);
      expect(listenerConditions(set('with-gateway-1'), 'conflict-with-gateway')).to.equal(conflicted);
      expect(listenerConditions(set('with-gateway-1'), 'conflict-with-set')).to.equal(accepted);
      for (const name of ['with-gateway-2', 'with-set-2']) {
        expect(condition(set(name), 'Accepted')).to.equal('False/ListenersNotValid');
        expect(condition(set(name), 'Programmed')).to.equal('False/ListenersNotValid');
      }
      expect(listenerConditions(set('with-gateway-2'), 'conflict-with-gateway')).to.equal(conflicted);
      expect(condition(set('with-set-1'), 'Programmed')).to.equal('True/Programmed');
      expect(listenerConditions(set('with-set-1'), 'ls-2-listener')).to.equal(accepted);
      expect(listenerConditions(set('with-set-1'), 'conflict-with-set')).to.equal(conflicted);
      expect(listenerConditions(set('with-set-2'), 'conflict-with-set')).to.equal(conflicted);
    });
  }

  it('take precedence by creation time before their names', () => {
    const gw = allowing(gateway('gw', [listener('gw', 'gw.example.com')], NS), { from: 'Same' });
    const model = readGatewayApi(
      sources({
        gateways: [gw],
        listenerSets: [
          listenerSet('a-newer', 'gw', [listener('x', 'x.example.com')], NS, '2026-02-01T00:00:00Z'),
          listenerSet('z-older', 'gw', [listener('x', 'x.example.com')], NS, '2026-01-01T00:00:00Z'),
        ],
      }),
    );
    expect(model.gateways.get(`ListenerSet ${NS}/z-older`)!.served!.listeners[0]!.conflict).to.equal(undefined);
    expect(model.gateways.get(`ListenerSet ${NS}/a-newer`)!.served!.listeners[0]!.conflict).to.deep.equal({
      reason: 'HostnameConflict',
      message: `listener x of ListenerSet ${NS}/z-older serves the same hostname on port 80`,
    });
  });

  describe('routes', () => {
    // listenerset-http-routing: a route naming the Gateway attaches to its listeners alone, one naming a ListenerSet to that set's.
    const gw = allowing(gateway('gw', [listener('gateway-listener-1', 'gateway-listener-1.com'), listener('gateway-listener-2', 'gateway-listener-2.com')], NS), { from: 'All' });
    const sets = [1, 2].map((n) =>
      listenerSet(
        `ls-${n}`,
        `${NS}/gw`,
        [1, 2].map((m) => listener(`ls-${n}-listener-${m}`, `ls-${n}-listener-${m}.com`)),
        NS,
      ),
    );
    const toSet = (n: number, sectionName?: string) => ({ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: `ls-${n}`, namespace: NS, ...(sectionName ? { sectionName } : {}) });
    const toGateway = (sectionName?: string) => ({ name: 'gw', namespace: NS, ...(sectionName ? { sectionName } : {}) });
    const route = (name: string, parentRefs: readonly object[], path: string) =>
      httpRoute(name, { parentRefs, rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], ...toService('infra-backend-v1') }] }, NS);
    const model = readGatewayApi(
      sources({
        gateways: [gw],
        listenerSets: sets,
        routes: [
          route('attaches-to-all-listeners', [toGateway(), toSet(1), toSet(2)], '/route'),
          route('gateway-route', [toGateway()], '/gateway-route'),
          route('gateway-section-route', [toGateway('gateway-listener-1')], '/gateway-section-route'),
          route('ls-1-route', [toSet(1)], '/ls-1-route'),
          route('ls-1-section-route', [toSet(1, 'ls-1-listener-1')], '/ls-1-section-route'),
          route('ls-2-route', [toSet(2)], '/ls-2-route'),
          route('route-via-gateway', [toGateway('ls-1-listener-1')], '/badsection'),
        ],
        services: [service(NS, 'infra-backend-v1')],
      }),
    );
    const hostsOf = (path: string) =>
      model.records
        .filter((record) => record.path.value === path)
        .map((record) => record.host.key)
        .toSorted();

    it('serve each route on the listeners of the parents it names, and no other', () => {
      expect(hostsOf('/route')).to.deep.equal(
        ['gateway-listener-1.com', 'gateway-listener-2.com', 'ls-1-listener-1.com', 'ls-1-listener-2.com', 'ls-2-listener-1.com', 'ls-2-listener-2.com'].toSorted(),
      );
      expect(hostsOf('/gateway-route')).to.deep.equal(['gateway-listener-1.com', 'gateway-listener-2.com']);
      expect(hostsOf('/gateway-section-route')).to.deep.equal(['gateway-listener-1.com']);
      expect(hostsOf('/ls-1-route')).to.deep.equal(['ls-1-listener-1.com', 'ls-1-listener-2.com']);
      expect(hostsOf('/ls-1-section-route')).to.deep.equal(['ls-1-listener-1.com']);
      expect(hostsOf('/ls-2-route')).to.deep.equal(['ls-2-listener-1.com', 'ls-2-listener-2.com']);
      expect(hostsOf('/badsection')).to.deep.equal([]);
    });

    it('count on the listeners of the ListenerSet they attach to, and a Gateway sectionName naming a ListenerSet listener is NoMatchingParent (listenerset-gateway-parent-section-name-not-found)', () => {
      const written = statuses(model);
      const counts = (key: string) => Object.fromEntries((written.get(key)!.listeners ?? []).map((entry) => [entry.name, entry.attachedRoutes]));
      expect(counts(`listenersets ${NS}/ls-1`)).to.deep.equal({ 'ls-1-listener-1': 3, 'ls-1-listener-2': 2 });
      expect(counts(`listenersets ${NS}/ls-2`)).to.deep.equal({ 'ls-2-listener-1': 2, 'ls-2-listener-2': 2 });
      expect(counts(`gateways ${NS}/gw`)).to.deep.equal({ 'gateway-listener-1': 3, 'gateway-listener-2': 2 });
      expect(written.get(`gateways ${NS}/gw`)!.attachedListenerSets).to.equal(2);
      expect(model.routes.get(`${NS}/attaches-to-all-listeners`)!.parents.map((parent) => parent.acceptance.accepted)).to.deep.equal([true, true, true]);
      expect(model.routes.get(`${NS}/route-via-gateway`)!.parents[0]!.acceptance).to.include({ accepted: false, reason: 'NoMatchingParent' });
    });

    it('are admitted by allowedRoutes from Same as the ListenerSet namespace, not the Gateway’s', () => {
      const sameRoutes = readGatewayApi(
        sources({
          gateways: [gw],
          listenerSets: [listenerSet('team', `${NS}/gw`, [httpListener('team', { hostname: 'team.example.com' })], 'team')],
          routes: [
            httpRoute('mine', { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'team' }], rules: [toService('web')] }, 'team'),
            httpRoute('infra', { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'team', namespace: 'team' }], rules: [toService('web')] }, NS),
          ],
        }),
      );
      expect(sameRoutes.routes.get('team/mine')!.parents[0]!.acceptance).to.include({ accepted: true });
      expect(sameRoutes.routes.get(`${NS}/infra`)!.parents[0]!.acceptance).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
    });
  });

  describe('routes, after the scenarios of their own', () => {
    const lsRef = (name: string, namespace = NS, sectionName?: string) => ({
      group: 'gateway.networking.k8s.io',
      kind: 'ListenerSet',
      name,
      namespace,
      ...(sectionName ? { sectionName } : {}),
    });
    const rule = (path: string) => ({ matches: [{ path: { type: 'PathPrefix', value: path } }], ...toService('infra-backend-v1') });

    it('judge each parentRef on its own: a Gateway sectionName only the ListenerSet has refuses that parentRef alone (listenerset-dual-parentref-independence)', () => {
      const sameOnly = { allowedRoutes: { namespaces: { from: 'Same' } } };
      const model = readGatewayApi(
        sources({
          gateways: [allowing(gateway('gw', [httpListener('gw-listener', { hostname: 'gw-dual.com', ...sameOnly })], NS), { from: 'Same' })],
          listenerSets: [listenerSet('ls', 'gw', [httpListener('ls-listener', { hostname: 'ls-dual.com', ...sameOnly })], NS)],
          routes: [
            httpRoute('both', { parentRefs: [{ name: 'gw', namespace: NS }, lsRef('ls')], rules: [rule('/dualboth')] }, NS),
            httpRoute('one', { parentRefs: [{ name: 'gw', namespace: NS, sectionName: 'ls-listener' }, lsRef('ls', NS, 'ls-listener')], rules: [rule('/dualone')] }, NS),
          ],
          services: [service(NS, 'infra-backend-v1')],
        }),
      );
      expect(model.routes.get(`${NS}/both`)!.parents.map((parent) => parent.acceptance.accepted)).to.deep.equal([true, true]);
      expect(model.routes.get(`${NS}/one`)!.parents.map((parent) => (parent.acceptance.accepted ? 'Accepted' : parent.acceptance.reason))).to.deep.equal(['NoMatchingParent', 'Accepted']);
      const hosts = (path: string) => model.records.filter((record) => record.path.value === path).map((record) => record.host.key);
      expect(hosts('/dualboth').toSorted()).to.deep.equal(['gw-dual.com', 'ls-dual.com']);
      expect(hosts('/dualone')).to.deep.equal(['ls-dual.com']);
      expect(
        statuses(model)
          .get(`listenersets ${NS}/ls`)!
          .listeners!.map((entry) => entry.attachedRoutes),
      ).to.deep.equal([2]);
    });

    it('count on each listener of a ListenerSet the routes its allowedRoutes admit: All, Same (the ListenerSet namespace), Selector (listenerset-allowed-routes-namespaces)', () => {
      const from = (value: Record<string, unknown>) => ({ allowedRoutes: { namespaces: value } });
      const model = readGatewayApi(
        sources({
          gateways: [allowing(gateway('gw', [listener('gateway-listener', 'gateway-listener.com')], NS), { from: 'All' })],
          listenerSets: [
            listenerSet(
              'ls',
              'gw',
              [
                httpListener('all', { hostname: 'all.com', ...from({ from: 'All' }) }),
                httpListener('same', { hostname: 'same.com', ...from({ from: 'Same' }) }),
                httpListener('selector', { hostname: 'selector.com', ...from({ from: 'Selector', selector: { matchLabels: { allowed: 'ns' } } }) }),
              ],
              NS,
            ),
            listenerSet('cross', `${NS}/gw`, [httpListener('cross-same', { hostname: 'cross.com', ...from({ from: 'Same' }) })], 'ls-cross-ns'),
          ],
          routes: [
            httpRoute('same', { parentRefs: [lsRef('ls')], rules: [rule('/same')] }, NS),
            httpRoute('selected', { parentRefs: [lsRef('ls')], rules: [rule('/selected')] }, 'routes-allowed-ns'),
            httpRoute('not-selected', { parentRefs: [lsRef('ls')], rules: [rule('/not-selected')] }, 'routes-not-allowed-ns'),
            httpRoute('in-ls-ns', { parentRefs: [lsRef('cross', 'ls-cross-ns')], rules: [rule('/in-ls-ns')] }, 'ls-cross-ns'),
            httpRoute('in-gw-ns', { parentRefs: [lsRef('cross', 'ls-cross-ns')], rules: [rule('/in-gw-ns')] }, NS),
          ],
          namespaces: [namespaceObject('routes-allowed-ns', { allowed: 'ns' }), namespaceObject('routes-not-allowed-ns')],
        }),
      );
      const written = statuses(model);
      const counts = (key: string) => Object.fromEntries((written.get(key)!.listeners ?? []).map((entry) => [entry.name, entry.attachedRoutes]));
      expect(counts(`listenersets ${NS}/ls`)).to.deep.equal({ all: 3, same: 1, selector: 1 });
      expect(counts('listenersets ls-cross-ns/cross')).to.deep.equal({ 'cross-same': 1 });
      for (const key of [`${NS}/same`, 'routes-allowed-ns/selected', 'routes-not-allowed-ns/not-selected', 'ls-cross-ns/in-ls-ns'])
        expect(model.routes.get(key)!.parents[0]!.acceptance, key).to.include({ accepted: true });
      expect(model.routes.get(`${NS}/in-gw-ns`)!.parents[0]!.acceptance).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
      expect(written.get(`gateways ${NS}/gw`)!.attachedListenerSets).to.equal(2);
    });

    it('refuse a route kind the listener does not serve: InvalidRouteKinds (listenerset-allowed-routes-supported-kinds)', () => {
      const tls = httpListener('tls-only', {
        port: 443,
        protocol: 'TLS',
        hostname: 'tls-only.com',
        tls: { mode: 'Passthrough' },
        allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'HTTPRoute' }] },
      });
      const model = readGatewayApi(
        sources({ gateways: [allowing(gateway('gw', [listener('gateway-listener', 'gateway-listener.com')], NS), { from: 'All' })], listenerSets: [listenerSet('ls', 'gw', [tls], NS)] }),
      );
      expect(listenerConditions(statuses(model).get(`listenersets ${NS}/ls`), 'tls-only')).to.include('ResolvedRefs=False/InvalidRouteKinds');
    });
  });

  describe('certificates', () => {
    const https = (name: string, hostname: string) =>
      httpListener(name, { port: 443, protocol: 'HTTPS', hostname, tls: { certificateRefs: [{ name: 'certificate', namespace: 'web-backend' }] }, ...ALL_ROUTES });
    const gw = allowing(gateway('gw', [https('gateway-listener', 'gateway-listener.com')], NS), { from: 'All' });
    const grantTo = (kind: string) =>
      referenceGrant('web-backend', [{ group: 'gateway.networking.k8s.io', kind, namespace: NS }], [{ group: '', kind: 'Secret' }], `for-${kind.toLowerCase()}`);

    it('resolve in the ListenerSet namespace, across namespaces with a ReferenceGrant from ListenerSets, not from Gateways (listenerset-reference-grant)', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gw],
          listenerSets: [
            listenerSet('with-grant', `${NS}/gw`, [https('with-grant-listener', 'with-grant.com')], NS),
            listenerSet('without-grant', `${NS}/gw`, [https('without-grant-listener', 'without-grant.com')], 'other-ns'),
          ],
          grants: [grantTo('Gateway'), grantTo('ListenerSet')],
          secrets: [tlsSecret('web-backend', 'certificate')],
        }),
      );
      const written = statuses(model);
      expect(condition(written.get(`listenersets ${NS}/with-grant`), 'Accepted')).to.equal('True/Accepted');
      expect(listenerConditions(written.get(`listenersets ${NS}/with-grant`), 'with-grant-listener')).to.include('ResolvedRefs=True/ResolvedRefs');
      expect(condition(written.get('listenersets other-ns/without-grant'), 'Accepted')).to.equal('False/ListenersNotValid');
      expect(condition(written.get('listenersets other-ns/without-grant'), 'Programmed')).to.equal('False/ListenersNotValid');
      expect(listenerConditions(written.get('listenersets other-ns/without-grant'), 'without-grant-listener')).to.include('ResolvedRefs=False/RefNotPermitted');
      expect(certificateClaims(model).map((claim) => `${claim.object} ${claim.hosts.join(',')}`)).to.deep.equal([
        'Gateway gateway-conformance-infra/gw gateway-listener.com',
        'ListenerSet gateway-conformance-infra/with-grant with-grant.com',
      ]);
    });

    it("validate client certificates as their Gateway's spec.tls.frontend says of their port, its CA resolved as the Gateway's", () => {
      const validating = allowing(gateway('gw', [listener('http', 'gw.example.com')], NS), { from: 'All' });
      (validating['spec'] as Record<string, unknown>)['tls'] = { frontend: { default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'client-ca' }] } } } };
      const team = httpListener('secure', { port: 443, protocol: 'HTTPS', hostname: 'team.example.com', tls: { certificateRefs: [{ name: 'team-tls' }] } });
      const read = (configMaps: readonly KubeObject[]) =>
        readGatewayApi(sources({ gateways: [validating], listenerSets: [listenerSet('team', `${NS}/gw`, [team], 'team')], secrets: [tlsSecret('team', 'team-tls')], configMaps }));
      const model = read([caConfigMap(NS, 'client-ca')]);
      const state = model.gateways.get('ListenerSet team/team')!.served!.listeners[0]!;
      expect(state).to.deep.include({ serving: true, clientCa: { ca: { namespace: NS, name: 'client-ca', configMap: true }, mode: 'AllowValidOnly' } });
      expect(certificateClaims(model)).to.deep.equal([
        {
          namespace: 'team',
          secret: 'team-tls',
          hosts: ['team.example.com'],
          object: 'ListenerSet team/team',
          field: 'spec.listeners[0].tls.certificateRefs[0]',
          fallback: false,
          clientCa: { ca: { namespace: NS, name: 'client-ca', configMap: true }, verify: 'required' },
        },
      ]);
      // Without its CA the listener is not served: a ListenerSet never serves the Gateway's port without the validation asked there.
      const missing = read([]).gateways.get('ListenerSet team/team')!.served!.listeners[0]!;
      expect(missing.serving).to.equal(false);
      expect(missing.faults.map((fault) => fault.message)).to.deep.equal([
        `Gateway ${NS}/gw spec.tls.frontend.default.validation.caCertificateRefs[0]: ConfigMap ${NS}/client-ca does not exist or holds no PEM certificate in ca.crt`,
        'no caCertificateRefs entry of its client certificate validation can be used',
      ]);
    });

    it('make their Gateway say InsecureFrontendValidationMode while a listener of theirs falls back', () => {
      const falling = allowing(gateway('gw', [listener('http', 'gw.example.com')], NS), { from: 'All' });
      (falling['spec'] as Record<string, unknown>)['tls'] = {
        frontend: { default: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'client-ca' }] } } },
      };
      const team = httpListener('secure', { port: 443, protocol: 'HTTPS', hostname: 'team.example.com', tls: { certificateRefs: [{ name: 'team-tls' }] } });
      const insecure = (listenerSets: readonly KubeObject[]) =>
        condition(
          statuses(readGatewayApi(sources({ gateways: [falling], listenerSets, secrets: [tlsSecret('team', 'team-tls')], configMaps: [caConfigMap(NS, 'client-ca')] }))).get(
            `gateways ${NS}/gw`,
          ),
          'InsecureFrontendValidationMode',
        );
      expect(insecure([])).to.equal(undefined);
      expect(insecure([listenerSet('team', `${NS}/gw`, [team], 'team')])).to.equal('True/ConfigurationChanged');
    });

    it('a grant to Gateways alone is not one to ListenerSets', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gw],
          listenerSets: [listenerSet('with-grant', `${NS}/gw`, [https('with-grant-listener', 'with-grant.com')], NS)],
          grants: [grantTo('Gateway')],
          secrets: [tlsSecret('web-backend', 'certificate')],
        }),
      );
      expect(model.gateways.get(`ListenerSet ${NS}/with-grant`)!.served!.listeners[0]!.faults).to.deep.equal([
        {
          condition: 'ResolvedRefs',
          reason: 'RefNotPermitted',
          message: `spec.listeners[0].tls.certificateRefs[0]: Secret web-backend/certificate is in another namespace, and no ReferenceGrant there allows ListenerSets of ${NS} to use it`,
        },
      ]);
    });
  });
});
