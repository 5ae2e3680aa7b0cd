import { expect } from 'chai';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { lookupInEach } from '../../../lib/store/lookup-in-each.ts';

const secret = (namespace: string, name: string, type: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, type });

describe('lookupInEach', () => {
  it('answers from the first store that holds the object, skipping stores not watched, and answers nothing when none does', () => {
    const tls = new IndexedStore([]);
    const opaque = new IndexedStore([]);
    tls.upsert(secret('shop', 'cert', 'kubernetes.io/tls'));
    opaque.upsert(secret('shop', 'users', 'Opaque'));
    opaque.upsert(secret('shop', 'cert', 'Opaque'));
    const lookup = lookupInEach([undefined, tls, opaque]);
    expect(lookup('shop', 'cert')?.['type']).to.equal('kubernetes.io/tls');
    expect(lookup('shop', 'users')?.['type']).to.equal('Opaque');
    expect(lookup('other', 'users')).to.equal(undefined);
  });
});
