import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { Backend, MapModel } from '../../../lib/map-model/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import type { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service, tlsSecret } from '../ingress/fixtures.ts';

/**
 * BackendTLSPolicies through the cached view model, from the stores the
 * shipped configuration watches: the backend of a Service port a policy
 * names speaks TLS as it says, a change of the policy or of its ConfigMap
 * is followed by a cached build as a fresh build follows it, and a policy
 * removed leaves the backend as the routes alone ask.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;
type Stores = Map<string, IndexedStore>;
const V1 = 'gateway.networking.k8s.io/v1';
let version = 0;
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'default', resourceVersion: String(++version), creationTimestamp: '2026-01-01T00:00:00Z', ...extra });

const gatewayObjects: KubeObject[] = [
  { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'haproxy' }, spec: { controllerName: config.gatewayApi.controllerName } },
  {
    apiVersion: V1,
    kind: 'Gateway',
    metadata: meta('gw'),
    spec: {
      gatewayClassName: 'haproxy',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        { name: 'terminate', port: 9443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'listener-tls' }] } },
        { name: 'passthrough', port: 9444, protocol: 'TLS', tls: { mode: 'Passthrough' } },
      ],
    },
  },
];

function tlsRoute(name: string, listener: string, serviceName: string): KubeObject {
  return {
    apiVersion: V1,
    kind: 'TLSRoute',
    metadata: meta(name),
    spec: { parentRefs: [{ name: 'gw', sectionName: listener }], hostnames: [`${name}.example.com`], rules: [{ backendRefs: [{ name: serviceName, port: 443 }] }] },
  };
}

function route(kind: 'HTTPRoute' | 'GRPCRoute', backendRefs: readonly Record<string, unknown>[]): KubeObject {
  return { apiVersion: V1, kind, metadata: meta(kind.toLowerCase()), spec: { parentRefs: [{ name: 'gw' }], hostnames: [`${kind.toLowerCase()}.example.com`], rules: [{ backendRefs }] } };
}

function policy(name: string, serviceName: string, validation: Record<string, unknown>): KubeObject {
  return { apiVersion: V1, kind: 'BackendTLSPolicy', metadata: meta(name), spec: { targetRefs: [{ group: '', kind: 'Service', name: serviceName }], validation } };
}

const caMap = (pem: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('backend-ca'), data: { 'ca.crt': pem } });
const BY_CONFIG_MAP = { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }], hostname: 'api.internal' };

function world(objects: {
  readonly routes: readonly KubeObject[];
  readonly policies: readonly KubeObject[];
  readonly ingresses?: readonly KubeObject[];
  readonly tlsRoutes?: readonly KubeObject[];
}): Stores {
  const services = ['a', 'b'];
  return buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', objects.ingresses ?? []],
      ['gatewayclasses', [gatewayObjects[0]!]],
      ['gateways', [gatewayObjects[1]!]],
      ['httproutes', objects.routes.filter((object) => object.kind === 'HTTPRoute')],
      ['grpcroutes', objects.routes.filter((object) => object.kind === 'GRPCRoute')],
      ['backendtlspolicies', objects.policies],
      ['tlsroutes', objects.tlsRoutes ?? []],
      ['secrets', [tlsSecret('listener-tls', LEAF_CERT, LEAF_KEY)]],
      ['configmaps', [caMap(CA_CERT)]],
      ['services', services.map((name) => service(name, [{ name: 'https', port: 443, targetPort: 8443 }]))],
      ['endpointslices', services.map((name, i) => endpointSlice(`${name}-1`, name, [{ name: 'https', port: 8443 }], [{ addresses: [`10.0.${i}.1`] }]))],
    ]),
    config.ignoreFields,
  );
}

const build = (stores: Stores, cache?: MapModelCache): MapModel => buildMapModel(mapModelSources(config, stores)!, cache);
const backendOf = (model: MapModel, name: string): Backend => model.backends.find((backend) => backend.name === name)!;

describe('BackendTLSPolicy in the cached view model', () => {
  it('speaks TLS to the Service port the policy names, verified against its ConfigMap, with SNI and verifyhost; a CA file apart from Secrets’', () => {
    const model = build(world({ routes: [route('HTTPRoute', [{ name: 'a', port: 443 }])], policies: [policy('a', 'a', BY_CONFIG_MAP)] }));
    expect(backendOf(model, 'default_a_443').transport).to.deep.equal({
      ssl: true,
      alpnH2: false,
      protoH2: false,
      verifyNone: false,
      caFile: 'default_backend-ca__configmap-ca.pem',
      systemCa: false,
      sni: 'api.internal',
      verifyHost: 'api.internal',
    });
    expect(model.caCertificates.map((ca) => [ca.file, ca.pem])).to.deep.equal([['default_backend-ca__configmap-ca.pem', CA_CERT]]);
  });

  it('turns a GRPCRoute’s HTTP/2 in clear text into HTTP/2 over TLS (alpn h2) under a policy with the system CAs', () => {
    const model = build(world({ routes: [route('GRPCRoute', [{ name: 'b', port: 443 }])], policies: [policy('b', 'b', { wellKnownCACertificates: 'System', hostname: 'grpc.internal' })] }));
    const { ssl, alpnH2, protoH2, systemCa, caFile, sni } = backendOf(model, 'default_b_443').transport!;
    expect({ ssl, alpnH2, protoH2, systemCa, caFile, sni }).to.deep.equal({ ssl: true, alpnH2: true, protoH2: false, systemCa: true, caFile: undefined, sni: 'grpc.internal' });
    expect(model.caCertificates).to.deep.equal([]);
  });

  it('serves no server of a split whose Services are not spoken to alike, and says why', () => {
    const model = build(
      world({
        routes: [
          route('HTTPRoute', [
            { name: 'a', port: 443, weight: 1 },
            { name: 'b', port: 443, weight: 1 },
          ]),
        ],
        policies: [policy('a', 'a', BY_CONFIG_MAP)],
      }),
    );
    const split = model.backends.find((backend) => backend.split !== undefined)!;
    expect(split.servers).to.deep.equal([]);
    expect(model.warnings.map((problem) => problem.message).join('\n')).to.include('are not all spoken to alike (BackendTLSPolicy)');
  });

  it('follows a cached build through a ConfigMap change, a policy change and the policy removed, as a fresh build does', () => {
    const stores = world({ routes: [route('HTTPRoute', [{ name: 'a', port: 443 }])], policies: [policy('a', 'a', BY_CONFIG_MAP)] });
    const cache = new MapModelCache();
    const first = build(stores, cache);
    const servers = backendOf(first, 'default_a_443').servers;
    expect(servers).to.have.length(1);

    stores.get('configmaps')!.upsert(caMap(SELF_SIGNED_CERT));
    const changedCa = build(stores, cache);
    expect(changedCa.caCertificates.map((ca) => ca.pem)).to.deep.equal([SELF_SIGNED_CERT]);
    expect(changedCa).to.deep.equal(build(stores));

    stores.get('backendtlspolicies')!.upsert(policy('a', 'a', { ...BY_CONFIG_MAP, hostname: 'other.internal' }));
    const renamed = build(stores, cache);
    expect(backendOf(renamed, 'default_a_443').transport?.sni).to.equal('other.internal');
    expect(backendOf(renamed, 'default_a_443').servers).to.equal(servers);
    expect(renamed).to.deep.equal(build(stores));

    stores.get('backendtlspolicies')!.delete(policy('a', 'a', BY_CONFIG_MAP));
    const removed = build(stores, cache);
    expect(backendOf(removed, 'default_a_443').transport).to.equal(undefined);
    expect(removed.caCertificates).to.deep.equal([]);
    expect(removed).to.deep.equal(build(stores));
  });

  it('serves an Ingress to the same Service port with the policy’s TLS, telling an Ingress that asks for TLS of its own', () => {
    const annotated = (annotations: Record<string, string>) => {
      const object = ingress('shop', { rules: [rule('shop.example.com', path('/', 'a', 443))] });
      return { ...object, metadata: { ...object.metadata, annotations } };
    };
    const policies = [policy('a', 'a', BY_CONFIG_MAP)];
    const plain = build(world({ routes: [], policies, ingresses: [annotated({})] }));
    expect(backendOf(plain, 'default_a_443').transport?.sni).to.equal('api.internal');
    expect(plain.warnings).to.deep.equal([]);
    const own = build(world({ routes: [], policies, ingresses: [annotated({ 'haproxy.org/server-ssl': 'true', 'haproxy.org/server-sni': 'shop.internal' })] }));
    expect(backendOf(own, 'default_a_443').transport?.sni).to.equal('api.internal');
    expect(own.warnings.map((problem) => `${problem.object} ${problem.message}`)).to.deep.equal([
      'Ingress default/shop backend default_a_443 speaks TLS as BackendTLSPolicy default/a says for its Service port, not as these settings ask (protocol)',
    ]);
  });

  it('after TLS Terminate speaks TLS to the Service port on a backend of its own; Passthrough keeps the plain one; a cached build follows the policy', () => {
    const stores = world({ routes: [], policies: [policy('a', 'a', BY_CONFIG_MAP)], tlsRoutes: [tlsRoute('ended', 'terminate', 'a'), tlsRoute('passed', 'passthrough', 'a')] });
    const cache = new MapModelCache();
    const first = build(stores, cache);
    const l4 = (model: MapModel) => Object.fromEntries(model.l4.backends.map((backend) => [backend.name, backend.transport?.verifyHost ?? 'plain']));
    expect(l4(first)).to.deep.equal({ l4_default_a_443: 'plain', l4_default_a_443_tls: 'api.internal' });
    expect(first.caCertificates.map((ca) => ca.file)).to.deep.equal(['default_backend-ca__configmap-ca.pem']);
    stores.get('backendtlspolicies')!.delete(policy('a', 'a', BY_CONFIG_MAP));
    const removed = build(stores, cache);
    expect(l4(removed)).to.deep.equal({ l4_default_a_443: 'plain' });
    expect(removed.caCertificates).to.deep.equal([]);
    expect(removed).to.deep.equal(build(stores));
  });

  it('keeps the backend as it was when its policy is read again unchanged', () => {
    const stores = world({ routes: [route('HTTPRoute', [{ name: 'a', port: 443 }])], policies: [policy('a', 'a', BY_CONFIG_MAP)] });
    const cache = new MapModelCache();
    const first = build(stores, cache);
    stores.get('backendtlspolicies')!.upsert(policy('a', 'a', BY_CONFIG_MAP));
    const again = build(stores, cache);
    expect(again.backends).to.equal(first.backends);
    expect(again).to.deep.equal(first);
  });
});
