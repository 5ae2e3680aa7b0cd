import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig, WatchedResource } from '../../../lib/config/types.ts';
import { describeObject } from '../../../lib/object-fields/names.ts';
import type { KubeObject, Problem } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import type { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { judge } from '../../../lib/webhook/judge.ts';
import { IngressNeighbourhood } from '../../../lib/webhook/neighbourhood.ts';
import { renderWorld, smallWorld } from '../../../lib/webhook/small-world.ts';
import { LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY, UNRELATED_KEY } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service, tlsSecret } from '../ingress/fixtures.ts';
import { initialWorld, randomChanges } from '../ingress/random-world.ts';

/**
 * The webhook decides on the object and its neighbours only. These specs
 * hold that decision to the pipeline's: what a render of the whole cluster
 * says of an object is what the render of its small world says, for every
 * object of seeded random clusters; and each reason the pipeline leaves an
 * object out is a denial naming the field.
 */

function configFrom(text: string): ControllerConfig {
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

const shipped = configFrom(readFileSync(defaultConfigPath(), 'utf8'));
const resourceOf = (config: ControllerConfig, name: string): WatchedResource => config.watchedResources.find((r) => r.name === name)!;

type Stores = Map<string, IndexedStore>;

function storesOf(config: ControllerConfig, objects: Record<string, readonly KubeObject[]>): Stores {
  return buildStores(config.watchedResources, new Map(Object.entries(objects)), config.ignoreFields);
}

function decide(config: ControllerConfig, stores: Stores, resource: string, object: KubeObject) {
  const neighbourhood = new IngressNeighbourhood(config.ingress.className);
  neighbourhood.follow(stores.get('ingresses')!);
  return judge(config, stores, resourceOf(config, resource), object, neighbourhood);
}

const web = service('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'shop');
const webSlice = endpointSlice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'], ready: true }], { namespace: 'shop' });
const cluster = () => storesOf(shipped, { services: [web], endpointslices: [webSlice] });
const shop = (fields: Parameters<typeof ingress>[1] = {}) => ingress('shop', { namespace: 'shop', rules: [rule('shop.example.com', path('/', 'web', 'http'))], ...fields });

describe('webhook judge', () => {
  describe('decides on the small world as a render of the whole cluster would', () => {
    const sameProblems = (label: string, full: readonly Problem[], small: readonly Problem[]) => {
      const own = (problems: readonly Problem[]) => problems.filter((problem) => problem.object === label);
      expect(own(small), label).to.deep.equal(own(full));
    };

    it('for every Ingress of seeded random clusters, stored already (UPDATE) or not yet (CREATE)', () => {
      let compared = 0;
      let withProblems = 0;
      for (const seed of [11, 12, 13, 14]) {
        const shape = { size: 30, namespaces: 3 };
        const stores = storesOf(shipped, Object.fromEntries(initialWorld(shape)));
        for (const change of randomChanges(seed, 200, shape)) {
          const store = stores.get(change.resource)!;
          if (change.deleted) store.delete(change.object);
          else store.upsert(change.object);
        }
        const full = createRenderer(shipped, routingViews)({ stores });
        const neighbourhood = new IngressNeighbourhood('haproxy');
        neighbourhood.follow(stores.get('ingresses')!);
        for (const object of stores.get('ingresses')!.list()) {
          const label = describeObject('Ingress', object.metadata.namespace, object.metadata.name);
          const updated = renderWorld(shipped, smallWorld(shipped, stores, resourceOf(shipped, 'ingresses'), object, neighbourhood));
          sameProblems(label, full.excluded, updated.excluded);
          sameProblems(label, full.warnings, updated.warnings);
          // As a creation: the stores without it, the object proposed.
          const without = storesOf(shipped, Object.fromEntries([...stores].map(([name, store]) => [name, store.list().filter((o) => o !== object)])));
          const apart = new IngressNeighbourhood('haproxy');
          apart.follow(without.get('ingresses')!);
          const created = renderWorld(shipped, smallWorld(shipped, without, resourceOf(shipped, 'ingresses'), object, apart));
          sameProblems(label, full.excluded, created.excluded);
          sameProblems(label, full.warnings, created.warnings);
          compared++;
          if ([...full.excluded, ...full.warnings].some((problem) => problem.object === label)) withProblems++;
        }
      }
      // The clusters must exercise conflicts and exclusions, or the comparison proves little.
      expect(compared).to.be.greaterThan(100);
      expect(withProblems).to.be.greaterThan(20);
    });
  });

  describe('denies, naming the field', () => {
    const denied: [string, KubeObject, string][] = [
      ['an invalid host', shop({ rules: [rule('Shop_Example.com', path('/', 'web', 'http'))] }), 'spec.rules[0].host: invalid host: '],
      ['a path that is not absolute', shop({ rules: [rule('shop.example.com', path('api', 'web', 'http'))] }), 'spec.rules[0].http.paths[0].path: invalid path: '],
      [
        'an unknown path type',
        shop({ rules: [rule('shop.example.com', path('/', 'web', 'http', 'Regex'))] }),
        'spec.rules[0].http.paths[0].pathType: "Regex" is not Exact, Prefix or ImplementationSpecific',
      ],
      [
        'a Service name that is not one',
        shop({ rules: [rule('shop.example.com', path('/', 'Web_1', 'http'))] }),
        'spec.rules[0].http.paths[0].backend.service.name: "Web_1" is not a Service name',
      ],
      [
        'a port out of range',
        shop({ rules: [rule('shop.example.com', path('/', 'web', 70000))] }),
        'spec.rules[0].http.paths[0].backend.service.port.number: 70000 is not a port number (1-65535)',
      ],
      ['an invalid TLS host', shop({ tls: [{ hosts: ['shop example.com'], secretName: 'shop-tls' }] }), 'spec.tls[0].hosts[0]: invalid host: '],
      [
        'a default backend without a Service',
        shop({ defaultBackend: { resource: { kind: 'Bucket', name: 'b' } } }),
        'spec.defaultBackend.resource: resource backends are not supported; use a Service',
      ],
    ];
    for (const [what, object, reason] of denied) {
      it(what, () => {
        const judgement = decide(shipped, cluster(), 'ingresses', object);
        expect(judgement.denials).to.have.length(1);
        expect(judgement.denials[0]).to.satisfy((denial: string) => denial.startsWith(reason), judgement.denials[0]);
        expect(judgement.contribution).to.equal(undefined);
      });
    }

    it('a value its template line cannot take (the writer excludes the object)', () => {
      const config = configFrom(`
watchedResources:
  ingresses: { apiVersion: networking.k8s.io/v1, kind: Ingress, validationWebhook: true }
templates:
  haproxyConfig: |
    global
    {{#resources.ingresses}}
    # owner {{metadata.annotations.owner}}
    {{/resources.ingresses}}
`);
      const object = { ...shop(), metadata: { ...shop().metadata, annotations: { owner: 'a\nlua-load /tmp/x.lua' } } };
      const judgement = decide(config, storesOf(config, {}), 'ingresses', object);
      expect(judgement.denials).to.deep.equal(['metadata.annotations.owner: value contains U+000A (templates.haproxyConfig: line 3: {{metadata.annotations.owner}})']);
    });

    it('every problem of the object at once', () => {
      const object = shop({ rules: [rule('bad host', path('/', 'web', 'http')), rule('shop.example.com', path('x', 'web', 'http'))] });
      expect(decide(shipped, cluster(), 'ingresses', object).denials).to.have.length(2);
    });

    it('a TLS Secret an Ingress uses, when its certificate and key do not belong together', () => {
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], ingresses: [shop({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] })] });
      const judgement = decide(shipped, stores, 'secrets', tlsSecret('shop-tls', LEAF_CERT, UNRELATED_KEY, 'shop'));
      expect(judgement.denials).to.have.length(1);
      expect(judgement.denials[0]).to.match(/^data\[tls\.key\]: .*; TLS entries using it left out$/);
    });

    it('a TLS Secret an Ingress uses, when its certificate does not parse', () => {
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], ingresses: [shop({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] })] });
      const judgement = decide(shipped, stores, 'secrets', tlsSecret('shop-tls', 'not a certificate', LEAF_KEY, 'shop'));
      expect(judgement.denials[0]).to.match(/^data\[tls\.crt\]: /);
    });
    it('a host an older Ingress of another namespace holds (hosts belong to namespaces)', () => {
      const older = ingress('older', { namespace: 'other', created: '2023-01-01T00:00:00Z', rules: [rule('shop.example.com', path('/', 'web', 'http'))] });
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], ingresses: [older] });
      const judgement = decide(shipped, stores, 'ingresses', shop());
      expect(judgement.denials).to.deep.equal(['spec.rules[0].host: host "shop.example.com" belongs to namespace other: older Ingress other/older claims it; rule not served']);
    });
  });

  describe('admits', () => {
    it('a good Ingress, with the configuration made for it to check', () => {
      const judgement = decide(shipped, cluster(), 'ingresses', shop());
      expect(judgement).to.deep.include({ denials: [], warnings: [] });
      const world = judgement.contribution!.world;
      expect(world.get('ingresses')!.map((o) => o.metadata.name)).to.deep.equal(['shop']);
      expect(world.get('services')).to.deep.equal([web]);
      expect(world.get('endpointslices')).to.deep.equal([webSlice]);
    });

    it('with warnings what is served otherwise than asked: a route an older Ingress of its namespace holds, a missing Service', () => {
      // Another backend: the same one would be no conflict.
      const older = ingress('older', { namespace: 'shop', created: '2023-01-01T00:00:00Z', rules: [rule('shop.example.com', path('/', 'legacy', 'http'))] });
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], ingresses: [older] });
      const judgement = decide(shipped, stores, 'ingresses', shop({ rules: [rule('shop.example.com', path('/', 'web', 'http'), path('/api', 'api', 'http'))] }));
      expect(judgement.denials).to.deep.equal([]);
      expect(judgement.warnings.some((warning) => warning.startsWith('spec.rules[0].http.paths[0]: route "shop.example.com/" not served here: older Ingress shop/older'))).to.equal(true);
      expect(judgement.warnings.some((warning) => warning.startsWith('spec.rules[0].http.paths[1]') && warning.includes('shop/api'))).to.equal(true);
    });

    it("with a warning an Ingress whose TLS Secret the render leaves out: the fault is the Secret's", () => {
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], secrets: [tlsSecret('shop-tls', SELF_SIGNED_CERT, UNRELATED_KEY, 'shop')] });
      const judgement = decide(shipped, stores, 'ingresses', shop({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] }));
      expect(judgement.denials).to.deep.equal([]);
      expect(judgement.warnings).to.have.length(1);
      expect(judgement.warnings[0]).to.match(/^spec\.tls\[0\]\.secretName: Secret shop\/shop-tls data\[tls\.key\]: /);
    });

    it('a TLS Secret no Ingress of the class uses: the pipeline reads nothing of it', () => {
      const judgement = decide(shipped, cluster(), 'secrets', tlsSecret('spare', 'not a certificate', SELF_SIGNED_KEY, 'shop'));
      expect(judgement.denials).to.deep.equal([]);
    });

    it('a good TLS Secret with the Ingresses using it in its world', () => {
      const user = shop({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] });
      const stores = storesOf(shipped, { services: [web], endpointslices: [webSlice], ingresses: [user] });
      const judgement = decide(shipped, stores, 'secrets', tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY, 'shop'));
      expect(judgement.denials).to.deep.equal([]);
      expect(judgement.contribution!.world.get('ingresses')!.map((o) => o.metadata.name)).to.deep.equal(['shop']);
    });
  });

  it('hashes the configuration made for an object: the same object, the same hash; another object, another', () => {
    const first = decide(shipped, cluster(), 'ingresses', shop()).contribution!.hash;
    expect(decide(shipped, cluster(), 'ingresses', shop()).contribution!.hash).to.equal(first);
    expect(decide(shipped, cluster(), 'ingresses', shop({ rules: [rule('shop.example.com', path('/v2', 'web', 'http'))] })).contribution!.hash).to.not.equal(first);
  });
});
