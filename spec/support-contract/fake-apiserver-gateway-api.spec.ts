/**
 * What the controller depends on when the fake serves the Gateway API
 * kinds, as a cluster with the standard-channel CRDs installed serves them
 * (config/crd/standard in kubernetes-sigs/gateway-api): discovery of the
 * group, GatewayClass cluster-scoped, status written only through the
 * status subresource, and a status PATCH carrying a stale resourceVersion
 * refused with 409 (apiserver's generic registry Store.Update compares the
 * object's resourceVersion with the stored one:
 * staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go).
 */
import { expect } from 'chai';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { eventually } from '../support/eventually.ts';
import { kubeConnectionFromFile, type KubeConnection } from '../../lib/kube/kube-connection.ts';
import { kubeRequest, KubeRequestError } from '../../lib/kube/kube-request.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { GATEWAY_API_TYPES } from '../support/fake-apiserver/gateway-api-types.ts';

describe('fake API server: Gateway API kinds', () => {
  let fake: FakeApiServer;
  let kubeConfig: KubeConfig;
  let connection: KubeConnection;

  beforeEach(async () => {
    fake = await startFakeApiServer({ customResources: GATEWAY_API_TYPES });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(fake.kubeconfigPath);
    connection = kubeConnectionFromFile(fake.kubeconfigPath);
  });

  afterEach(() => fake.close());

  it('lists the group and its resources, with status subresources, in discovery', async () => {
    const groups = (await kubeRequest(connection, { method: 'GET', path: '/apis' })) as { groups: { name: string; versions: { groupVersion: string }[] }[] };
    const group = groups.groups.find((entry) => entry.name === 'gateway.networking.k8s.io');
    expect(group!.versions.map((version) => version.groupVersion)).to.deep.equal(['gateway.networking.k8s.io/v1', 'gateway.networking.k8s.io/v1beta1']);
    const v1 = (await kubeRequest(connection, { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1' })) as { resources: { name: string; namespaced: boolean }[] };
    const served = ['gatewayclasses:false', 'gatewayclasses/status:false', 'gateways:true', 'gateways/status:true', 'httproutes:true', 'httproutes/status:true', 'referencegrants:true'];
    // GRPCRoute's and ListenerSet's CRDs serve v1 alone.
    expect(v1.resources.map((resource) => `${resource.name}:${resource.namespaced}`)).to.deep.equal([
      ...served.slice(0, 4),
      'listenersets:true',
      'listenersets/status:true',
      ...served.slice(4, 6),
      'grpcroutes:true',
      'grpcroutes/status:true',
      ...served.slice(6),
    ]);
    const v1beta1 = (await kubeRequest(connection, { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1beta1' })) as { resources: { name: string; namespaced: boolean }[] };
    expect(v1beta1.resources.map((resource) => `${resource.name}:${resource.namespaced}`)).to.deep.equal(served);
  });

  it('serves one object at both versions, each with its own apiVersion, to reads, lists and watches', async () => {
    const seen: string[] = [];
    const watch = await new Watch(kubeConfig).watch(
      '/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants',
      {},
      (type, object: { apiVersion: string }) => seen.push(`${type} ${object.apiVersion}`),
      () => undefined,
    );
    try {
      const grant = { apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'g' }, spec: { from: [], to: [] } };
      await kubeRequest(connection, { method: 'POST', path: '/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/referencegrants', body: grant });
      const read = (await kubeRequest(connection, { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants/g' })) as { apiVersion: string };
      expect(read.apiVersion).to.equal('gateway.networking.k8s.io/v1');
      const listed = (await kubeRequest(connection, { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1/referencegrants' })) as { items: { apiVersion: string }[] };
      expect(listed.items.map((item) => item.apiVersion)).to.deep.equal(['gateway.networking.k8s.io/v1']);
      // Created at one version, it exists at the other: a second create there conflicts.
      const again = await kubeRequest(connection, {
        method: 'POST',
        path: '/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants',
        body: { ...grant, apiVersion: 'gateway.networking.k8s.io/v1' },
      }).catch((caught: unknown) => caught);
      expect(again).to.be.instanceOf(KubeRequestError).with.property('status', 409);
      await eventually(
        async () => seen,
        (events) => events.length > 0,
        'the watch at v1 to see the write at v1beta1',
      );
      expect(seen).to.deep.equal(['ADDED gateway.networking.k8s.io/v1']);
      expect(fake.get({ apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', namespace: 'default', name: 'g' })!['apiVersion']).to.equal(
        'gateway.networking.k8s.io/v1beta1',
      );
    } finally {
      watch.abort();
    }
  });

  it('answers 404 for the group when the CRDs are not installed', async () => {
    const bare = await startFakeApiServer();
    try {
      const error = await kubeRequest(kubeConnectionFromFile(bare.kubeconfigPath), { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1' }).catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(KubeRequestError).with.property('status', 404);
    } finally {
      await bare.close();
    }
  });

  it('serves GatewayClasses cluster-scoped and keeps status out of main-resource writes', async () => {
    fake.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'haproxy' }, spec: { controllerName: 'x.io/y' }, status: { conditions: [] } });
    const stored = (await kubeRequest(connection, { method: 'GET', path: '/apis/gateway.networking.k8s.io/v1/gatewayclasses/haproxy' })) as {
      status?: unknown;
      metadata: { generation: number };
    };
    expect(stored.status).to.equal(undefined);
    expect(stored.metadata.generation).to.equal(1);
    await kubeRequest(connection, { method: 'PATCH', path: '/apis/gateway.networking.k8s.io/v1/gatewayclasses/haproxy/status', body: { status: { conditions: [{ type: 'Accepted' }] } } });
    const written = fake.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', name: 'haproxy' })!;
    expect(written['status']).to.deep.equal({ conditions: [{ type: 'Accepted' }] });
    // A status write moves neither spec nor generation.
    expect(written.metadata!['generation']).to.equal(1);
  });

  it('refuses a status PATCH whose resourceVersion is stale with 409', async () => {
    const created = fake.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { namespace: 'default', name: 'r' }, spec: {} });
    const stale = String(created.metadata!['resourceVersion']);
    fake.patch({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'default', name: 'r' }, { spec: { hostnames: ['a.example.com'] } });
    const error = await kubeRequest(connection, {
      method: 'PATCH',
      path: '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r/status',
      body: { metadata: { resourceVersion: stale }, status: { parents: [] } },
    }).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(KubeRequestError).with.property('status', 409);
  });
});
