import { expect } from 'chai';
import { compilePath } from '../../lib/config/json-path.ts';
import type { WatchedResource } from '../../lib/config/types.ts';
import type { InformerHandlers, InformerSpec } from '../../lib/kube/informer.ts';
import type { KubeObject, ResourceEvent } from '../../lib/pipeline/model.ts';
import { informerEvents, type StartInformer } from '../../streams/informer-events.ts';
import { watchedObjects } from '../../streams/watched-objects.ts';

/**
 * The informer adapters, driven by hand: a stand-in StartInformer records
 * what each informer was asked to watch and hands its handlers to the spec,
 * which plays the events a real informer delivers (the real one runs against
 * the fake API server in spec/lib/kube/informer.spec.ts).
 */

class Informers {
  readonly started: { spec: InformerSpec; handlers: InformerHandlers; stopped: boolean }[] = [];
  readonly start: StartInformer = (spec, handlers) => {
    const entry = { spec, handlers, stopped: false };
    this.started.push(entry);
    return { stop: async () => void (entry.stopped = true) };
  };
}

const ingress = (name: string, className: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace: 'shop', name, managedFields: [{ manager: 'kubectl' }] },
  spec: { ingressClassName: className },
  ...extra,
});

const resource: WatchedResource = {
  name: 'ingresses',
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  resource: 'ingresses',
  namespace: 'shop',
  labelSelector: 'team=web',
  fieldSelector: [{ path: compilePath('spec.ingressClassName'), operator: '=', value: 'haproxy' }],
  indexBy: [],
  relations: [],
  validationWebhook: false,
};

describe('informerEvents', () => {
  it('asks the API server for the namespace and labels, and applies the field selector itself', () => {
    const informers = new Informers();
    const events: ResourceEvent[] = [];
    informerEvents({ resources: [resource], ignoreFields: [compilePath('metadata.managedFields')], start: informers.start, restarting: () => {} }).subscribe((e) => events.push(e));
    const [{ spec, handlers }] = informers.started as [(typeof informers.started)[0]];
    const { transform, ...asked } = spec;
    expect(asked).to.deep.equal({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', resource: 'ingresses', namespace: 'shop', labelSelector: 'team=web' });
    // The informer drops ignored fields before it keeps an object, so its cache holds no copy with them.
    expect(transform!(ingress('web', 'haproxy')).metadata).to.not.have.property('managedFields');

    handlers.event('added', ingress('web', 'haproxy'));
    handlers.synced();
    // Leaving the field selector's selection is a deletion for the stores.
    handlers.event('modified', ingress('web', 'nginx'));
    handlers.event('added', ingress('other', 'nginx'));
    expect(events.map((e) => (e.type === 'synced' ? 'synced' : `${e.type} ${e.object.metadata.name}`))).to.deep.equal(['added web', 'synced', 'deleted web', 'deleted other']);
    // Ignored fields never reach the stores.
    const first = events[0] as Extract<ResourceEvent, { object: KubeObject }>;
    expect(first.object.metadata).to.not.have.property('managedFields');
    expect(first.kind).to.equal('ingresses');
  });

  it('reports restarts by resource and stops every informer on unsubscribe', () => {
    const informers = new Informers();
    const restarts: string[] = [];
    const subscription = informerEvents({
      resources: [resource, { ...resource, name: 'ingresses-too' }],
      ignoreFields: [],
      start: informers.start,
      restarting: (name, reason, delayMs) => restarts.push(`${name} ${reason} ${delayMs}`),
    }).subscribe();
    informers.started[1]!.handlers.restarting('500 Internal Server Error', 1000);
    expect(restarts).to.deep.equal(['ingresses-too 500 Internal Server Error 1000']);
    subscription.unsubscribe();
    expect(informers.started.map((i) => i.stopped)).to.deep.equal([true, true]);
  });

  it('errors with what handling an event throws, never throwing it back into the informer', () => {
    const informers = new Informers();
    const errors: unknown[] = [];
    informerEvents({
      resources: [resource],
      ignoreFields: [],
      start: informers.start,
      restarting: () => {
        throw new Error('metrics broke');
      },
    }).subscribe({ error: (error: unknown) => errors.push(error) });
    const [started] = informers.started as [(typeof informers.started)[0]];
    expect(() => started.handlers.restarting('watch ended', 100)).to.not.throw();
    expect(errors.map((error) => (error as Error).message)).to.deep.equal(['metrics broke']);
    // Ended by the error: its informers are stopped like on unsubscribe.
    expect(started.stopped).to.equal(true);
  });
});

describe('watchedObjects', () => {
  it('emits nothing before the LIST is in, then the whole set after every change', () => {
    const informers = new Informers();
    const sets: string[][] = [];
    const subscription = watchedObjects(informers.start, { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'haproxy' }, () => {}).subscribe((objects) =>
      sets.push([...objects.keys()]),
    );
    const { handlers } = informers.started[0]!;
    const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'haproxy', name } });
    handlers.event('added', configMap('a'));
    handlers.event('added', configMap('b'));
    expect(sets).to.deep.equal([]);
    handlers.synced();
    handlers.event('deleted', configMap('a'));
    expect(sets).to.deep.equal([['haproxy/a', 'haproxy/b'], ['haproxy/b']]);
    subscription.unsubscribe();
    expect(informers.started[0]!.stopped).to.equal(true);
  });

  it('errors with what handling an event throws, never throwing it back into the informer', () => {
    const informers = new Informers();
    const errors: unknown[] = [];
    watchedObjects(informers.start, { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'haproxy' }, () => {}).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    const [started] = informers.started as [(typeof informers.started)[0]];
    // An object without metadata (no real informer delivers one) cannot be keyed.
    expect(() => started.handlers.event('added', {} as KubeObject)).to.not.throw();
    expect(errors.map((error) => (error as Error).name)).to.deep.equal(['TypeError']);
    expect(started.stopped).to.equal(true);
  });
});
