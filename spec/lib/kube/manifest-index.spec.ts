import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { FirstSeen } from '../../../lib/kube/first-seen.ts';
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

  it('hands on the objects an unchanged file made before, the same ones, and makes those of a changed file again', () => {
    const index = new ManifestIndex(watchedResources, ignoreFields, new FirstSeen({}));
    const kept = parseManifests(service('web'), 'web.yaml');
    const first = index.update(new Map([['web.yaml', kept], ...files({ 'api.yaml': service('api') })]), 1_000);
    const made = first.events.find((event) => event.type === 'added' && event.object.metadata.name === 'web');
    // The same parse of web.yaml (the folder read parses only what changed) and a changed api.yaml.
    const second = index.update(new Map([['web.yaml', kept], ...files({ 'api.yaml': service('api', 8080) })]), 2_000);
    expect(summary(second.events)).to.deep.equal(['modified services default/api']);
    // web.yaml changed: its object is made again, stamped with the time it was first seen.
    const third = index.update(new Map([...files({ 'web.yaml': service('web', 9090) }), ...files({ 'api.yaml': service('api', 8080) })]), 3_000);
    const remade = third.events.find((event) => event.type === 'modified');
    expect(summary(third.events)).to.deep.equal(['modified services default/web']);
    expect(remade && 'object' in remade ? remade.object.metadata['creationTimestamp'] : undefined).to.equal(made && 'object' in made ? made.object.metadata['creationTimestamp'] : 'none');
    expect(made && 'object' in made ? made.object.metadata['creationTimestamp'] : undefined).to.equal(new Date(1_000).toISOString());
  });

  it('reads the Gateway API kinds the shipped configuration watches, GatewayClasses without a namespace', async () => {
    const shipped = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!shipped.ok) throw new Error(shipped.errors.join('\n'));
    const index = new ManifestIndex(shipped.config.watchedResources, shipped.config.ignoreFields);
    const gatewayApi = [
      'apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: haproxy}\nspec: {controllerName: haproxy-template-ic.io/gateway-controller}\n',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec: {gatewayClassName: haproxy, listeners: [{name: http, port: 80, protocol: HTTP}]}\n',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: shop}\nspec: {parentRefs: [{name: gw, namespace: default}]}\n',
      'apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g}\nspec: {from: [], to: []}\n',
    ].join('---\n');
    expect(summary(index.update(files({ 'gateway.yaml': gatewayApi })).events)).to.deep.equal([
      'added gatewayclasses /haproxy',
      'added gateways default/gw',
      'added httproutes shop/web',
      'added referencegrants default/g',
    ]);
  });

  it('names an object written at another version of a watched kind, which it does not read, and reads the watched versions', async () => {
    const shipped = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!shipped.ok) throw new Error(shipped.errors.join('\n'));
    const index = new ManifestIndex(shipped.config.watchedResources, shipped.config.ignoreFields);
    const grant = (version: string, name: string) =>
      `apiVersion: gateway.networking.k8s.io/${version}\nkind: ReferenceGrant\nmetadata: {name: ${name}, namespace: apps}\nspec: {from: [], to: []}\n`;
    // A Deployment is no watched kind at any version: ignored without a word, as any other unwatched object.
    const deployment = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n';
    const route = 'apiVersion: gateway.networking.k8s.io/v1beta1\nkind: HTTPRoute\nmetadata: {name: old, namespace: apps}\nspec: {}\n';
    // ReferenceGrants at v1 and at v1beta1 (its fallbackApiVersions) alike.
    const result = index.update(files({ 'grants.yaml': `${grant('v1', 'new')}---\n${grant('v1beta1', 'old')}---\n${deployment}---\n${route}` }));
    expect(summary(result.events)).to.deep.equal(['added referencegrants apps/new', 'added referencegrants apps/old']);
    expect(result.errors).to.deep.equal([
      'grants.yaml#4: HTTPRoute apps/old is gateway.networking.k8s.io/v1beta1, but watchedResources.httproutes reads gateway.networking.k8s.io/v1: not read (write it as gateway.networking.k8s.io/v1)',
    ]);
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

  it('gives objects without a creationTimestamp the time they were first seen, across indexes (a new configuration), and says when the record changed', () => {
    const seen = new FirstSeen();
    const first = new ManifestIndex(watchedResources, ignoreFields, seen).update(files({ 'a.yaml': service('web') }), Date.parse('2026-01-01T00:00:00Z'));
    expect(first.firstSeenChanged).to.equal(true);
    expect(first.events.map((e) => ('object' in e ? e.object.metadata['creationTimestamp'] : undefined))).to.deep.equal(['2026-01-01T00:00:00.000Z']);
    const again = new ManifestIndex(watchedResources, ignoreFields, seen);
    const later = again.update(files({ 'a.yaml': service('web'), 'b.yaml': service('api', 80, ', creationTimestamp: "2020-01-01T00:00:00Z"') }), Date.parse('2026-02-01T00:00:00Z'));
    expect(later.firstSeenChanged, 'web known, api has its own').to.equal(false);
    expect(later.events.map((e) => ('object' in e ? `${e.object.metadata.name} ${String(e.object.metadata['creationTimestamp'])}` : e.type))).to.deep.equal([
      'web 2026-01-01T00:00:00.000Z',
      'api 2020-01-01T00:00:00Z',
    ]);
  });
});
