import { expect } from 'chai';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';

interface PodFields {
  readonly namespace?: string;
  readonly version?: string;
  readonly app?: string;
  readonly tier?: string;
  readonly spec?: unknown;
}

function pod(name: string, fields: PodFields = {}): KubeObject {
  const labels: Record<string, string> = {};
  if (fields.app !== undefined) labels['app'] = fields.app;
  if (fields.tier !== undefined) labels['tier'] = fields.tier;
  return {
    metadata: {
      name,
      ...(fields.namespace === undefined ? {} : { namespace: fields.namespace }),
      ...(fields.version === undefined ? {} : { resourceVersion: fields.version }),
      labels,
    },
    ...(fields.spec === undefined ? {} : { spec: fields.spec }),
  };
}

/** Indexed by app, then tier: lookups by app alone, or by app and tier. */
function byAppAndTier(): IndexedStore {
  return new IndexedStore([(object) => object.metadata.labels?.['app'], (object) => object.metadata.labels?.['tier']]);
}

const names = (objects: readonly KubeObject[]) => objects.map((object) => object.metadata.name).sort();

describe('IndexedStore', () => {
  it('adds, replaces and deletes objects by namespace and name', () => {
    const store = byAppAndTier();
    expect(store.upsert(pod('web', { namespace: 'a', version: '1' }))).to.equal(true);
    expect(store.upsert(pod('web', { namespace: 'b', version: '1' }))).to.equal(true);
    expect(store.size).to.equal(2);

    const updated = pod('web', { namespace: 'a', version: '2' });
    expect(store.upsert(updated)).to.equal(true);
    expect(store.size).to.equal(2);
    expect(store.get('a', 'web')).to.equal(updated);

    expect(store.delete(pod('web', { namespace: 'a' }))).to.equal(true);
    expect(store.get('a', 'web')).to.equal(undefined);
    expect(store.list().map((object) => object.metadata.namespace)).to.deep.equal(['b']);
  });

  it('treats an absent and an empty namespace as the same cluster-scoped object', () => {
    const store = byAppAndTier();
    store.upsert(pod('node-1', { version: '1' }));
    expect(store.get(undefined, 'node-1')).to.not.equal(undefined);
    expect(store.get('', 'node-1')).to.not.equal(undefined);
    expect(store.delete(pod('node-1', { namespace: '' }))).to.equal(true);
    expect(store.size).to.equal(0);
  });

  it('reports no change for a known resourceVersion or, without versions, identical content', () => {
    const store = byAppAndTier();
    const original = pod('web', { version: '7', spec: { replicas: 1 } });
    store.upsert(original);
    // An informer resync redelivers a copy with the same version.
    expect(store.upsert(pod('web', { version: '7', spec: { replicas: 1 } }))).to.equal(false);
    expect(store.get(undefined, 'web')).to.equal(original);

    const unversioned = byAppAndTier();
    unversioned.upsert(pod('web', { spec: { replicas: 1 } }));
    expect(unversioned.upsert(pod('web', { spec: { replicas: 1 } }))).to.equal(false);
    expect(unversioned.upsert(pod('web', { spec: { replicas: 2 } }))).to.equal(true);
  });

  it('reports no change when deleting an unknown object', () => {
    const store = byAppAndTier();
    store.upsert(pod('web', { namespace: 'a' }));
    expect(store.delete(pod('web', { namespace: 'b' }))).to.equal(false);
    expect(store.size).to.equal(1);
  });

  it('looks up objects by any prefix of their index key', () => {
    const store = byAppAndTier();
    store.upsert(pod('web-fe', { app: 'web', tier: 'frontend' }));
    store.upsert(pod('web-be', { app: 'web', tier: 'backend' }));
    store.upsert(pod('db', { app: 'db', tier: 'backend' }));

    expect(names(store.lookup('web'))).to.deep.equal(['web-be', 'web-fe']);
    expect(names(store.lookup('web', 'backend'))).to.deep.equal(['web-be']);
    expect(names(store.lookup())).to.deep.equal(['db', 'web-be', 'web-fe']);
    expect(store.lookup('cache')).to.deep.equal([]);
    // Longer than the index: no object has a key that long.
    expect(store.lookup('web', 'backend', 'extra')).to.deep.equal([]);
  });

  it('indexes an object with an undefined key part only under the parts before it', () => {
    const store = byAppAndTier();
    store.upsert(pod('untiered', { app: 'web' }));
    store.upsert(pod('unlabelled'));

    expect(names(store.lookup('web'))).to.deep.equal(['untiered']);
    expect(store.indexEntryCount).to.equal(1);
    expect(names(store.list())).to.deep.equal(['unlabelled', 'untiered']);
  });

  it('moves an updated object to the index entries of its new keys', () => {
    const store = byAppAndTier();
    store.upsert(pod('p', { version: '1', app: 'web', tier: 'frontend' }));
    store.upsert(pod('p', { version: '2', app: 'web', tier: 'backend' }));
    expect(store.lookup('web', 'frontend')).to.deep.equal([]);
    expect(names(store.lookup('web', 'backend'))).to.deep.equal(['p']);

    // The first part changes too: the object leaves every old entry.
    store.upsert(pod('p', { version: '3', app: 'api', tier: 'backend' }));
    expect(store.lookup('web')).to.deep.equal([]);
    expect(names(store.lookup('api', 'backend'))).to.deep.equal(['p']);
    expect(store.indexEntryCount).to.equal(2);
  });

  it('returns the replacing object from lookups when its keys stay the same', () => {
    const store = byAppAndTier();
    store.upsert(pod('p', { version: '1', app: 'web', tier: 'frontend' }));
    const updated = pod('p', { version: '2', app: 'web', tier: 'frontend' });
    store.upsert(updated);
    expect(store.lookup('web', 'frontend')).to.deep.equal([updated]);
    expect(store.lookup('web')[0]).to.equal(updated);
    expect(store.list()).to.deep.equal([updated]);
  });

  it('never confuses key parts that contain separator-like characters', () => {
    const store = byAppAndTier();
    // A plain '\u0000' or ':' join would file both pods under the same two-part key.
    store.upsert(pod('left', { app: 'a\u0000b', tier: 'c' }));
    store.upsert(pod('right', { app: 'a', tier: 'b\u0000c' }));
    store.upsert(pod('colon-left', { app: 'a:b', tier: 'c' }));
    store.upsert(pod('colon-right', { app: 'a', tier: 'b:c' }));

    expect(names(store.lookup('a\u0000b', 'c'))).to.deep.equal(['left']);
    expect(names(store.lookup('a', 'b\u0000c'))).to.deep.equal(['right']);
    expect(names(store.lookup('a'))).to.deep.equal(['colon-right', 'right']);
    expect(names(store.lookup('a:b', 'c'))).to.deep.equal(['colon-left']);
    expect(names(store.lookup('a', 'b:c'))).to.deep.equal(['colon-right']);
  });

  it('drops index entries that become empty, so churn does not grow the index', () => {
    const store = byAppAndTier();
    store.upsert(pod('stays', { app: 'web', tier: 'frontend' }));
    const baseline = store.indexEntryCount;
    for (let i = 0; i < 100; i++) {
      store.upsert(pod(`churn-${i}`, { version: '1', app: `app-${i}`, tier: `tier-${i}` }));
      store.upsert(pod(`churn-${i}`, { version: '2', app: `moved-${i}`, tier: `tier-${i}` }));
      store.delete(pod(`churn-${i}`));
    }
    expect(store.indexEntryCount).to.equal(baseline);
    expect(store.size).to.equal(1);
  });

  it('lists the current objects after every change', () => {
    const store = byAppAndTier();
    store.upsert(pod('a'));
    const first = store.list();
    expect(store.list()).to.equal(first);
    store.upsert(pod('b'));
    expect(names(store.list())).to.deep.equal(['a', 'b']);
    store.delete(pod('a'));
    expect(names(store.list())).to.deep.equal(['b']);
    // The list handed out earlier is not mutated under its reader.
    expect(names(first)).to.deep.equal(['a']);
  });

  it('looks up everything with no index at all', () => {
    const store = new IndexedStore([]);
    store.upsert(pod('a'));
    expect(names(store.lookup())).to.deep.equal(['a']);
    expect(store.lookup('a')).to.deep.equal([]);
  });
});

describe('IndexedStore change log', () => {
  const object = (name: string, version: string, namespace = 'default') => ({ metadata: { name, namespace, resourceVersion: version } });

  it('names what changed since a version, before and after, and grows its version with every change', () => {
    const store = new IndexedStore([(o) => o.metadata.namespace]);
    store.upsert(object('a', '1'));
    const since = store.version;
    store.upsert(object('a', '2'));
    store.upsert(object('b', '1'));
    store.upsert(object('b', '1'));
    store.delete(object('a', '2'));
    expect(store.version).to.equal(since + 3);
    expect(store.changesSince(since)?.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)).to.deep.equal(['a@1', 'a@2', 'b@1', 'a@2']);
    expect(store.changesSince(store.version)).to.deep.equal([]);
  });

  it('says it cannot tell when the version is older than what it keeps', () => {
    const store = new IndexedStore([]);
    for (let i = 0; i < 2100; i++) store.upsert(object('a', String(i)));
    expect(store.changesSince(0)).to.equal(undefined);
    expect(store.changesSince(store.version - 10)).to.have.length(20);
  });
});
