import { expect } from 'chai';
import { backendChoice, backendUses, CHOICE_FIELDS } from '../../../lib/map-model/backend-choice.ts';
import type { BackendRef } from '../../../lib/map-model/claim-types.ts';
import { ModelSource } from '../../../lib/map-model/model-source.ts';
import { routePolicy } from '../../../lib/map-model/route-policies.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

/**
 * The choice between backendRefs with filters of their own: a path map
 * value the frontend reads (templates/config.yaml), the weights in it.
 */

const object: KubeObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'shop', namespace: 'infra' } };
const source = new ModelSource('HTTPRoute', object, 'spec.rules[0].matches[0]');
const backend = (service: string, port = 80): BackendRef => ({ name: `infra_${service}_${port}`, namespace: 'infra', service, port: { number: port } });
const policy = routePolicy({ requestHeaders: { set: [{ name: 'X-Ref', value: 'a' }] } }, '/', source)!;

describe('a choice between backendRefs with filters of their own', () => {
  it('is a map value of the total, then each share as its cumulative bound, backend and policy key', () => {
    const choice = backendChoice('infra', 'shop', 2, [
      { backend: backend('a'), weight: 3, policy },
      { backend: backend('b'), weight: 0, policy: undefined },
      { backend: backend('c'), weight: 1, policy: undefined },
    ]) as BackendRef;
    expect(choice.name).to.equal(`~4~3@infra_a_80:${policy.key}~3@infra_b_80~4@infra_c_80`);
    expect([choice.namespace, choice.service, choice.port]).to.deep.equal(['infra', 'shop', { number: 2 }]);
    // The safe-word characters (lib/escape.ts), with none of the separators the frontend cuts a candidate's value at.
    expect(choice.name).to.match(/^[A-Za-z0-9._~:@]+$/);
  });

  it('changes only its name with the weights', () => {
    const shares = (a: number, b: number) => [
      { backend: backend('a'), weight: a, policy },
      { backend: backend('b'), weight: b, policy: undefined },
    ];
    const before = backendChoice('infra', 'shop', 0, shares(3, 1)) as BackendRef;
    const after = backendChoice('infra', 'shop', 0, shares(1, 4)) as BackendRef;
    expect([before.name, after.name]).to.deep.equal([`~4~3@infra_a_80:${policy.key}~4@infra_b_80`, `~5~1@infra_a_80:${policy.key}~5@infra_b_80`]);
    // The same backends and policies: no configuration line changes.
    const uses = (choice: BackendRef) => backendUses({ backend: choice, policy: undefined }).map((use) => [use.backend.name, use.policy?.key]);
    expect(uses(after)).to.deep.equal(uses(before));
  });

  it('gives the frontend one field per backendRef a rule may have, after the total', () => {
    expect(CHOICE_FIELDS).to.deep.equal([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
  });

  it('refuses a choice longer than a map value may be', () => {
    const long = (index: number) => backend(`service-with-a-rather-long-name-for-its-purpose-${String(index).padStart(2, '0')}`, 65535);
    const shares = Array.from({ length: 16 }, (_, index) => ({ backend: long(index), weight: 1_000_000, policy }));
    const refused = backendChoice('infra', 'shop', 0, shares);
    expect(refused)
      .to.have.property('reason')
      .that.matches(/^backendRefs with filters of their own whose choice takes \d+ characters \(a map value takes 1024\)$/);
  });

  it('uses the backend and policy of a route without a choice, and each share of one', () => {
    const plain = { backend: backend('a'), policy };
    expect(backendUses(plain)).to.deep.equal([plain]);
    const shares = [
      { backend: backend('a'), weight: 1, policy },
      { backend: backend('a'), weight: 1, policy: undefined },
    ];
    expect(backendUses({ backend: backendChoice('infra', 'shop', 0, shares) as BackendRef, policy: undefined })).to.deep.equal(shares);
  });
});
