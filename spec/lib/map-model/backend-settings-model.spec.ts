import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { MapModelSources } from '../../../lib/map-model/types.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { mapModelSources } from '../../../lib/routing-view/model-sources.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import type { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { mulberry32 } from '../../support/fuzz-values.ts';
import { base64, CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service } from '../ingress/fixtures.ts';

/**
 * Backend settings through the cached view model: a build after a change
 * of annotations, Services, slices or CA Secrets gives what a fresh build
 * gives, a Backend whose settings alone changed keeps its servers, and a
 * change that asks for the same settings leaves the model as it was.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;
type Stores = Map<string, IndexedStore>;
const sourcesOf = (stores: Stores): MapModelSources => mapModelSources(config, stores)!;

let version = 0;
/** Ingress `name`, created on `day`, routing its own host to Service `svc`:80, with these annotations. */
function annotated(name: string, day: number, svc: string, annotations: Record<string, string>): KubeObject {
  const object = ingress(name, { created: `2024-01-${String(day).padStart(2, '0')}T00:00:00Z`, rules: [rule(`${name}.example.com`, path('/', svc, 80))] });
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(++version), annotations } };
}

function caSecret(name: string, ca: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace: 'default', resourceVersion: String(++version) },
    data: { 'tls.crt': base64(LEAF_CERT), 'tls.key': base64(LEAF_KEY), 'ca.crt': base64(ca) },
  };
}

const SERVICES = ['a', 'b', 'c'];
const slice = (svc: string, hosts: number) =>
  endpointSlice(
    `${svc}-1`,
    svc,
    [{ port: 8080 }],
    Array.from({ length: hosts }, (_, i) => ({ addresses: [`10.0.${SERVICES.indexOf(svc)}.${i + 1}`] })),
  );

function world(ingresses: readonly KubeObject[]): Stores {
  return buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', ingresses],
      ['services', SERVICES.map((svc) => service(svc, [{ port: 80, targetPort: 8080 }]))],
      ['endpointslices', SERVICES.map((svc) => slice(svc, 2))],
      ['secrets', [caSecret('ca', CA_CERT)]],
    ]),
    config.ignoreFields,
  );
}

describe('backend settings in the cached view model', () => {
  it('makes a Backend again when only its settings change (or its Ingress is read again), keeping its servers', () => {
    const stores = world([annotated('web', 1, 'a', { 'haproxy.org/timeout-server': '5s' })]);
    const cache = new MapModelCache();
    const first = buildMapModel(sourcesOf(stores), cache);
    expect(first.backends[0]!.settings).to.deep.equal({ timeouts: { server: 5000 } });

    stores.get('ingresses')!.upsert(annotated('web', 1, 'a', { 'haproxy.org/timeout-server': '9s' }));
    const second = buildMapModel(sourcesOf(stores), cache);
    expect(second.backends[0]!.settings).to.deep.equal({ timeouts: { server: 9000 } });
    expect(second.backends[0]!.servers).to.equal(first.backends[0]!.servers);

    // The same settings in another spelling: the same backend, its settings naming the Ingress as read now.
    stores.get('ingresses')!.upsert(annotated('web', 1, 'a', { 'haproxy.org/timeout-server': '9000ms' }));
    const third = buildMapModel(sourcesOf(stores), cache);
    expect(third.backends).to.deep.equal(second.backends);
    expect(third.backends[0]!.servers).to.equal(second.backends[0]!.servers);
    expect(third.warnings).to.equal(second.warnings);
  });

  it('follows a CA Secret: servers while it holds a usable ca.crt, none (and a warning) while it is gone, again when it comes back', () => {
    const stores = world([annotated('web', 1, 'a', { 'haproxy.org/server-ca': 'ca' })]);
    const cache = new MapModelCache();
    const served = buildMapModel(sourcesOf(stores), cache);
    expect(served.backends[0]!.servers).to.have.length(2);
    expect(served.caCertificates.map((ca) => ca.file)).to.deep.equal(['default_ca__ca.pem']);
    expect(served.caCertificates[0]!.pem).to.equal(CA_CERT);

    stores.get('secrets')!.delete(caSecret('ca', CA_CERT));
    const gone = buildMapModel(sourcesOf(stores), cache);
    expect(gone.backends[0]!.servers).to.deep.equal([]);
    expect(gone.caCertificates).to.deep.equal([]);
    expect(gone.warnings.map((problem) => problem.message)).to.deep.equal(['backend default_a_80 has no servers: the CA Secret default/ca to verify its servers with is not found']);
    expect(buildMapModel(sourcesOf(stores))).to.deep.equal(gone);

    stores.get('secrets')!.upsert(caSecret('ca', SELF_SIGNED_CERT));
    const back = buildMapModel(sourcesOf(stores), cache);
    expect(back.backends[0]!.servers).to.have.length(2);
    expect(back.caCertificates[0]!.pem).to.equal(SELF_SIGNED_CERT);
    expect(back.warnings).to.deep.equal([]);
  });

  it('finds a CA in an Opaque Secret too, and follows its changes', () => {
    const stores = world([annotated('web', 1, 'a', { 'haproxy.org/server-ca': 'default/opaque-ca' })]);
    const opaque = (ca: string): KubeObject => ({ ...caSecret('opaque-ca', ca), type: 'Opaque', data: { 'ca.crt': base64(ca) } });
    stores.get('authsecrets')!.upsert(opaque(CA_CERT));
    const cache = new MapModelCache();
    expect(buildMapModel(sourcesOf(stores), cache).caCertificates.map((ca) => ca.pem)).to.deep.equal([CA_CERT]);
    stores.get('authsecrets')!.upsert(opaque(SELF_SIGNED_CERT));
    expect(buildMapModel(sourcesOf(stores), cache).caCertificates.map((ca) => ca.pem)).to.deep.equal([SELF_SIGNED_CERT]);
  });

  it('gives what a fresh build gives after every step of seeded random changes to annotations, Services, slices and the CA Secret', () => {
    const choices: readonly Record<string, string>[] = [
      {},
      { 'haproxy.org/timeout-server': '5s' },
      { 'haproxy.org/timeout-server': '7s', 'haproxy.org/load-balance': 'leastconn' },
      { 'haproxy.org/load-balance': 'source', 'haproxy.org/pod-maxconn': '10' },
      { 'haproxy.org/server-ssl': 'true', 'haproxy.org/server-ca': 'ca' },
      { 'haproxy.org/cookie-persistence': 'SRV', 'haproxy.org/check-http': '/healthz' },
      { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '5' },
    ];
    const seen = { conflicts: 0, withSettings: 0, withoutServers: 0 };
    for (const seed of [1, 2, 3]) {
      const random = mulberry32(seed);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
      const names = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5'];
      const stores = world([]);
      const cache = new MapModelCache();
      buildMapModel(sourcesOf(stores), cache);
      for (let step = 0; step < 120; step++) {
        const roll = random();
        if (roll < 0.6) {
          const name = pick(names);
          stores.get('ingresses')!.upsert(annotated(name, names.indexOf(name) + 1, pick(SERVICES), pick(choices)));
        } else if (roll < 0.7) {
          const name = pick(names);
          const stored = stores.get('ingresses')!.get('default', name);
          if (stored) stores.get('ingresses')!.delete(stored);
        } else if (roll < 0.85) {
          const changed = slice(pick(SERVICES), 1 + Math.floor(random() * 3));
          stores.get('endpointslices')!.upsert({ ...changed, metadata: { ...changed.metadata, resourceVersion: String(++version) } });
        } else if (random() < 0.5) {
          stores.get('secrets')!.upsert(caSecret('ca', pick([CA_CERT, SELF_SIGNED_CERT])));
        } else {
          const stored = stores.get('secrets')!.get('default', 'ca');
          if (stored) stores.get('secrets')!.delete(stored);
        }
        const reused = buildMapModel(sourcesOf(stores), cache);
        const fresh = buildMapModel(sourcesOf(stores));
        expect(reused, `seed ${seed} step ${step}`).to.deep.equal(fresh);
        seen.conflicts += fresh.warnings.filter((problem) => problem.field === 'metadata.annotations').length;
        seen.withSettings += fresh.backends.filter((backend) => Object.keys(backend.settings).length > 0).length;
        seen.withoutServers += fresh.backends.filter((backend) => backend.servers.length === 0).length;
      }
    }
    for (const [what, count] of Object.entries(seen)) expect(count, what).to.be.above(0);
  });
});
