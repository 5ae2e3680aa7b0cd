import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { CompiledPath, WatchedResource } from '../../../lib/config/types.ts';
import { FirstSeen } from '../../../lib/kube/first-seen.ts';
import { ManifestIndex, otherVersionOf, withNamespace } from '../../../lib/kube/manifest-index.ts';
import { parseManifests, type ManifestSet } from '../../../lib/kube/manifests.ts';
import { selectionFor, withoutIgnoredFields } from '../../../lib/kube/select.ts';
import type { KubeObject, ResourceEvent } from '../../../lib/pipeline/model.ts';

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

/**
 * The index as it was before it became incremental, kept as the oracle: every
 * update recomputes everything from every file, and keeps its own first-seen
 * record with the old rule (what a read did not stamp is forgotten).
 */
class FullRecomputation {
  readonly #resources: readonly WatchedResource[];
  readonly #ignoreFields: readonly CompiledPath[];
  #lastGood = new Map<string, ManifestSet['manifests']>();
  objects = new Map<string, Map<string, KubeObject>>();
  readonly firstSeen: Map<string, string>;

  constructor(resources: readonly WatchedResource[], ignored: readonly CompiledPath[], firstSeen: Map<string, string>) {
    [this.#resources, this.#ignoreFields, this.firstSeen] = [resources, ignored, firstSeen];
  }

  update(folder: ReadonlyMap<string, ManifestSet>, now: number): { events: ResourceEvent[]; errors: string[]; firstSeenChanged: boolean } {
    const errors: string[] = [];
    const lastGood = new Map<string, ManifestSet['manifests']>();
    for (const [file, set] of folder) {
      const kept = set.errors.length === 0 ? set.manifests : this.#lastGood.get(file);
      errors.push(...set.errors.map((error) => `${error}${kept ? ' (the objects it held before keep serving)' : ''}`));
      if (kept) lastGood.set(file, kept);
    }
    this.#lastGood = lastGood;
    const id = (object: KubeObject) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const events: ResourceEvent[] = [];
    const present = new Set<string>();
    const read = new Set<KubeObject>();
    let firstSeenChanged = false;
    for (const resource of this.#resources) {
      const selects = selectionFor(resource);
      const objects = new Map<string, KubeObject>();
      const sources = new Map<string, string>();
      for (const { object, source } of [...lastGood.values()].flat()) {
        const candidate = withNamespace(object);
        if (!selects(candidate)) continue;
        read.add(object);
        const earlier = sources.get(id(candidate));
        if (earlier) errors.push(`${source}: ${candidate.kind} ${id(candidate)} is also defined in ${earlier}; this one wins`);
        sources.set(id(candidate), source);
        let stamped = candidate;
        if (candidate.metadata['creationTimestamp'] === undefined) {
          const key = `${resource.name} ${id(candidate)}`;
          present.add(key);
          if (!this.firstSeen.has(key)) [firstSeenChanged] = [true, this.firstSeen.set(key, new Date(now).toISOString())];
          stamped = { ...candidate, metadata: { ...candidate.metadata, creationTimestamp: this.firstSeen.get(key) } };
        }
        objects.set(id(candidate), withoutIgnoredFields(stamped, this.#ignoreFields));
      }
      const before = this.objects.get(resource.name) ?? new Map<string, KubeObject>();
      for (const [key, object] of objects) {
        const previous = before.get(key);
        if (!previous) events.push({ type: 'added', kind: resource.name, object });
        else if (!isDeepStrictEqual(previous, object)) events.push({ type: 'modified', kind: resource.name, object });
      }
      for (const [key, object] of before) if (!objects.has(key)) events.push({ type: 'deleted', kind: resource.name, object });
      this.objects.set(resource.name, objects);
    }
    for (const key of this.firstSeen.keys()) if (!present.has(key)) [firstSeenChanged] = [true, this.firstSeen.delete(key)];
    for (const { object, source } of [...lastGood.values()].flat()) {
      const watched = read.has(object) ? undefined : otherVersionOf(object, this.#resources);
      if (watched)
        errors.push(
          `${source}: ${object.kind} ${id(withNamespace(object))} is ${object.apiVersion}, but watchedResources.${watched.name} reads ${watched.apiVersion}: not read (write it as ${watched.apiVersion})`,
        );
    }
    return { events, errors, firstSeenChanged };
  }
}

/** A small seeded generator (mulberry32), so a failing sequence is the same on every run. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { chance: (p: number) => next() < p, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T };
}

describe('manifest index against a full recomputation', () => {
  const differential = loadControllerConfig(`
watchedResources:
  services: { apiVersion: v1, kind: Service }
  webservices: { apiVersion: v1, kind: Service, labelSelector: "app=web" }
  namespaces: { apiVersion: v1, kind: Namespace }
  ingresses: { apiVersion: networking.k8s.io/v1, kind: Ingress, namespace: shop }
  things: { apiVersion: example.com/v1, resource: things }
  grants: { apiVersion: gateway.networking.k8s.io/v1, kind: ReferenceGrant, optional: true, fallbackApiVersions: [gateway.networking.k8s.io/v1beta1] }
ignoreFields: [metadata.managedFields, "metadata.annotations['example.com/noise']"]
templates: { haproxyConfig: global }
`);
  if (!differential.ok) throw new Error(differential.errors.join('\n'));
  const config = differential.config;

  /** One document from a small world, so names collide across files and edits often change nothing that is served. */
  const documentOf = (r: ReturnType<typeof random>) => {
    const [apiVersion, kind] = r.pick([
      ['v1', 'Service'],
      ['v1', 'Service'],
      ['v1', 'Namespace'],
      ['networking.k8s.io/v1', 'Ingress'],
      ['networking.k8s.io/v1beta1', 'Ingress'],
      ['example.com/v1', 'Thing'],
      ['gateway.networking.k8s.io/v1beta1', 'ReferenceGrant'],
      ['gateway.networking.k8s.io/v1alpha2', 'ReferenceGrant'],
      ['apps/v1', 'Deployment'],
    ] as const);
    const metadata = [
      `name: ${r.pick(['a', 'b', 'c'])}`,
      ...(r.chance(0.6) ? [`namespace: ${r.pick(['default', 'shop'])}`] : []),
      ...(r.chance(0.3) ? [`creationTimestamp: "2020-01-0${r.pick(['1', '2'])}T00:00:00Z"`] : []),
      ...(r.chance(0.5) ? ['labels: {app: web}'] : []),
      ...(r.chance(0.3) ? [`annotations: {example.com/noise: "${r.pick(['1', '2'])}"}`] : []),
      ...(r.chance(0.2) ? [`managedFields: [{manager: ${r.pick(['x', 'y'])}}]`] : []),
    ];
    return `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata: {${metadata.join(', ')}}\nspec: {port: ${r.pick([80, 81])}}\n`;
  };
  const fileOf = (r: ReturnType<typeof random>, name: string): ManifestSet => {
    if (r.chance(0.08)) return parseManifests('apiVersion: v1\nkind: [Service\n', name);
    if (r.chance(0.05)) return parseManifests(`${documentOf(r)}---\napiVersion: v1\nkind: Service\nmetadata: {}\n`, name);
    const documents = Array.from({ length: r.pick([0, 1, 1, 2, 3, 4]) }, () => documentOf(r));
    if (r.chance(0.1)) return parseManifests(`apiVersion: v1\nkind: List\nitems:\n${documents.map((d) => `- ${d.trimEnd().replaceAll('\n', '\n  ')}\n`).join('')}`, name);
    return parseManifests(documents.join('---\n'), name);
  };
  const names = Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, '0')}.yaml`);

  for (const seed of [1, 2, 3, 4]) {
    it(`serves the same objects, events, errors and first-seen record as recomputing everything, over 300 random folder states (seed ${seed})`, () => {
      const r = random(seed);
      const start = { 'services default/a': '2019-01-01T00:00:00.000Z', 'things /gone': '2019-01-01T00:00:00.000Z' };
      const seen = new FirstSeen(start);
      const oracleSeen = new Map(Object.entries(start));
      // A controller configuration reading the folder: the full one, or one that watches less, whose reads forget what only the other watched.
      const reader = (watchesAll: boolean) => {
        const resources = watchesAll ? config.watchedResources : config.watchedResources.filter((resource) => !['services', 'things'].includes(resource.name));
        return {
          index: new ManifestIndex(resources, config.ignoreFields, seen),
          oracle: new FullRecomputation(resources, config.ignoreFields, oracleSeen),
          store: new Map<string, Map<string, KubeObject>>(),
        };
      };
      let [current, other] = [reader(true), reader(false)];
      let folder = new Map<string, ManifestSet>();
      for (let step = 0; step < 300; step++) {
        const next = new Map(folder);
        for (let edits = r.pick([0, 1, 1, 2, 3, 4]); edits > 0; edits--) {
          const name = r.pick(names);
          if (r.chance(0.25)) next.delete(name);
          else if (r.chance(0.1) && next.has(name)) next.set(name, { ...(next.get(name) as ManifestSet) }); // the same content parsed again
          else next.set(name, fileOf(r, name));
        }
        // Folder order is name order; now and then another, to show a later file wins whatever the order.
        const order = [...next.keys()].sort();
        folder = new Map((r.chance(0.05) ? order.reverse() : order).map((name) => [name, next.get(name) as ManifestSet]));
        // A new controller configuration: a new index on the same record; or, now and then, the one before it reading again.
        if (r.chance(0.08)) [current, other] = [r.chance(0.5) ? other : reader(r.chance(0.5)), current];
        const { index, oracle, store } = current;
        const now = Date.parse('2026-01-01T00:00:00Z') + step * 1_000;
        const got = index.update(folder, now);
        const want = oracle.update(folder, now);
        const at = `seed ${seed}, step ${step}`;
        expect(got.events, `events, ${at}`).to.deep.equal(want.events);
        expect(got.errors, `errors, ${at}`).to.deep.equal(want.errors);
        expect(got.firstSeenChanged, `first-seen changed, ${at}`).to.equal(want.firstSeenChanged);
        expect(seen.record(), `first-seen record, ${at}`).to.deep.equal(Object.fromEntries([...oracleSeen].sort(([a], [b]) => (a < b ? -1 : 1))));
        for (const event of got.events) {
          if (event.type === 'synced') continue;
          const objects = store.get(event.kind) ?? new Map<string, KubeObject>();
          const key = `${event.object.metadata.namespace ?? ''}/${event.object.metadata.name}`;
          if (event.type === 'deleted') objects.delete(key);
          else objects.set(key, event.object);
          store.set(event.kind, objects);
        }
        for (const resource of config.watchedResources)
          expect(Object.fromEntries(store.get(resource.name) ?? []), `${resource.name}, ${at}`).to.deep.equal(Object.fromEntries(oracle.objects.get(resource.name) ?? []));
      }
    });
  }
});

describe('manifest index cost', () => {
  it('reads and stamps only the file that changed when 1 of 10,000 did', () => {
    let stamps = 0;
    const counted = new (class extends FirstSeen {
      override stamp(key: string, object: KubeObject, now: number): KubeObject {
        stamps += 1;
        return super.stamp(key, object, now);
      }
    })();
    let reads = 0;
    // A parse whose objects the index counts as it takes them.
    const setOf = (name: string, port: number): ManifestSet => {
      const manifests = [{ object: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port }] } }, source: `${name}.yaml#1` }];
      return {
        errors: [],
        get manifests() {
          reads += 1;
          return manifests;
        },
      };
    };
    const folder = new Map(Array.from({ length: 10_000 }, (_, i) => [`web-${i}.yaml`, setOf(`web-${i}`, 80)] as const));
    const index = new ManifestIndex(watchedResources, ignoreFields, counted);
    expect(index.update(folder, 1_000).events).to.have.length(10_000);
    expect([reads, stamps], 'the first update reads every file').to.deep.equal([10_000, 10_000]);
    [reads, stamps] = [0, 0];
    folder.set('web-5000.yaml', setOf('web-5000', 8080));
    const { events, errors, firstSeenChanged } = index.update(folder, 2_000);
    expect(summary(events)).to.deep.equal(['modified services default/web-5000']);
    expect([errors, firstSeenChanged]).to.deep.equal([[], false]);
    expect([reads, stamps], 'the changed file alone').to.deep.equal([1, 1]);
    [reads, stamps] = [0, 0];
    folder.delete('web-5000.yaml');
    expect(summary(index.update(folder, 3_000).events)).to.deep.equal(['deleted services default/web-5000']);
    expect(counted.record()).to.not.have.property('services default/web-5000');
    expect([reads, stamps], 'nothing to read when a file goes').to.deep.equal([0, 0]);
  });
});
