import { expect } from 'chai';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { onlyStatusChanged } from '../../../lib/store/status-only.ts';

const stored: KubeObject = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace: 'default', name: 'web', resourceVersion: '7', generation: 2, annotations: { a: '1' }, managedFields: [{ manager: 'kubectl' }] },
  spec: { rules: [{ host: 'web.example.com' }] },
  status: { loadBalancer: {} },
} as KubeObject;

describe('onlyStatusChanged', () => {
  it('is true for a status write: the status, resourceVersion and managedFields changed, nothing else', () => {
    const written = {
      ...stored,
      metadata: { ...stored.metadata, resourceVersion: '8', managedFields: [{ manager: 'kubectl' }, { manager: 'haproxy-template-ic', subresource: 'status' }] },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } },
    } as KubeObject;
    expect(onlyStatusChanged(stored, written)).to.equal(true);
  });

  it('is true for an object that gains its first status', () => {
    const { status: _status, ...bare } = stored as KubeObject & { status: unknown };
    expect(onlyStatusChanged(bare as KubeObject, { ...stored, metadata: { ...stored.metadata, resourceVersion: '8' } })).to.equal(true);
  });

  for (const [what, changed] of [
    ['the spec', { ...stored, spec: { rules: [{ host: 'api.example.com' }] } }],
    ['the generation', { ...stored, metadata: { ...stored.metadata, generation: 3 } }],
    ['an annotation', { ...stored, metadata: { ...stored.metadata, annotations: { a: '2' } } }],
    ['a label', { ...stored, metadata: { ...stored.metadata, labels: { tier: 'web' } } }],
    ['a top-level field besides spec', { ...stored, data: { key: 'value' } }],
  ] as const) {
    it(`is false when ${what} changed too`, () => {
      const incoming = { ...changed, metadata: { ...changed.metadata, resourceVersion: '8' }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } } as KubeObject;
      expect(onlyStatusChanged(stored, incoming)).to.equal(false);
    });
  }
});
