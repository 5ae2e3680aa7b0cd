import { expect } from 'chai';
import { admissionResponse, readAdmissionReview } from '../../../lib/webhook/admission-review.ts';

/** An AdmissionReview as the API server's CreateV1AdmissionReview writes one. */
const review = (request: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { namespace: 'shop', name: 'web' }, spec: {} };
const create = {
  uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
  kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
  resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
  requestKind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
  requestResource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
  name: 'web',
  namespace: 'shop',
  operation: 'CREATE',
  userInfo: { username: 'admin', groups: ['system:authenticated'] },
  object: ingress,
  oldObject: null,
  dryRun: false,
  options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
};

describe('AdmissionReview', () => {
  describe('readAdmissionReview', () => {
    it('reads what the API server sends for a CREATE', () => {
      const read = readAdmissionReview(review(create));
      expect(read).to.deep.equal({
        ok: true,
        request: {
          uid: create.uid,
          resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
          subResource: '',
          kind: 'Ingress',
          operation: 'CREATE',
          namespace: 'shop',
          name: 'web',
          object: ingress,
          oldObject: undefined,
          dryRun: false,
        },
      });
    });

    it('reads an UPDATE with both objects, a subresource and a dry run', () => {
      const read = readAdmissionReview(review({ ...create, operation: 'UPDATE', oldObject: ingress, subResource: 'status', dryRun: true }));
      expect(read.ok && read.request).to.deep.include({ operation: 'UPDATE', oldObject: ingress, subResource: 'status', dryRun: true });
    });

    const refused: [string, unknown, string][] = [
      ['a body that is not an object', [], 'the body is not a JSON object'],
      [
        'another apiVersion',
        { ...review(create), apiVersion: 'admission.k8s.io/v1beta1' },
        'expected an AdmissionReview of admission.k8s.io/v1, got kind "AdmissionReview" of "admission.k8s.io/v1beta1"',
      ],
      ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'the AdmissionReview has no request'],
      ['no uid', review({ ...create, uid: '' }), 'request.uid is missing'],
      ['an unknown operation', review({ ...create, operation: 'PATCH' }), 'request.operation "PATCH" is not CREATE, UPDATE, DELETE or CONNECT'],
      ['an object without metadata', review({ ...create, object: { spec: {} } }), 'request.object and request.oldObject must be Kubernetes objects'],
    ];
    for (const [what, body, reason] of refused) {
      it(`refuses ${what}`, () => {
        expect(readAdmissionReview(body)).to.deep.equal({ ok: false, reason });
      });
    }
  });

  describe('admissionResponse', () => {
    it('allows with the request uid, as VerifyAdmissionResponse requires', () => {
      expect(admissionResponse('u-1', { allowed: true })).to.deep.equal({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u-1', allowed: true } });
    });

    it('denies as 403 Forbidden with the message kubectl prints', () => {
      expect(admissionResponse('u-2', { allowed: false, message: 'spec.rules[0].host: invalid host' })).to.deep.equal({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'u-2', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'spec.rules[0].host: invalid host' } },
      });
    });

    it('keeps warnings few, short and on one line', () => {
      const warnings = ['a\nb', 'x'.repeat(300), ...Array.from({ length: 12 }, (_, i) => `w${i}`)];
      const sent = (admissionResponse('u-3', { allowed: true, warnings }).response as { warnings: string[] }).warnings;
      expect(sent).to.have.length(10);
      expect(sent[0]).to.equal('a b');
      expect(sent[1]).to.have.length(256);
      expect(sent[1]!.endsWith('…')).to.equal(true);
    });
  });
});
