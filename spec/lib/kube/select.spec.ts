import { expect } from 'chai';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { selectionFor, watchKey, watchedType, withoutIgnoredFields, writesStatusOf } from '../../../lib/kube/select.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

const loaded = loadControllerConfig(`
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    kind: Ingress
    namespace: prod
    labelSelector: "team in (web,api),!legacy"
    fieldSelector: "spec.ingressClassName=haproxy"
  widgets:
    apiVersion: example.com/v1
    resource: widgets
    fieldSelector: "status.phase!=Failed"
templates:
  haproxyConfig: global
`);
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config: ControllerConfig = loaded.config;
const [ingresses, widgets] = config.watchedResources as [ControllerConfig['watchedResources'][0], ControllerConfig['watchedResources'][0]];

function ingress(overrides: { namespace?: string; labels?: Record<string, string>; className?: string; apiVersion?: string }): KubeObject {
  return {
    apiVersion: overrides.apiVersion ?? 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: overrides.namespace ?? 'prod', labels: overrides.labels ?? { team: 'web' } },
    spec: { ingressClassName: overrides.className ?? 'haproxy' },
  };
}

describe('selecting objects for a watched resource', () => {
  it('applies API version, kind, namespace, label selector and field selector', () => {
    const selects = selectionFor(ingresses);
    expect(selects(ingress({}))).to.equal(true);
    expect(selects(ingress({ apiVersion: 'extensions/v1beta1' }))).to.equal(false);
    expect(selects(ingress({ namespace: 'dev' }))).to.equal(false);
    expect(selects(ingress({ labels: { team: 'db' } }))).to.equal(false);
    expect(selects(ingress({ labels: { team: 'api', legacy: 'yes' } }))).to.equal(false);
    expect(selects(ingress({ className: 'nginx' }))).to.equal(false);
  });

  it('matches a resource watched by plural name, and a != field selector when the field is absent', () => {
    const selects = selectionFor(widgets);
    const widget = (status?: object): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, ...(status ? { status } : {}) });
    expect(selects(widget())).to.equal(true);
    expect(selects(widget({ phase: 'Running' }))).to.equal(true);
    expect(selects(widget({ phase: 'Failed' }))).to.equal(false);
    expect(selects({ ...widget(), kind: 'Gadget' })).to.equal(false);
  });

  it('drops ignored fields before storing, without touching the original', () => {
    const object: KubeObject = {
      metadata: {
        name: 'a',
        managedFields: [{ manager: 'kubectl' }],
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'yes' },
      },
    };
    const stored = withoutIgnoredFields(object, config.ignoreFields);
    expect(stored).to.deep.equal({ metadata: { name: 'a', annotations: { keep: 'yes' } } });
    expect(object.metadata['managedFields']).to.have.length(1);
  });

  it('builds indexed stores named after the watched resources', () => {
    const stores = buildStores(config.watchedResources, new Map([['ingresses', [ingress({})]]]), config.ignoreFields);
    expect([...stores.keys()]).to.deep.equal(['ingresses', 'widgets']);
    expect(stores.get('ingresses')?.lookup('prod', 'web')).to.have.length(1);
    expect(watchedType(ingresses).kind).to.equal('ingresses');
  });

  it('marks the resources whose status the controller writes, by API group and plural, whatever the version', () => {
    expect(watchedType(ingresses).ownStatus).to.equal(true);
    expect(watchedType(widgets).ownStatus).to.equal(false);
    const written = (apiVersion: string, resource: string) => writesStatusOf({ apiVersion, resource });
    expect(
      [
        ['networking.k8s.io/v1', 'ingresses'],
        ['gateway.networking.k8s.io/v1', 'gatewayclasses'],
        ['gateway.networking.k8s.io/v1beta1', 'gateways'],
        ['gateway.networking.k8s.io/v1', 'httproutes'],
        ['gateway.networking.k8s.io/v1', 'grpcroutes'],
      ].map(([version, plural]) => written(version!, plural!)),
    ).to.deep.equal([true, true, true, true, true]);
    // Services' status is the cloud's (a template may read a load balancer's address); a core v1 kind has no group.
    expect([written('v1', 'services'), written('gateway.networking.k8s.io/v1beta1', 'referencegrants'), written('example.com/v1', 'ingresses')]).to.deep.equal([false, false, false]);
  });
});

describe('the key of a watch, kept across controller configurations', () => {
  const reload = (text: string): ControllerConfig => {
    const result = loadControllerConfig(`watchedResources:\n${text}\ntemplates:\n  haproxyConfig: global\n`);
    if (!result.ok) throw new Error(result.errors.join('\n'));
    return result.config;
  };
  const base = '  ingresses:\n    apiVersion: networking.k8s.io/v1\n    kind: Ingress\n    labelSelector: team=web\n';
  const keyOf = (edited: ControllerConfig) => watchKey(edited.watchedResources[0]!, edited.ignoreFields);

  it('is the same for a resource whose events would be the same: relations, index keys and the webhook play no part', () => {
    const same = reload(`${base}    indexBy: [metadata.name]\n    validationWebhook: true\n`);
    expect(keyOf(same)).to.equal(keyOf(reload(base)));
  });

  it('differs for what the API server is asked, the client-side selection, the store name and the ignored fields', () => {
    const keys = [
      reload(base),
      reload(base.replace('team=web', 'team=api')),
      reload(`${base}    namespace: prod\n`),
      reload(`${base}    fieldSelector: spec.ingressClassName=haproxy\n`),
      reload(base.replace('  ingresses:', '  routes:')),
      reload(`${base}ignoreFields: [metadata.annotations]\n`),
    ].map(keyOf);
    expect(new Set(keys).size).to.equal(keys.length);
  });
});
