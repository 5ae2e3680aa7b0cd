import { expect } from 'chai';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { ManifestIndex } from '../../../lib/kube/manifest-index.ts';
import { parseManifests } from '../../../lib/kube/manifests.ts';

const loaded = loadControllerConfig(`
watchedResources:
  services: { apiVersion: v1, kind: Service }
  namespaces: { apiVersion: v1, kind: Namespace }
templates: { haproxyConfig: global }
`);
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const { watchedResources, ignoreFields } = loaded.config;

const service = (name: string, port = 80, extra = '') => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}${extra}}\nspec: {ports: [{port: ${port}}]}\n`;
const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([file, text]) => [file, parseManifests(text, file)]));
const summary = (events: { type: string; kind: string; object?: { metadata: { namespace?: string; name: string } } }[]) =>
  events.map((e) => `${e.type} ${e.kind} ${e.object?.metadata.namespace ?? ''}/${e.object?.metadata.name ?? ''}`);

describe('manifest index', () => {
  it('turns re-reads into added, modified and deleted events per watched resource', () => {
    const index = new ManifestIndex(watchedResources, ignoreFields);
    const first = index.update(files({ 'a.yaml': `${service('web')}---\n${service('api')}`, 'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n' }));
    expect(summary(first.events)).to.deep.equal(['added services default/web', 'added services default/api', 'added namespaces /shop']);
    const second = index.update(files({ 'a.yaml': `${service('web', 8080)}`, 'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n' }));
    expect(summary(second.events)).to.deep.equal(['modified services default/web', 'deleted services default/api']);
    expect(index.update(files({ 'a.yaml': `${service('web', 8080)}`, 'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n' })).events).to.deep.equal([]);
  });

  it('keeps what a file held when an edit breaks it, and names the file', () => {
    const index = new ManifestIndex(watchedResources, ignoreFields);
    index.update(files({ 'a.yaml': service('web') }));
    const broken = index.update(files({ 'a.yaml': 'apiVersion: v1\nkind: [Service\n' }));
    expect(broken.events).to.deep.equal([]);
    expect(broken.errors).to.have.length(1);
    expect(broken.errors[0]).to.match(/^a\.yaml: .*\(the objects it held before keep serving\)$/);
    expect(summary(index.update(files({})).events)).to.deep.equal(['deleted services default/web']);
  });

  it('reports an object defined twice and lets the later file win', () => {
    const index = new ManifestIndex(watchedResources, ignoreFields);
    const result = index.update(files({ 'a.yaml': service('web', 80), 'b.yaml': service('web', 81) }));
    expect(result.errors).to.deep.equal(['b.yaml#1: Service default/web is also defined in a.yaml#1; this one wins']);
    expect(result.events).to.have.length(1);
    expect(result.events[0]).to.deep.include({ type: 'added' });
  });

  it('drops ignored fields, so their churn is no change', () => {
    const index = new ManifestIndex(watchedResources, ignoreFields);
    index.update(files({ 'a.yaml': service('web', 80, ', managedFields: [{manager: a}]') }));
    expect(index.update(files({ 'a.yaml': service('web', 80, ', managedFields: [{manager: b}]') })).events).to.deep.equal([]);
  });
});
