import { expect } from 'chai';
import { objectKey } from '../../../lib/pipeline/object-key.ts';

describe('objectKey', () => {
  it('is namespace/name, with an empty namespace for a cluster-scoped object', () => {
    expect(objectKey('apps', 'web')).to.equal('apps/web');
    expect(objectKey(undefined, 'public')).to.equal('/public');
    expect(objectKey('', 'public'), 'a client that sends an empty namespace names the same object').to.equal(objectKey(undefined, 'public'));
  });
});
