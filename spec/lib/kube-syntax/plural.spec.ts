import { expect } from 'chai';
import { pluralOf } from '../../../lib/kube-syntax/plural.ts';

describe('pluralOf', () => {
  it('names the resources of built-in kinds as the API server does', () => {
    const kinds: [string, string][] = [
      ['Ingress', 'ingresses'],
      ['Service', 'services'],
      ['EndpointSlice', 'endpointslices'],
      ['Secret', 'secrets'],
      ['NetworkPolicy', 'networkpolicies'],
      ['Gateway', 'gateways'],
      ['IngressClass', 'ingressclasses'],
      ['Endpoints', 'endpoints'],
    ];
    for (const [kind, plural] of kinds) expect(pluralOf(kind), kind).to.equal(plural);
  });
});
