import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { MapModel, MapModelSources } from '../../../lib/map-model/types.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import type { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { ingress, path, rule, sources } from '../ingress/fixtures.ts';
import { initialWorld, randomChanges, type WorldChange } from '../ingress/random-world.ts';

/**
 * A view model built with a cache follows each change by updating what the
 * last build left (claims per route key, host counts, backends and their
 * users); these specs hold it, after every change, to a build from nothing.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

type Stores = Map<string, IndexedStore>;

const sourcesOf = (stores: Stores, sharing: readonly string[] = []): MapModelSources => ({ ...mapModelSources(config, stores)!, sharedHostNamespaces: sharing });

/** The same stores seen as plain lists, without versions or change logs: every build compares the whole Ingress list. */
function listed(stores: Stores, sharing: readonly string[] = []): MapModelSources {
  const { stores: _stores, ingressChanges: _changes, versions: _versions, changedSince: _changedSince, ...plain } = sourcesOf(stores, sharing);
  return plain;
}

function apply(stores: Stores, change: WorldChange): void {
  const store = stores.get(change.resource)!;
  if (change.deleted) store.delete(change.object);
  else store.upsert(change.object);
}

const routeBackends = (model: MapModel) =>
  new Map([...model.exactRoutes, ...model.prefixRoutes.map((route) => ({ ...route, key: `prefix ${route.key}` }))].map((route) => [route.key, route.backend]));

const names = (objects: ReadonlySet<KubeObject>) => [...objects].map((object) => `${object.metadata.namespace}/${object.metadata.name}`).sort();

const classOf = (object: KubeObject | undefined) => (object?.['spec'] as { ingressClassName?: string } | undefined)?.ingressClassName;

describe('incremental Ingress view model', () => {
  it('gives the model a fresh build gives after every change of seeded random sequences, through change logs and through lists', () => {
    const seen = {
      conflicts: 0,
      defaultConflicts: 0,
      winnerDeleted: 0,
      classMoves: 0,
      missingBackends: 0,
      tlsWarnings: 0,
      renamedByService: 0,
      hostsRefused: 0,
      hostsChangedHands: 0,
      wildcardExclusions: 0,
      unserved: 0,
    };
    // Hosts kept per namespace (the default), shared by two namespaces, and shared by all.
    for (const [seed, sharing] of [
      [1, []],
      [2, []],
      [3, []],
      [4, ['ns-0', 'ns-1']],
      [5, ['*']],
      [6, []],
    ] as const) {
      const shape = { size: 12, namespaces: 3 };
      const stores = buildStores(config.watchedResources, initialWorld(shape), config.ignoreFields);
      const tracked = new MapModelCache();
      const plain = new MapModelCache();
      let before = buildMapModel(sourcesOf(stores, sharing), tracked);
      expect(buildMapModel(listed(stores, sharing), plain)).to.deep.equal(before);
      let step = 0;
      for (const change of randomChanges(seed, 150, shape)) {
        step++;
        const stored = stores.get(change.resource)!.get(change.object.metadata.namespace, change.object.metadata.name);
        apply(stores, change);
        const freshCache = new MapModelCache();
        const fresh = buildMapModel(sourcesOf(stores, sharing), freshCache);
        const reused = buildMapModel(sourcesOf(stores, sharing), tracked);
        expect(reused, `seed ${seed} step ${step}: through the change log`).to.deep.equal(fresh);
        expect(names(tracked.unserved), `seed ${seed} step ${step}: unserved through the change log`).to.deep.equal(names(freshCache.unserved));
        seen.unserved += freshCache.unserved.size;
        expect(buildMapModel(listed(stores, sharing), plain), `seed ${seed} step ${step}: through the list`).to.deep.equal(fresh);

        // What the sequences are meant to cover, so that a generator change cannot quietly drop it.
        const refusals = fresh.excluded.filter((problem) => problem.message.includes('belongs to namespace'));
        seen.hostsRefused += refusals.length;
        const refusedBefore = new Set(before.excluded.filter((problem) => problem.message.includes('belongs to namespace')).map((p) => `${p.object} ${p.field}`));
        if (refusedBefore.size > 0 && [...refusedBefore].some((key) => !refusals.some((p) => `${p.object} ${p.field}` === key))) seen.hostsChangedHands++;
        seen.wildcardExclusions += fresh.certificates.filter((certificate) => certificate.excludedHosts.length > 0).length;
        const messages = fresh.warnings.map((problem) => problem.message);
        seen.conflicts += messages.filter((message) => message.includes('not served here')).length;
        seen.defaultConflicts += messages.filter((message) => message.includes('sets the default backend')).length;
        seen.missingBackends += messages.filter((message) => message.includes('has no servers')).length;
        seen.tlsWarnings += messages.filter((message) => message.includes('TLS entry not served')).length;
        if (change.resource === 'ingresses' && change.deleted) {
          const was = routeBackends(before);
          if ([...routeBackends(fresh)].some(([key, backend]) => was.has(key) && was.get(key) !== backend)) seen.winnerDeleted++;
        }
        if (change.resource === 'ingresses' && stored && !change.deleted && classOf(stored) !== classOf(change.object)) seen.classMoves++;
        if (change.resource === 'services') {
          const was = routeBackends(before);
          if ([...routeBackends(fresh)].some(([key, backend]) => was.has(key) && was.get(key) !== backend)) seen.renamedByService++;
        }
        before = reused;
      }
    }
    for (const [what, count] of Object.entries(seen)) expect(count, what).to.be.above(0);
  });

  it('lets the loser of a conflict win when the winner is deleted or moves to another class', () => {
    const shape = { size: 4, namespaces: 1 };
    const stores = buildStores(config.watchedResources, initialWorld(shape), config.ignoreFields);
    const cache = new MapModelCache();
    const claim = (name: string, created: string, service: string, className = 'haproxy'): KubeObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'ns-0', resourceVersion: `${created}-${className}`, creationTimestamp: created },
      spec: {
        ingressClassName: className,
        rules: [{ host: 'app-1.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { name: 'http' } } } }] } }],
      },
    });
    const ingresses = stores.get('ingresses')!;
    const prefixBackend = () => {
      const model = buildMapModel(sourcesOf(stores), cache);
      expect(model).to.deep.equal(buildMapModel(sourcesOf(stores)));
      return { backend: model.prefixRoutes.find((route) => route.key === 'app-1.example.com/')?.backend, warnings: model.warnings.length };
    };
    // app-1 (ns-0, created 2024-01-01T00:00:01Z) holds the route; an older claim takes it, a newer one does not.
    expect(prefixBackend()).to.deep.equal({ backend: 'ns-0_svc-1_80', warnings: 0 });
    ingresses.upsert(claim('older', '2023-06-01T00:00:00Z', 'svc-2'));
    expect(prefixBackend()).to.deep.equal({ backend: 'ns-0_svc-2_80', warnings: 1 });
    ingresses.upsert(claim('newer', '2025-01-01T00:00:00Z', 'svc-3'));
    expect(prefixBackend()).to.deep.equal({ backend: 'ns-0_svc-2_80', warnings: 2 });
    ingresses.delete(claim('older', '2023-06-01T00:00:00Z', 'svc-2'));
    expect(prefixBackend()).to.deep.equal({ backend: 'ns-0_svc-1_80', warnings: 1 });
    ingresses.delete(ingresses.get('ns-0', 'app-1')!);
    expect(prefixBackend()).to.deep.equal({ backend: 'ns-0_svc-3_80', warnings: 0 });
    ingresses.upsert(claim('newer', '2025-01-01T00:00:00Z', 'svc-3', 'other'));
    expect(prefixBackend()).to.deep.equal({ backend: undefined, warnings: 0 });
  });

  it('names the first path of each Ingress using a backend without servers, whichever of its claims won last', () => {
    // "newer" loses /x to "older", so only its /y uses the missing backend; once "older" goes, /x (its first path) does too.
    const newer = ingress('newer', { created: '2025-01-01T00:00:00Z', rules: [rule('example.com', path('/x', 'missing', 80, 'Exact'), path('/y', 'missing', 80, 'Exact'))] });
    const older = ingress('older', { created: '2024-01-01T00:00:00Z', rules: [rule('example.com', path('/x', 'other', 80, 'Exact'))] });
    const cache = new MapModelCache();
    buildMapModel(sources({ ingresses: [newer, older] }), cache);
    const model = buildMapModel(sources({ ingresses: [newer] }), cache);
    expect(model).to.deep.equal(buildMapModel(sources({ ingresses: [newer] })));
    expect(model.warnings.map((problem) => problem.field)).to.deep.equal(['spec.rules[0].http.paths[0]']);
  });

  it('reads the whole list again when the change log reaches back too little', () => {
    const shape = { size: 6, namespaces: 2 };
    const stores = buildStores(config.watchedResources, initialWorld(shape), config.ignoreFields);
    const cache = new MapModelCache();
    buildMapModel(sourcesOf(stores), cache);
    for (const change of randomChanges(9, 40, shape)) apply(stores, change);
    const forgetful = sourcesOf(stores);
    const withoutLog: MapModelSources = { ...forgetful, ingressChanges: { ...forgetful.ingressChanges!, since: () => undefined } };
    expect(buildMapModel(withoutLog, cache)).to.deep.equal(buildMapModel(sourcesOf(stores)));
  });

  it('trusts versions only between builds over the same stores', () => {
    // Two sets of stores with the same versions and names but other endpoints, as validation tests build them.
    const shape = { size: 3, namespaces: 1 };
    const first = buildStores(config.watchedResources, initialWorld(shape), config.ignoreFields);
    const world = initialWorld(shape);
    const slices = world.get('endpointslices')!;
    world.set(
      'endpointslices',
      slices.map((slice) => ({ ...slice, endpoints: [{ addresses: ['127.9.9.9'], conditions: { ready: true } }] })),
    );
    const second = buildStores(config.watchedResources, world, config.ignoreFields);
    expect(second.get('endpointslices')!.version).to.equal(first.get('endpointslices')!.version);
    const cache = new MapModelCache();
    buildMapModel(sourcesOf(first), cache);
    const model = buildMapModel(sourcesOf(second), cache);
    expect(model).to.deep.equal(buildMapModel(sourcesOf(second)));
    expect(model.backends[0]!.servers.map((server) => server.address)).to.deep.equal(['127.9.9.9']);
  });
});
