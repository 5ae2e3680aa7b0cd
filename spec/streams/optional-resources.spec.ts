import { expect } from 'chai';
import type { Observable } from 'rxjs';
import type { WatchedResource } from '../../lib/config/types.ts';
import type { ResourceEvent } from '../../lib/pipeline/model.ts';
import { optionalResourceEvents } from '../../streams/optional-resources.ts';
import { testScheduler } from '../support/marbles.ts';

function watched(name: string, optional: boolean): WatchedResource {
  return {
    name,
    apiVersion: optional ? 'gateway.networking.k8s.io/v1' : 'v1',
    kind: undefined,
    resource: name,
    namespace: undefined,
    labelSelector: undefined,
    fieldSelector: [],
    indexBy: [],
    relations: [],
    validationWebhook: false,
    ...(optional ? { optional: true } : {}),
  };
}

const services = watched('services', false);
const routes = watched('httproutes', true);
const gateways = watched('gateways', true);
const event = (kind: string): ResourceEvent => ({ type: 'added', kind, object: { metadata: { name: 'x' } } });

describe('optional resources stage', () => {
  it('watches everything at once when no resource is optional, asking discovery nothing', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const asked: string[] = [];
      const events = (resources: readonly WatchedResource[]) => cold('a-|', { a: event(resources.map((r) => r.name).join(',')) });
      const result = optionalResourceEvents({ resources: [services], served: (r) => (asked.push(r.name), cold('t|', { t: true })), events, log: () => undefined });
      expectObservable(result).toBe('a-|', { a: event('services') });
      expect(asked).to.deep.equal([]);
    });
  });

  it('leaves an unserved resource unwatched, synced and empty, and says so once', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const logged: string[] = [];
      const watchedSets: string[][] = [];
      const served = (resource: WatchedResource): Observable<boolean> => (resource === routes ? cold('--f|', { f: false }) : cold('-t|', { t: true }));
      const events = (resources: readonly WatchedResource[]) => {
        watchedSets.push(resources.map((r) => r.name));
        return cold('(a|)', { a: event('services') });
      };
      // Discovery has answered for both at frame 3: the unserved store is synced there, and the rest watched from there.
      const result = optionalResourceEvents({ resources: [services, routes, gateways], served, events, log: (level, line) => logged.push(`${level} ${line}`) });
      expectObservable(result).toBe('---(sa|)', { s: { type: 'synced', kind: 'httproutes' }, a: event('services') });
      flush();
      expect(watchedSets).to.deep.equal([['services', 'gateways']]);
      expect(logged).to.have.length(1);
      expect(logged[0]).to.match(/^info watchedResources\.httproutes: the API server does not serve gateway\.networking\.k8s\.io\/v1 httproutes/);
    });
  });

  it('watches a resource discovery could not answer for, saying why', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const logged: string[] = [];
      const events = (resources: readonly WatchedResource[]) => cold('a|', { a: event(resources.map((r) => r.name).join(',')) });
      const result = optionalResourceEvents({
        resources: [services, routes],
        served: () => cold('-#', undefined, new Error('connection refused')),
        events,
        log: (level, line) => logged.push(`${level} ${line}`),
      });
      expectObservable(result).toBe('-a|', { a: event('services,httproutes') });
      flush();
      expect(logged[0]).to.match(/^warn watchedResources\.httproutes: discovery of gateway\.networking\.k8s\.io\/v1 httproutes failed \(connection refused\); watching it anyway/);
    });
  });

  it('asks discovery again for an unserved resource on every recheck, and watches it from the first time it is served', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, flush }) => {
      const logged: string[] = [];
      const watchedSets: string[][] = [];
      const answers = ['f', 'f', 't'];
      const served = (resource: WatchedResource): Observable<boolean> => (resource === routes ? cold('(a|)', { a: answers.shift() === 't' }) : cold('(t|)', { t: true }));
      const events = (resources: readonly WatchedResource[]) => {
        watchedSets.push(resources.map((r) => r.name));
        return cold('a', { a: event(resources.map((r) => r.name).join(',')) });
      };
      // Discovery says no at start and at the first recheck (frame 5), yes at the second (frame 10): the
      // CRD was installed meanwhile. Its events start there; no recheck follows.
      const result = optionalResourceEvents({
        resources: [services, routes],
        served,
        events,
        log: (level, line) => logged.push(`${level} ${line}`),
        recheck: { everyMs: 5, scheduler },
      });
      expectObservable(result, '^ 20ms !').toBe('(sa) 6ms r', { s: { type: 'synced', kind: 'httproutes' }, a: event('services'), r: event('httproutes') });
      flush();
      expect(watchedSets).to.deep.equal([['services'], ['httproutes']]);
      expect(answers).to.deep.equal([]);
      expect(logged).to.have.length(2);
      expect(logged[1]).to.match(/^info watchedResources\.httproutes: the API server serves gateway\.networking\.k8s\.io\/v1 httproutes now; watching it/);
    });
  });

  it('keeps rechecking an unserved resource when discovery fails on a recheck, without a warning each time', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, flush }) => {
      const logged: string[] = [];
      let asked = 0;
      const served = (resource: WatchedResource): Observable<boolean> => {
        if (resource !== routes) return cold('(t|)', { t: true });
        asked += 1;
        return asked === 1 ? cold('(f|)', { f: false }) : asked === 2 ? cold('#', undefined, new Error('connection refused')) : cold('(t|)', { t: true });
      };
      const events = (resources: readonly WatchedResource[]) => cold('a', { a: event(resources.map((r) => r.name).join(',')) });
      // The recheck at frame 5 fails (the API server is away): it counts as not served yet, and frame 10 asks again.
      const result = optionalResourceEvents({ resources: [services, routes], served, events, log: (level, line) => logged.push(`${level} ${line}`), recheck: { everyMs: 5, scheduler } });
      expectObservable(result, '^ 20ms !').toBe('(sa) 6ms r', { s: { type: 'synced', kind: 'httproutes' }, a: event('services'), r: event('httproutes') });
      flush();
      expect(asked).to.equal(3);
      expect(logged.map((line) => line.split(' ')[0])).to.deep.equal(['info', 'info']);
    });
  });

  it('watches a resource with fallbackApiVersions at the first version discovery serves, asking in order', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const grants: WatchedResource = { ...watched('referencegrants', true), fallbackApiVersions: ['gateway.networking.k8s.io/v1beta1'] };
      const asked: string[] = [];
      const watchedVersions: string[][] = [];
      // v1 is not served (a Gateway API release before v1.5), v1beta1 is: asked one after the other.
      const served = (resource: WatchedResource): Observable<boolean> => {
        asked.push(resource.apiVersion);
        return resource.apiVersion === 'gateway.networking.k8s.io/v1' ? cold('-(f|)', { f: false }) : cold('-(t|)', { t: true });
      };
      const events = (resources: readonly WatchedResource[]) => {
        watchedVersions.push(resources.map((r) => `${r.name} ${r.apiVersion}`));
        return cold('(a|)', { a: event('referencegrants') });
      };
      const result = optionalResourceEvents({ resources: [grants], served, events, log: () => undefined });
      expectObservable(result).toBe('--(a|)', { a: event('referencegrants') });
      flush();
      expect(asked).to.deep.equal(['gateway.networking.k8s.io/v1', 'gateway.networking.k8s.io/v1beta1']);
      expect(watchedVersions).to.deep.equal([['referencegrants gateway.networking.k8s.io/v1beta1']]);
    });
  });

  it('watches a resource served at its apiVersion there, asking nothing of its fallbackApiVersions', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const grants: WatchedResource = { ...watched('referencegrants', true), fallbackApiVersions: ['gateway.networking.k8s.io/v1beta1'] };
      const asked: string[] = [];
      const watchedVersions: string[] = [];
      const served = (resource: WatchedResource): Observable<boolean> => (asked.push(resource.apiVersion), cold('-(t|)', { t: true }));
      const events = (resources: readonly WatchedResource[]) => (watchedVersions.push(...resources.map((r) => r.apiVersion)), cold('(a|)', { a: event('referencegrants') }));
      expectObservable(optionalResourceEvents({ resources: [grants], served, events, log: () => undefined })).toBe('-(a|)', { a: event('referencegrants') });
      flush();
      expect(asked).to.deep.equal(['gateway.networking.k8s.io/v1']);
      expect(watchedVersions).to.deep.equal(['gateway.networking.k8s.io/v1']);
    });
  });

  it("says which versions it asked for when none of a resource's versions is served", () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const grants: WatchedResource = { ...watched('referencegrants', true), fallbackApiVersions: ['gateway.networking.k8s.io/v1beta1'] };
      const logged: string[] = [];
      const events = () => cold<ResourceEvent>('|');
      expectObservable(optionalResourceEvents({ resources: [grants], served: () => cold('(f|)', { f: false }), events, log: (level, line) => logged.push(`${level} ${line}`) })).toBe(
        '(s|)',
        {
          s: { type: 'synced', kind: 'referencegrants' },
        },
      );
      flush();
      expect(logged).to.deep.equal([
        'info watchedResources.referencegrants: the API server does not serve gateway.networking.k8s.io/v1 (nor gateway.networking.k8s.io/v1beta1) referencegrants (is its CRD installed?); not watched, empty',
      ]);
    });
  });
});
