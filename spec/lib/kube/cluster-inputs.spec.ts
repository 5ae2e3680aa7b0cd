import { expect } from 'chai';
import { controllerCandidate } from '../../../lib/kube/controller-candidate.ts';
import { loadBalancerWrites, publishedAddresses, publishes } from '../../../lib/kube/ingress-status.ts';
import { normaliseObject } from '../../../lib/kube/normalise.ts';
import { podEndpoint } from '../../../lib/kube/pod-endpoints.ts';
import { collectionPath, objectPath } from '../../../lib/kube/resource-path.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const byName = (...objects: KubeObject[]) => new Map(objects.map((object) => [object.metadata.name, object]));

describe('resource paths', () => {
  it('puts core types under /api and groups under /apis, namespaced or across namespaces', () => {
    expect(collectionPath('v1', 'pods', 'haproxy')).to.equal('/api/v1/namespaces/haproxy/pods');
    expect(collectionPath('networking.k8s.io/v1', 'ingresses')).to.equal('/apis/networking.k8s.io/v1/ingresses');
    expect(objectPath('networking.k8s.io/v1', 'ingresses', 'shop', 'web', 'status')).to.equal('/apis/networking.k8s.io/v1/namespaces/shop/ingresses/web/status');
  });
});

describe('normaliseObject', () => {
  it('gives LIST items (no kind) the shape WATCH objects have', () => {
    const listed = { metadata: { name: 'a', creationTimestamp: '2024-01-01T00:00:00Z' } } as unknown as KubeObject;
    expect(normaliseObject(listed, 'v1', 'Service')).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a', creationTimestamp: '2024-01-01T00:00:00Z' },
    });
    const watched = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', creationTimestamp: '2024-01-01T00:00:00Z' } };
    expect(normaliseObject(watched, 'v1', 'Service')).to.deep.equal(watched);
  });
});

describe('controllerCandidate', () => {
  const configMap = { metadata: { name: 'haproxy-config' }, data: { 'config.yaml': 'debounce: 1s\n' } };
  const secret = { metadata: { name: 'creds' }, data: { dataplane_username: b64('admin'), dataplane_password: b64('s3cret') } };

  it('takes the configuration text and decodes the credentials', () => {
    expect(controllerCandidate('haproxy-config', 'creds', byName(configMap), byName(secret))).to.deep.equal({
      text: 'debounce: 1s\n',
      username: 'admin',
      password: 's3cret',
      problems: [],
      sources: [],
    });
  });

  it('names every missing object and key', () => {
    expect(controllerCandidate('haproxy-config', 'creds', byName(), byName()).problems).to.deep.equal(['ConfigMap haproxy-config not found', 'Secret creds not found']);
    const empty = controllerCandidate(
      'haproxy-config',
      'creds',
      byName({ metadata: { name: 'haproxy-config' }, data: {} }),
      byName({ metadata: { name: 'creds' }, data: { dataplane_username: b64('admin') } }),
    );
    expect(empty.problems).to.deep.equal(['ConfigMap haproxy-config has no key config.yaml', 'Secret creds has no key dataplane_password']);
  });
});

describe('controllerCandidate with templates kept in other objects (GitOps)', () => {
  const secret = { metadata: { name: 'creds' }, data: { dataplane_username: b64('admin'), dataplane_password: b64('pw') } };
  const config = [
    'templates:',
    '  haproxyConfig:',
    '    fromSecret: { name: flux-haproxy, key: haproxy.cfg }',
    '  maps:',
    '    host.map:',
    '      fromConfigMap: { name: maps, key: host.map }',
    '',
  ].join('\n');
  const configMap = { metadata: { name: 'haproxy-config' }, data: { 'config.yaml': config } };

  it('substitutes each referenced key and lists where the templates came from', () => {
    const flux = { metadata: { name: 'flux-haproxy' }, data: { 'haproxy.cfg': b64('global\n  maxconn 10\n') } };
    const maps = { metadata: { name: 'maps' }, data: { 'host.map': '{{#x}}{{/x}}' } };
    const candidate = controllerCandidate('haproxy-config', 'creds', byName(configMap, maps), byName(secret, flux));
    expect(candidate.problems).to.deep.equal([]);
    expect(candidate.text).to.contain('haproxyConfig: |\n    global\n      maxconn 10\n');
    expect(candidate.text).to.contain("host.map: '{{#x}}{{/x}}'");
    expect(candidate.sources.map((s) => `${s.kind} ${s.name} ${s.key} ${s.at}`)).to.deep.equal([
      'Secret flux-haproxy haproxy.cfg templates.haproxyConfig',
      'ConfigMap maps host.map templates.maps.host.map',
    ]);
  });

  it('names the template whose object or key is missing', () => {
    const candidate = controllerCandidate('haproxy-config', 'creds', byName(configMap), byName(secret));
    expect(candidate.problems).to.deep.equal([
      'ConfigMap haproxy-config: templates.haproxyConfig: Secret flux-haproxy has no key haproxy.cfg',
      'ConfigMap haproxy-config: templates.maps.host.map: ConfigMap maps has no key host.map',
    ]);
  });
});

describe('podEndpoint', () => {
  const options = { scheme: 'http' as const, port: 5555, container: 'dataplaneapi' };
  const pod = (status: unknown, metadata: Record<string, unknown> = {}): KubeObject => ({ metadata: { namespace: 'haproxy', name: 'haproxy-0', ...metadata }, status });

  it('is the Data Plane API on the pod IP once its container is ready', () => {
    const ready = pod({
      podIP: '10.0.0.7',
      containerStatuses: [
        { name: 'haproxy', ready: true },
        { name: 'dataplaneapi', ready: true },
      ],
    });
    // The peer is named as HAProxy names itself in the pod (its hostname, the pod's name), at the pod's address.
    expect(podEndpoint(ready, options)).to.deep.equal({ id: 'haproxy/haproxy-0', url: 'http://10.0.0.7:5555', peer: { name: 'haproxy-0', address: '10.0.0.7' } });
    const v6 = podEndpoint(pod({ podIP: 'fd00::7', containerStatuses: [{ name: 'dataplaneapi', ready: true }] }), options);
    expect(v6?.url).to.equal('http://[fd00::7]:5555');
    expect(v6?.peer?.address).to.equal('fd00::7');
  });

  it('is nothing without an IP, with the container not ready, or while terminating', () => {
    expect(podEndpoint(pod({ containerStatuses: [{ name: 'dataplaneapi', ready: true }] }), options)).to.equal(undefined);
    expect(
      podEndpoint(
        pod({
          podIP: '10.0.0.7',
          containerStatuses: [
            { name: 'dataplaneapi', ready: false },
            { name: 'haproxy', ready: true },
          ],
        }),
        options,
      ),
    ).to.equal(undefined);
    const terminating = pod({ podIP: '10.0.0.7', containerStatuses: [{ name: 'dataplaneapi', ready: true }] }, { deletionTimestamp: '2024-01-01T00:00:00Z' });
    expect(podEndpoint(terminating, options)).to.equal(undefined);
  });
});

describe('publishedAddresses', () => {
  const service = (spec: unknown, status: unknown = {}): KubeObject => ({ metadata: { name: 'haproxy' }, spec, status });

  it('prefers load balancer addresses, then external IPs, then the cluster IP', () => {
    const balanced = service({ type: 'LoadBalancer', clusterIP: '10.96.0.9' }, { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } });
    expect(publishedAddresses(balanced)).to.deep.equal([{ hostname: 'lb.example.com' }, { ip: '203.0.113.9' }]);
    expect(publishedAddresses(service({ clusterIP: '10.96.0.9', externalIPs: ['198.51.100.2'] }))).to.deep.equal([{ ip: '198.51.100.2' }]);
    expect(publishedAddresses(service({ clusterIP: '10.96.0.9' }))).to.deep.equal([{ ip: '10.96.0.9' }]);
    expect(publishedAddresses(service({ clusterIP: 'None' }))).to.deep.equal([]);
    expect(publishedAddresses(undefined)).to.deep.equal([]);
  });

  it('tells whether an Ingress already publishes exactly those addresses', () => {
    const ingress = { metadata: { name: 'web' }, status: { loadBalancer: { ingress: [{ ip: '10.96.0.9', ports: [] }] } } };
    expect(publishes(ingress, [{ ip: '10.96.0.9' }])).to.equal(true);
    expect(publishes(ingress, [{ ip: '10.96.0.10' }])).to.equal(false);
    expect(publishes({ metadata: { name: 'new' } }, [{ ip: '10.96.0.9' }])).to.equal(false);
    // In another order, or with an empty field beside: the same addresses.
    const twice = { metadata: { name: 'web' }, status: { loadBalancer: { ingress: [{ ip: '10.96.0.9', hostname: '' }, { hostname: 'lb.example.com' }] } } };
    expect(publishes(twice, [{ hostname: 'lb.example.com' }, { ip: '10.96.0.9' }])).to.equal(true);
    expect(publishes(twice, [{ hostname: 'lb.example.com' }])).to.equal(false);
    expect(publishes({ metadata: { name: 'new' } }, [])).to.equal(true);
  });

  it('writes the Ingresses whose stored addresses differ from what the render decided: the addresses if served, none if left out', () => {
    const resource = { apiVersion: 'networking.k8s.io/v1', resource: 'ingresses' };
    const stored = (name: string, ip?: string): KubeObject => ({ metadata: { namespace: 'default', name }, ...(ip ? { status: { loadBalancer: { ingress: [{ ip }] } } } : {}) });
    const writes = loadBalancerWrites(
      [
        { resource, ingress: stored('same', '10.96.0.9'), served: true },
        { resource, ingress: stored('new'), served: true },
        { resource, ingress: stored('moved', '10.96.0.8'), served: true },
        { resource, ingress: stored('excluded', '10.96.0.9'), served: false },
        { resource, ingress: stored('never'), served: false },
      ],
      [{ ip: '10.96.0.9' }],
    );
    expect(writes.map(({ ingress, addresses }) => `${ingress.metadata.name} ${JSON.stringify(addresses)}`)).to.deep.equal([
      'new [{"ip":"10.96.0.9"}]',
      'moved [{"ip":"10.96.0.9"}]',
      'excluded []',
    ]);
  });
});

describe('normaliseObject without anything to change', () => {
  it('returns the very object, or a new top level sharing everything below it', () => {
    const watched = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', labels: { x: 'y' } }, spec: { ports: [{ port: 80 }] } };
    expect(normaliseObject(watched, 'v1', 'Service')).to.equal(watched);
    const listed = { metadata: { name: 'a' }, spec: { ports: [{ port: 80 }] } };
    const shaped = normaliseObject(listed as unknown as KubeObject, 'v1', 'Service');
    // Only the top level is new; everything below is shared.
    expect(shaped).to.not.equal(listed);
    expect(shaped['spec']).to.equal(listed.spec);
  });
});
