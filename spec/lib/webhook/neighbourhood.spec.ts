import { expect } from 'chai';
import { compilePath } from '../../../lib/config/json-path.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { IngressNeighbourhood } from '../../../lib/webhook/neighbourhood.ts';
import { ingress, path, rule } from '../ingress/fixtures.ts';

/** Which stored Ingresses a proposed object is decided with, kept in line with the store through its change log. */

const names = (objects: readonly KubeObject[]) => objects.map((object) => `${object.metadata.namespace}/${object.metadata.name}`).sort();
const at = (host: string | undefined, name: string, fields: Parameters<typeof ingress>[1] = {}) => ingress(name, { rules: [rule(host, path('/', 'web', 'http'))], ...fields });

function storeOf(...objects: KubeObject[]): IndexedStore {
  const store = new IndexedStore([compilePath('metadata.namespace').get, compilePath('metadata.name').get]);
  for (const object of objects) store.upsert(object);
  return store;
}

describe('IngressNeighbourhood', () => {
  it('finds the Ingresses sharing a host, a wildcard over it, a catch-all route, a TLS Secret or the default backend', () => {
    const store = storeOf(
      at('shop.example.com', 'same-host'),
      at('*.example.com', 'wildcard'),
      at('other.example.com', 'other-host'),
      at(undefined, 'catch-all'),
      ingress('catch-all-elsewhere', { rules: [rule(undefined, path('/elsewhere', 'web', 'http'))] }),
      ingress('tls', { tls: [{ hosts: ['tls.example.com'], secretName: 'shop-tls' }] }),
      ingress('default-old', { created: '2020-01-01T00:00:00Z', defaultBackend: { service: { name: 'web', port: { number: 80 } } } }),
      ingress('default-young', { created: '2025-01-01T00:00:00Z', defaultBackend: { service: { name: 'web', port: { number: 80 } } } }),
      at('shop.example.com', 'other-class', { className: 'nginx' }),
    );
    const neighbourhood = new IngressNeighbourhood('haproxy');
    neighbourhood.follow(store);
    expect(names(neighbourhood.neighboursOf(at('shop.example.com', 'new'), 'ingress'))).to.deep.equal(['default/same-host', 'default/wildcard']);
    expect(names(neighbourhood.neighboursOf(at('*.example.com', 'new'), 'ingress'))).to.deep.equal(['default/other-host', 'default/same-host', 'default/tls', 'default/wildcard']);
    expect(names(neighbourhood.neighboursOf(at(undefined, 'new'), 'ingress'))).to.deep.equal(['default/catch-all']);
    expect(names(neighbourhood.neighboursOf(ingress('new', { defaultBackend: { service: { name: 'api', port: { number: 80 } } } }), 'ingress'))).to.deep.equal(['default/default-old']);
    expect(names(neighbourhood.neighboursOf({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'default', name: 'shop-tls' } }, 'secret'))).to.deep.equal(['default/tls']);
    expect(names(neighbourhood.neighboursOf({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'web' } }, 'service'))).to.deep.equal([
      'default/catch-all',
      'default/catch-all-elsewhere',
      'default/default-old',
      'default/default-young',
      'default/other-host',
      'default/same-host',
      'default/wildcard',
    ]);
  });

  it('never counts the stored version of the proposed Ingress among its neighbours', () => {
    const store = storeOf(at('shop.example.com', 'shop'), at('shop.example.com', 'twin'));
    const neighbourhood = new IngressNeighbourhood('haproxy');
    neighbourhood.follow(store);
    expect(names(neighbourhood.neighboursOf(at('shop.example.com', 'shop'), 'ingress'))).to.deep.equal(['default/twin']);
  });

  it('follows changes through the change log, and the whole store after a gap too long for it', () => {
    const store = storeOf(at('shop.example.com', 'a'));
    const neighbourhood = new IngressNeighbourhood('haproxy');
    neighbourhood.follow(store);
    const proposed = at('shop.example.com', 'new');
    store.upsert(at('shop.example.com', 'b'));
    store.upsert({ ...at('moved.example.com', 'a'), metadata: { ...at('x', 'a').metadata, resourceVersion: '2' } });
    neighbourhood.follow(store);
    expect(names(neighbourhood.neighboursOf(proposed, 'ingress'))).to.deep.equal(['default/b']);
    store.delete(at('shop.example.com', 'b'));
    neighbourhood.follow(store);
    expect(neighbourhood.neighboursOf(proposed, 'ingress')).to.deep.equal([]);
    for (let version = 3; version < 3000; version++) store.upsert({ ...at('churn.example.com', 'churn'), metadata: { ...at('x', 'churn').metadata, resourceVersion: String(version) } });
    store.upsert(at('shop.example.com', 'c'));
    expect(store.changesSince(5)).to.equal(undefined);
    neighbourhood.follow(store);
    expect(names(neighbourhood.neighboursOf(proposed, 'ingress'))).to.deep.equal(['default/c']);
  });
});
