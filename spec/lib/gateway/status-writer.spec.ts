import { expect } from 'chai';
import { kubeConnectionFromFile } from '../../../lib/kube/kube-connection.ts';
import { DEFAULT_CONTROLLER_NAME } from '../../../lib/gateway/api.ts';
import { SUPPORTED_FEATURES } from '../../../lib/gateway/features.ts';
import { readGatewayApi } from '../../../lib/gateway/gateway-api.ts';
import { GatewayStatusWriter, statusWrites } from '../../../lib/gateway/status-writer.ts';
import type { Deployment } from '../../../lib/gateway/status.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { translateRoutes } from '../../../lib/routing-view/model-sources.ts';
import { leftOutMatches } from '../../../lib/routing-view/left-out-matches.ts';
import { GATEWAY_API_TYPES } from '../../support/fake-apiserver/gateway-api-types.ts';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.ts';
import { gateway, gatewayClass, httpListener, httpRoute, referenceGrant, service } from './fixtures.ts';

const V1 = 'gateway.networking.k8s.io/v1';

/** BackendTLSPolicy as its CRD serves it (config/crd/standard/gateway.networking.k8s.io_backendtlspolicies.yaml): v1, namespaced, with a status subresource. */
const BACKEND_TLS_POLICY_TYPE = {
  group: 'gateway.networking.k8s.io',
  version: 'v1',
  kind: 'BackendTLSPolicy',
  plural: 'backendtlspolicies',
  namespaced: true,
  statusSubresource: true,
  shortNames: ['btlspolicy'],
};

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
}

describe('Gateway API status through the API server', () => {
  let fake: FakeApiServer;
  let writer: GatewayStatusWriter;
  let now: number;

  beforeEach(async () => {
    now = Date.parse('2026-11-24T12:00:00Z');
    fake = await startFakeApiServer({ customResources: [...GATEWAY_API_TYPES, BACKEND_TLS_POLICY_TYPE] });
    const kubeConnection = kubeConnectionFromFile(fake.kubeconfigPath);
    writer = new GatewayStatusWriter(kubeConnection);
    for (const namespace of ['infra', 'apps']) fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    fake.create(gatewayClass());
    fake.create(gatewayClass('theirs', 'example.com/other'));
    fake.create(gateway('gw', [httpListener('http', { hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } })]));
    fake.create(service('infra', 'web'));
    fake.create(service('apps', 'api'));
  });

  afterEach(() => fake.close());

  /** One round of what the leader does: read everything, write the statuses that differ. */
  async function sync(deployment: Deployment = 'deployed'): Promise<number> {
    const list = (kind: string, apiVersion = V1) => fake.list(apiVersion, kind) as unknown as KubeObject[];
    const services = list('Service', 'v1');
    const model = readGatewayApi({
      controllerName: DEFAULT_CONTROLLER_NAME,
      gatewayClasses: list('GatewayClass'),
      gateways: list('Gateway'),
      httpRoutes: list('HTTPRoute'),
      referenceGrants: list('ReferenceGrant', 'gateway.networking.k8s.io/v1beta1'),
      backendTlsPolicies: list('BackendTLSPolicy'),
      configMap: () => undefined,
      service: (namespace, name) => services.find((object) => object.metadata.namespace === namespace && object.metadata.name === name),
      secret: () => undefined,
      namespace: (name) => list('Namespace', 'v1').find((object) => object.metadata.name === name),
    });
    return writer.write(statusWrites({ model, controllerName: DEFAULT_CONTROLLER_NAME, addresses: [{ ip: '10.0.0.7' }], deployment, now, leftOut: leftOutMatches(translateRoutes(model)) }));
  }

  const get = (kind: string, name: string, namespace?: string) => fake.get({ apiVersion: V1, kind, name, ...(namespace ? { namespace } : {}) })!;
  const status = (object: Record<string, unknown>) => object['status'] as Record<string, unknown>;
  const routeConditions = (name: string, namespace = 'infra') => {
    const parents = status(get('HTTPRoute', name, namespace))['parents'] as { controllerName: string; conditions: Condition[] }[];
    return parents.find((parent) => parent.controllerName === DEFAULT_CONTROLLER_NAME)!.conditions.map((condition) => `${condition.type}=${condition.status}/${condition.reason}`);
  };

  it('accepts its own GatewayClass, leaves others alone, and programs the Gateway with the published address', async () => {
    await sync();
    const conditions = status(get('GatewayClass', 'haproxy'))['conditions'] as Condition[];
    expect(conditions.map((condition) => `${condition.type}=${condition.status}/${condition.reason}`)).to.deep.equal(['Accepted=True/Accepted']);
    // The features the translated conformance scenarios prove, sorted by name as apis/v1 asks; never UDPRoute, which HAProxy cannot serve.
    const features = (status(get('GatewayClass', 'haproxy'))['supportedFeatures'] as { name: string }[]).map((feature) => feature.name);
    expect(features)
      .to.deep.equal(SUPPORTED_FEATURES)
      .and.to.deep.equal([...features].sort())
      .and.to.include.members(['Gateway', 'HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute']);
    expect(features).not.to.include('UDPRoute');
    expect(get('GatewayClass', 'theirs')['status']).to.equal(undefined);
    const gw = status(get('Gateway', 'gw', 'infra'));
    expect(gw['addresses']).to.deep.equal([{ type: 'IPAddress', value: '10.0.0.7' }]);
    expect((gw['conditions'] as Condition[]).map((condition) => `${condition.type}=${condition.status}/${condition.reason}`)).to.deep.equal([
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
    ]);
    const [listener] = gw['listeners'] as { name: string; attachedRoutes: number; supportedKinds: unknown[]; conditions: Condition[] }[];
    expect(listener).to.deep.include({
      name: 'http',
      attachedRoutes: 0,
      supportedKinds: [
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
        { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
      ],
    });
    expect(listener!.conditions.map((condition) => `${condition.type}=${condition.status}`)).to.deep.equal(['Accepted=True', 'ResolvedRefs=True', 'Conflicted=False', 'Programmed=True']);
  });

  it('Programmed stays False (Pending) until the configuration is deployed', async () => {
    await sync('pending');
    const conditions = status(get('Gateway', 'gw', 'infra'))['conditions'] as Condition[];
    expect(conditions[1]).to.include({ type: 'Programmed', status: 'False', reason: 'Pending' });
  });

  it('writes an accepted route, counts it on its listener, and writes nothing more while nothing changes', async () => {
    fake.create(httpRoute('web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    // The class, the Gateway and the route.
    expect(await sync()).to.equal(3);
    expect(routeConditions('web')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    expect((status(get('Gateway', 'gw', 'infra'))['listeners'] as { attachedRoutes: number }[])[0]!.attachedRoutes).to.equal(1);
    const firstTime = (status(get('HTTPRoute', 'web', 'infra'))['parents'] as { conditions: Condition[] }[])[0]!.conditions[0]!.lastTransitionTime;
    now += 60_000;
    expect(await sync()).to.equal(0);
    // A condition whose status holds keeps its transition time even when its generation moves.
    fake.patch({ apiVersion: V1, kind: 'HTTPRoute', namespace: 'infra', name: 'web' }, { spec: { hostnames: ['web.example.com', 'www.example.com'] } });
    expect(await sync()).to.equal(1);
    const [accepted] = (status(get('HTTPRoute', 'web', 'infra'))['parents'] as { conditions: Condition[] }[])[0]!.conditions;
    expect(accepted).to.include({ observedGeneration: 2, lastTransitionTime: firstTime });
  });

  it('refuses routes: no matching listener hostname, not allowed by listeners', async () => {
    fake.create(httpRoute('elsewhere', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.org'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    fake.upsert(gateway('gw', [httpListener('http', { hostname: '*.example.com' })]));
    fake.create(httpRoute('foreign', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'api', port: 8080 }] }] }, 'apps'));
    await sync();
    expect(routeConditions('elsewhere')).to.deep.equal(['Accepted=False/NoMatchingListenerHostname', 'ResolvedRefs=True/ResolvedRefs']);
    expect(routeConditions('foreign', 'apps')).to.deep.equal(['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=True/ResolvedRefs']);
  });

  it('leaves references unresolved: backend not found, and across namespaces until a ReferenceGrant allows it', async () => {
    fake.create(httpRoute('missing', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'gone', port: 8080 }] }] }));
    fake.create(httpRoute('cross', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'api', namespace: 'apps', port: 8080 }] }] }));
    await sync();
    expect(routeConditions('missing')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
    expect(routeConditions('cross')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted']);
    fake.create(referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service' }]));
    await sync();
    expect(routeConditions('cross')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  });

  it('names each match left out with its reason once per field, and keeps accepted, with no PartiallyInvalid, a route with a match no request reaches or backendRefs all of weight 0', async () => {
    const conditional = { matches: [{ path: { type: 'RegularExpression', value: '/v#[0-9]' } }], backendRefs: [{ name: 'web', port: 8080 }] };
    const served = { backendRefs: [{ name: 'web', port: 8080 }] };
    fake.create(httpRoute('regex', { parentRefs: [{ name: 'gw' }], hostnames: ['a.example.com', 'b.example.com'], rules: [served, conditional] }));
    const twin = { matches: [{ headers: [{ name: 'env', value: 'twin' }] }], backendRefs: [{ name: 'web', port: 8080 }] };
    fake.create(httpRoute('twin', { parentRefs: [{ name: 'gw' }], hostnames: ['twin.example.com'], rules: [twin, { ...twin, backendRefs: [{ name: 'web', port: 8080, weight: 0 }] }] }));
    await sync();
    const partially = (status(get('HTTPRoute', 'regex', 'infra'))['parents'] as { conditions: (Condition & { message: string })[] }[])[0]!.conditions[2]!;
    expect(partially.message).to.equal(
      'Dropped Rule(s): ' +
        ['a.example.com', 'b.example.com'].map((host) => `spec.rules[1].matches[0]: not served for host ${host}: a RegularExpression path with '#', '%' or '\`' not routed yet`).join('; '),
    );
    expect(routeConditions('twin')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  });

  it('says PartiallyInvalid (UnsupportedValue, "Dropped Rule") while a match is left out as not routed yet, and not accepted when nothing is left', async () => {
    // A RegularExpression path holding '#' cannot be a map key: the match is left out, the rest served.
    const unroutable = { matches: [{ path: { type: 'RegularExpression', value: '/a#b' } }], backendRefs: [{ name: 'web', port: 8080 }] };
    const served = { backendRefs: [{ name: 'web', port: 8080 }] };
    fake.create(httpRoute('partly', { parentRefs: [{ name: 'gw' }], hostnames: ['partly.example.com'], rules: [served, unroutable] }));
    fake.create(httpRoute('wholly', { parentRefs: [{ name: 'gw' }], hostnames: ['wholly.example.com'], rules: [unroutable] }));
    fake.create(httpRoute('missing', { parentRefs: [{ name: 'gw' }], hostnames: ['missing.example.com'], rules: [served, { backendRefs: [{ name: 'gone', port: 8080 }] }] }));
    await sync();
    expect(routeConditions('partly')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'PartiallyInvalid=True/UnsupportedValue']);
    const partially = (status(get('HTTPRoute', 'partly', 'infra'))['parents'] as { conditions: (Condition & { message: string })[] }[])[0]!.conditions[2]!;
    expect(partially.message).to.match(/^Dropped Rule/);
    expect(partially.message).to.include('spec.rules[1].matches[0]');
    expect(partially.message).to.include('not routed yet');
    expect(partially.observedGeneration).to.equal(1);
    // Fully invalid: not accepted, and PartiallyInvalid is never set then.
    expect(routeConditions('wholly')).to.deep.equal(['Accepted=False/UnsupportedValue', 'ResolvedRefs=True/ResolvedRefs']);
    // A backendRef that does not resolve is ResolvedRefs' to say: the route stays accepted, with no PartiallyInvalid.
    expect(routeConditions('missing')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
    // Fixed: the condition goes (it is only ever True), and the next round writes nothing.
    fake.patch({ apiVersion: V1, kind: 'HTTPRoute', namespace: 'infra', name: 'partly' }, { spec: { rules: [served] } });
    expect(await sync()).to.equal(1);
    expect(routeConditions('partly')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    expect(await sync()).to.equal(0);
  });

  it('writes a BackendTLSPolicy its Gateway ancestors, with the reason its CA reference fails, and removes them once no route uses its Service', async () => {
    fake.create(httpRoute('web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    fake.create({
      apiVersion: V1,
      kind: 'BackendTLSPolicy',
      metadata: { namespace: 'infra', name: 'web-tls' },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'missing' }], hostname: 'web.internal' } },
    });
    await sync();
    const ancestors = () => (status(get('BackendTLSPolicy', 'web-tls', 'infra'))?.['ancestors'] ?? []) as { ancestorRef: unknown; controllerName: string; conditions: Condition[] }[];
    expect(ancestors().map((entry) => entry.ancestorRef)).to.deep.equal([{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' }]);
    expect(ancestors()[0]!.conditions.map((condition) => `${condition.type}=${condition.status}/${condition.reason}`)).to.deep.equal([
      'Accepted=False/NoValidCACertificate',
      'ResolvedRefs=False/InvalidCACertificateRef',
    ]);
    expect(await sync()).to.equal(0);
    fake.delete({ apiVersion: V1, kind: 'HTTPRoute', namespace: 'infra', name: 'web' });
    await sync();
    expect(ancestors()).to.deep.equal([]);
  });

  it("removes its entry from a route that no longer names one of its Gateways, keeping others'", async () => {
    fake.create(httpRoute('moved', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    await sync();
    expect(routeConditions('moved')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    fake.patch({ apiVersion: V1, kind: 'HTTPRoute', namespace: 'infra', name: 'moved' }, { spec: { parentRefs: [{ name: 'other-gw' }] } });
    expect(await sync()).to.equal(2);
    expect(status(get('HTTPRoute', 'moved', 'infra'))['parents']).to.deep.equal([]);
    // Nothing of its own is left: the next round writes nothing.
    expect(await sync()).to.equal(0);
  });

  it("keeps other controllers' entries of an HTTPRoute's status.parents", async () => {
    fake.create(httpRoute('shared', { parentRefs: [{ name: 'gw' }, { name: 'other-gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
    const theirs = {
      parentRef: { name: 'other-gw' },
      controllerName: 'example.com/other',
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }],
    };
    fake.updateStatus({ ...get('HTTPRoute', 'shared', 'infra'), status: { parents: [theirs] } });
    await sync();
    const parents = status(get('HTTPRoute', 'shared', 'infra'))['parents'] as { controllerName: string }[];
    expect(parents.map((parent) => parent.controllerName)).to.deep.equal(['example.com/other', DEFAULT_CONTROLLER_NAME]);
    expect(parents[0]).to.deep.equal(theirs);
  });
});
