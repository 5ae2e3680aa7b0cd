import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { MapModel, MapModelSources } from '../../../lib/map-model/types.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources, RouteSourcesCache } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { mulberry32 } from '../../support/fuzz-values.ts';
import { gateway, gatewayClass, httpListener, httpRoute } from '../gateway/fixtures.ts';
import { endpointSlice, ingress, path, rule, service } from '../ingress/fixtures.ts';

/**
 * Candidate lists (docs/adr/0012-header-query-method-matches.md) are
 * settled key by key: a change ranks again only the lists of the keys it
 * touched and of the longer prefixes going on through them. These specs
 * hold the model made that way, after every change of a seeded random
 * sequence, to a build from nothing: HTTPRoutes with header, query
 * parameter and method matches coming, changing and going on a few shared
 * hosts and keys, Ingress lines on the same keys.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const NAMESPACES = ['ns-0', 'ns-1'];
const SERVICES = ['svc-a', 'svc-b', 'svc-c'];
const HOSTS = ['a.example.com', 'b.example.com'];
const PATHS = ['/', '/a', '/a/', '/a/b', '/a/b/c', '/x'];
const REGEXES = ['/v[0-9]', '/a/.*'];
/** Few enough that candidates meet the same conditions on one key, and lists share their sets. */
const HEADERS = [
  [{ name: 'X-A', value: '1' }],
  [{ name: 'x-a', value: '2' }],
  [
    { name: 'X-A', value: '1' },
    { name: 'X-B', type: 'RegularExpression', value: '^b' },
  ],
];
const QUERIES = [[{ name: 'q', value: 'v' }]];
const METHODS = ['GET', 'POST'];
/** Few, so that routes tie on age and their names decide. */
const CREATED = ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z'];

function world(): Map<string, KubeObject[]> {
  const services = NAMESPACES.flatMap((namespace) => SERVICES.map((name) => service(name, [{ name: 'http', port: 80 }], namespace)));
  const slices = NAMESPACES.flatMap((namespace, n) =>
    SERVICES.map((name, s) => endpointSlice(`${name}-1`, name, [{ name: 'http', port: 80 }], [{ addresses: [`10.0.${n}.${s + 1}`], ready: true }], { namespace })),
  );
  return new Map([
    ['gatewayclasses', [gatewayClass()]],
    ['gateways', [gateway('gw', [httpListener('http', { allowedRoutes: { namespaces: { from: 'All' } } })])]],
    ['httproutes', []],
    ['ingresses', []],
    ['services', services],
    ['endpointslices', slices],
  ]);
}

interface Change {
  readonly resource: 'httproutes' | 'ingresses';
  readonly object: KubeObject;
  readonly deleted: boolean;
}

/** A seeded sequence of HTTPRoutes and Ingresses coming, changing and going. */
function* changes(seed: number, steps: number): Generator<Change> {
  const random = mulberry32(seed);
  const below = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;
  const routes = new Map<string, KubeObject>();
  const ingresses = new Map<string, KubeObject>();
  let made = 0;

  const match = () => {
    const regex = random() < 0.1;
    const type = regex ? 'RegularExpression' : pick(['PathPrefix', 'PathPrefix', 'PathPrefix', 'Exact']);
    const conditional = random() < 0.65;
    return {
      path: { type, value: regex ? pick(REGEXES) : pick(PATHS) },
      ...(conditional && random() < 0.7 ? { headers: pick(HEADERS) } : {}),
      ...(conditional && random() < 0.3 ? { queryParams: pick(QUERIES) } : {}),
      ...(conditional && random() < 0.3 ? { method: pick(METHODS) } : {}),
    };
  };
  const route = (name: string, namespace: string, created: string) =>
    httpRoute(
      name,
      {
        parentRefs: [{ name: 'gw', namespace: 'infra' }],
        // Now and then no hostname: the listener's, any host.
        ...(random() < 0.1 ? {} : { hostnames: random() < 0.2 ? HOSTS : [pick(HOSTS)] }),
        rules: Array.from({ length: 1 + below(2) }, () => ({
          matches: Array.from({ length: 1 + below(3) }, match),
          backendRefs: [{ name: pick(SERVICES), port: 80 }],
        })),
      },
      namespace,
      created,
    );
  const ingressOf = (name: string, namespace: string, created: string) =>
    ingress(name, {
      namespace,
      created,
      rules: [rule(pick(HOSTS), ...Array.from({ length: 1 + below(2) }, () => path(pick(PATHS), pick(SERVICES), 80, pick(['Prefix', 'Prefix', 'Exact']))))],
    });
  const key = (object: KubeObject) => `${object.metadata.namespace}/${object.metadata.name}`;

  for (let step = 0; step < steps; step++) {
    const kind = random();
    if (routes.size < 3 || kind < 0.3) {
      const object = route(`route-${made++}`, pick(NAMESPACES), pick(CREATED));
      routes.set(key(object), object);
      yield { resource: 'httproutes', object, deleted: false };
    } else if (kind < 0.6) {
      // Its matches, hosts and backends change; its age stays.
      const before = pick([...routes.values()]);
      const object = route(before.metadata.name, before.metadata.namespace!, before.metadata['creationTimestamp'] as string);
      routes.set(key(object), object);
      yield { resource: 'httproutes', object, deleted: false };
    } else if (kind < 0.75) {
      const object = pick([...routes.values()]);
      routes.delete(key(object));
      yield { resource: 'httproutes', object, deleted: true };
    } else if (ingresses.size < 2 || kind < 0.85) {
      const object = ingressOf(`ingress-${made++}`, pick(NAMESPACES), pick(CREATED));
      ingresses.set(key(object), object);
      yield { resource: 'ingresses', object, deleted: false };
    } else if (kind < 0.93) {
      const before = pick([...ingresses.values()]);
      const object = ingressOf(before.metadata.name, before.metadata.namespace!, before.metadata['creationTimestamp'] as string);
      ingresses.set(key(object), object);
      yield { resource: 'ingresses', object, deleted: false };
    } else {
      const object = pick([...ingresses.values()]);
      ingresses.delete(key(object));
      yield { resource: 'ingresses', object, deleted: true };
    }
  }
}

describe('candidate lists settled key by key', () => {
  it('give the model a fresh build gives after every change of seeded random sequences, keeping the candidates.map lines that did not change', () => {
    const seen = { lists: 0, fallbacks: 0, overShorter: 0, shadowed: 0, regexConditions: 0, listsGone: 0, keptCandidates: 0 };
    // Hosts shared by everyone (Ingress and HTTPRoute lines meet on every key), and kept per namespace.
    for (const [seed, sharing] of [
      [29, ['*']],
      [30, []],
    ] as const) {
      const stores = buildStores(config.watchedResources, world(), config.ignoreFields);
      // The HTTPRoutes' translations kept too, as the controller keeps them: a change reads only the routes that changed.
      const routeCache = new RouteSourcesCache();
      const sourcesOf = (kept?: RouteSourcesCache): MapModelSources => ({ ...mapModelSources(config, stores, kept)!, sharedHostNamespaces: sharing });
      const cache = new MapModelCache();
      let before: MapModel = buildMapModel(sourcesOf(routeCache), cache);
      let step = 0;
      for (const change of changes(seed, 220)) {
        step++;
        const store = stores.get(change.resource)!;
        if (change.deleted) store.delete(change.object);
        else store.upsert(change.object);
        const model = buildMapModel(sourcesOf(routeCache), cache);
        expect(model, `seed ${seed} step ${step}`).to.deep.equal(buildMapModel(sourcesOf()));

        // A candidates.map line that did not change is the line from before: the renderer and the deploy planner reuse what they made of it.
        const earlier = new Map(before.candidates.map((line) => [line.key, line]));
        for (const line of model.candidates) {
          const kept = earlier.get(line.key);
          if (kept?.value !== line.value) continue;
          expect(line, `seed ${seed} step ${step}: ${line.key}`).to.equal(kept);
          seen.keptCandidates++;
        }
        if (model.candidates.length === before.candidates.length && model.candidates.every((line, i) => line === before.candidates[i])) {
          expect(model.candidates, `seed ${seed} step ${step}: the same lines, the same list`).to.equal(before.candidates);
        }

        // What the sequences are meant to cover, so that a generator change cannot quietly drop it.
        const lists = [...model.exactRoutes, ...model.prefixRoutes].filter((line) => line.backend.startsWith('?'));
        seen.lists += lists.length;
        seen.fallbacks += model.candidates.filter((line) => line.key.endsWith('/') && line.value !== '999=').length;
        // A prefix list over a shorter prefix line of its host: it may go on through it.
        seen.overShorter += model.prefixRoutes.filter(
          (line) => line.backend.startsWith('?') && model.prefixRoutes.some((shorter) => shorter.key.length < line.key.length && line.key.startsWith(shorter.key)),
        ).length;
        seen.shadowed += model.warnings.filter((problem) => problem.message.includes('with the same header, query parameter and method matches')).length;
        seen.regexConditions += model.regexConditions.length;
        const listed = new Set(lists.map((line) => line.backend));
        const listedBefore = [...before.exactRoutes, ...before.prefixRoutes].filter((line) => line.backend.startsWith('?')).map((line) => line.backend);
        if (listedBefore.some((id) => !listed.has(id))) seen.listsGone++;
        before = model;
      }
    }
    for (const [what, count] of Object.entries(seen)) expect(count, what).to.be.above(0);
  });
});
