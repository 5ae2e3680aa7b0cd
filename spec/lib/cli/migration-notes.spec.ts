import { expect } from 'chai';
import { classNote, migrationNotes } from '../../../lib/cli/migration-notes.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

const ingress = (namespace: string, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace, name, ...(annotations === undefined ? {} : { annotations }) },
  spec,
});

describe('migration notes', () => {
  it('names the class an Ingress asks for, by field or by the older annotation (the field wins), and none', () => {
    expect(classNote(ingress('a', 'x', { ingressClassName: 'haproxy' }, { 'kubernetes.io/ingress.class': 'nginx' }), 'haproxy')).to.equal(undefined);
    expect(classNote(ingress('a', 'x', { ingressClassName: null }, { 'kubernetes.io/ingress.class': 'haproxy' }), 'haproxy')).to.equal(undefined);
    expect(classNote(ingress('a', 'x', {}, { 'kubernetes.io/ingress.class': 'nginx' }), 'haproxy')).to.match(
      /^not served: its class is "nginx", and this controller serves class "haproxy" \(ingress\.className\)/,
    );
    expect(classNote(ingress('a', 'x', {}), 'haproxy')).to.match(/^not served: it has no class/);
  });

  it('names each host an Ingress shares with another namespace, by rule or TLS entry, unless the namespaces share hosts', () => {
    const objects = [
      ingress('shop', 'web', { ingressClassName: 'haproxy', rules: [{ host: 'shop.example.com' }] }),
      ingress('api', 'api', { ingressClassName: 'haproxy', tls: [{ hosts: ['shop.example.com'] }] }),
      ingress('api', 'other', { ingressClassName: 'haproxy', rules: [{ host: 'api.example.com' }] }),
      ingress('old', 'nginx', { ingressClassName: 'nginx', rules: [{ host: 'shop.example.com' }] }),
    ];
    const notes = migrationNotes(objects, { className: 'haproxy', sharedHostNamespaces: [] });
    expect([...notes.keys()].sort()).to.deep.equal(['api/api', 'old/nginx', 'shop/web']);
    expect(notes.get('shop/web')!.hosts[0]).to.match(/^host shop\.example\.com is also claimed by Ingresses of namespace api: /);
    expect(notes.get('api/api')!.hosts[0]).to.match(/^host shop\.example\.com is also claimed by Ingresses of namespace shop: /);
    // Of another class: named for that, and no part of host sharing.
    expect(notes.get('old/nginx')).to.deep.include({ hosts: [] }).and.have.property('class');
    expect(migrationNotes(objects, { className: 'haproxy', sharedHostNamespaces: ['shop', 'api'] }).has('shop/web')).to.equal(false);
    expect(migrationNotes(objects, { className: 'haproxy', sharedHostNamespaces: ['*'] }).has('api/api')).to.equal(false);
  });
});
