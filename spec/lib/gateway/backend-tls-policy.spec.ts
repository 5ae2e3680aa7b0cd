import { expect } from 'chai';
import { ancestorsOf, gatewaysByPort, readBackendTlsPolicies } from '../../../lib/gateway/backend-tls-policy.ts';
import { backendTlsPolicyStatus } from '../../../lib/gateway/status.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { caConfigMap } from './fixtures.ts';

const V1 = 'gateway.networking.k8s.io/v1';

function policy(name: string, spec: Record<string, unknown>, created = '2026-01-01T00:00:00Z', namespace = 'apps'): KubeObject {
  return { apiVersion: V1, kind: 'BackendTLSPolicy', metadata: { namespace, name, creationTimestamp: created, generation: 2 }, spec };
}

const target = (name: string, sectionName?: string) => ({ group: '', kind: 'Service', name, ...(sectionName ? { sectionName } : {}) });
const configMapRef = (name: string) => ({ group: '', kind: 'ConfigMap', name });

/** A Service with an https port (443) and a metrics port (9443). */
const api: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { namespace: 'apps', name: 'api' },
  spec: {
    ports: [
      { name: 'https', port: 443 },
      { name: 'metrics', port: 9443 },
    ],
  },
};

const lookups = {
  service: (namespace: string, name: string) => (namespace === 'apps' && name === 'api' ? api : undefined),
  configMap: (namespace: string, name: string) => (namespace === 'apps' && name === 'ca' ? caConfigMap('apps', 'ca') : undefined),
};

const conditionsOf = (read: ReturnType<typeof readBackendTlsPolicies>, name: string) =>
  read.outcomes.find((outcome) => outcome.object.metadata.name === name)!.conditions.map((condition) => `${condition.type}=${condition.status}/${condition.reason}`);

describe('readBackendTlsPolicies', () => {
  it('attaches TLS verified against a ConfigMap CA, with the hostname as SNI and verified name, to every port of the Service', () => {
    const read = readBackendTlsPolicies([policy('p', { targetRefs: [target('api')], validation: { caCertificateRefs: [configMapRef('ca')], hostname: 'api.internal' } })], lookups);
    const tls = {
      protocol: { version: 'h1', tls: true, verifyCa: { namespace: 'apps', name: 'ca', configMap: true }, sni: 'api.internal', verifyHost: 'api.internal' },
      by: 'BackendTLSPolicy apps/p',
    };
    expect(Object.fromEntries(read.byPort)).to.deep.equal({ 'apps/api/443': tls, 'apps/api/9443': tls });
    expect(conditionsOf(read, 'p')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  });

  it('applies a policy naming a port (sectionName) to that port alone, before one naming the whole Service', () => {
    const read = readBackendTlsPolicies(
      [
        policy('whole', { targetRefs: [target('api')], validation: { wellKnownCACertificates: 'System', hostname: 'whole.internal' } }),
        policy('metrics', { targetRefs: [target('api', 'metrics')], validation: { wellKnownCACertificates: 'System', hostname: 'metrics.internal' } }, '2026-02-01T00:00:00Z'),
      ],
      lookups,
    );
    const sni = (key: string) => {
      const tls = read.byPort.get(key);
      return tls && 'protocol' in tls ? tls.protocol.sni : undefined;
    };
    expect([sni('apps/api/443'), sni('apps/api/9443')]).to.deep.equal(['whole.internal', 'metrics.internal']);
    expect(read.outcomes.map((outcome) => outcome.ports)).to.deep.equal([['apps/api/443'], ['apps/api/9443']]);
  });

  it('the wellKnownCACertificates System is the system bundle', () => {
    const read = readBackendTlsPolicies([policy('p', { targetRefs: [target('api', 'https')], validation: { wellKnownCACertificates: 'System', hostname: 'api.example.com' } })], lookups);
    const tls = read.byPort.get('apps/api/443');
    expect(tls && 'protocol' in tls && tls.protocol.verifyCa).to.equal('system');
  });

  it('of two policies on the same target, the older applies and the newer is Conflicted; of the same age, the first by namespace/name', () => {
    const spec = (hostname: string) => ({ targetRefs: [target('api', 'https')], validation: { wellKnownCACertificates: 'System', hostname } });
    const read = readBackendTlsPolicies(
      [policy('b-newer', spec('newer.internal'), '2026-03-01T00:00:00Z'), policy('c-same-age', spec('c.internal')), policy('a-first', spec('a.internal'))],
      lookups,
    );
    const tls = read.byPort.get('apps/api/443');
    expect(tls && 'protocol' in tls && tls.protocol.sni).to.equal('a.internal');
    expect(conditionsOf(read, 'a-first')[0]).to.equal('Accepted=True/Accepted');
    expect(conditionsOf(read, 'c-same-age')[0]).to.equal('Accepted=False/Conflicted');
    expect(conditionsOf(read, 'b-newer')[0]).to.equal('Accepted=False/Conflicted');
  });

  it('a missing ConfigMap is InvalidCACertificateRef, another kind InvalidKind: not accepted (NoValidCACertificate), and its Service port refuses requests', () => {
    const read = readBackendTlsPolicies(
      [
        policy('missing', { targetRefs: [target('api', 'https')], validation: { caCertificateRefs: [configMapRef('nope')], hostname: 'api.internal' } }),
        policy('secret', { targetRefs: [target('api', 'metrics')], validation: { caCertificateRefs: [{ group: '', kind: 'Secret', name: 'ca' }], hostname: 'api.internal' } }),
      ],
      lookups,
    );
    expect(conditionsOf(read, 'missing')).to.deep.equal(['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidCACertificateRef']);
    expect(conditionsOf(read, 'secret')).to.deep.equal(['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidKind']);
    expect(read.byPort.get('apps/api/443')).to.deep.equal({
      refused: 'BackendTLSPolicy apps/missing: spec.validation.caCertificateRefs[0]: ConfigMap apps/nope is not found',
      by: 'BackendTLSPolicy apps/missing',
    });
    expect(read.byPort.get('apps/api/9443')).to.have.property('refused').that.includes('kind "Secret" is not supported');
  });

  it('one Hostname subjectAltName is the verified name (the hostname stays the SNI); a URI, or two names, cannot be checked: Invalid and refused', () => {
    const validation = (subjectAltNames: unknown[]) => ({ wellKnownCACertificates: 'System', hostname: 'sni.internal', subjectAltNames });
    const one = readBackendTlsPolicies([policy('p', { targetRefs: [target('api', 'https')], validation: validation([{ type: 'Hostname', hostname: 'cert.internal' }]) })], lookups);
    const tls = one.byPort.get('apps/api/443');
    expect(tls && 'protocol' in tls && [tls.protocol.sni, tls.protocol.verifyHost]).to.deep.equal(['sni.internal', 'cert.internal']);
    for (const names of [
      [{ type: 'URI', uri: 'spiffe://cluster.local/sa/api' }],
      [
        { type: 'Hostname', hostname: 'a.internal' },
        { type: 'Hostname', hostname: 'b.internal' },
      ],
    ]) {
      const read = readBackendTlsPolicies([policy('p', { targetRefs: [target('api', 'https')], validation: validation(names) })], lookups);
      expect(conditionsOf(read, 'p')).to.deep.equal(['Accepted=False/Invalid', 'ResolvedRefs=True/ResolvedRefs']);
      expect(read.byPort.get('apps/api/443')).to.have.property('refused').that.includes('subjectAltNames');
    }
  });

  it('an unknown wellKnownCACertificates, or options (none is implemented), are Invalid', () => {
    const read = readBackendTlsPolicies(
      [
        policy('custom', { targetRefs: [target('api', 'https')], validation: { wellKnownCACertificates: 'example.com/cas', hostname: 'a.internal' } }),
        policy('options', { targetRefs: [target('api', 'metrics')], validation: { wellKnownCACertificates: 'System', hostname: 'a.internal' }, options: { 'example.com/min-tls': '1.3' } }),
      ],
      lookups,
    );
    expect(conditionsOf(read, 'custom')[0]).to.equal('Accepted=False/Invalid');
    expect(conditionsOf(read, 'options')[0]).to.equal('Accepted=False/Invalid');
    expect(read.byPort.get('apps/api/9443')).to.have.property('refused');
  });
});

describe('BackendTLSPolicy status', () => {
  const gatewayRoute = (accepted: boolean, port: number) => ({
    parents: [{ parent: { namespace: 'infra', name: 'gw' }, acceptance: { accepted } }],
    records: [{ backends: [{ namespace: 'apps', service: 'api', port }] }],
  });

  it('names, as ancestors, the Gateways that accepted routes to the Service ports the policy applies to', () => {
    const read = readBackendTlsPolicies([policy('p', { targetRefs: [target('api', 'https')], validation: { wellKnownCACertificates: 'System', hostname: 'a.internal' } })], lookups);
    const byPort = gatewaysByPort([gatewayRoute(true, 443), gatewayRoute(false, 9443)]);
    const ancestors = ancestorsOf(read.outcomes[0]!, byPort);
    expect(ancestors).to.deep.equal([{ namespace: 'infra', name: 'gw' }]);
    const status = backendTlsPolicyStatus(read.outcomes[0]!, ancestors, 'example.com/ours', '2026-11-28T00:00:00Z');
    expect(status).to.deep.equal({
      ancestors: [
        {
          ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
          controllerName: 'example.com/ours',
          conditions: [
            { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted', observedGeneration: 2, lastTransitionTime: '2026-11-28T00:00:00Z' },
            { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'all references resolved', observedGeneration: 2, lastTransitionTime: '2026-11-28T00:00:00Z' },
          ],
        },
      ],
    });
  });

  it('writes nothing for a policy no route uses, and removes only its own entries once none does', () => {
    const read = readBackendTlsPolicies([policy('p', { targetRefs: [target('api', 'https')], validation: { wellKnownCACertificates: 'System', hostname: 'a.internal' } })], lookups);
    expect(backendTlsPolicyStatus(read.outcomes[0]!, [], 'example.com/ours', '2026-11-28T00:00:00Z')).to.equal(undefined);
    const theirs = { ancestorRef: { name: 'x' }, controllerName: 'example.com/theirs', conditions: [] };
    const stored = {
      ...read.outcomes[0]!,
      object: { ...read.outcomes[0]!.object, status: { ancestors: [theirs, { ancestorRef: { name: 'gw' }, controllerName: 'example.com/ours', conditions: [] }] } },
    };
    expect(backendTlsPolicyStatus(stored, [], 'example.com/ours', '2026-11-28T00:00:00Z')).to.deep.equal({ ancestors: [theirs] });
  });
});
