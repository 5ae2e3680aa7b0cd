import { expect } from 'chai';
import { map, Subject } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import type { KubeObject, ResourceEvent, Snapshot, WatchedType } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { resources } from '../../streams/resources.ts';
import { testScheduler } from '../support/marbles.ts';

function object(namespace: string, name: string, resourceVersion: string): KubeObject {
  return { metadata: { namespace, name, resourceVersion } };
}

const byNamespace = (watched: KubeObject) => watched.metadata.namespace;
const watched: readonly WatchedType[] = [
  { kind: 'Service', indexBy: [byNamespace] },
  { kind: 'Ingress', indexBy: [byNamespace] },
];

/** The events the marbles refer to, by their marble character. */
const events: Record<string, ResourceEvent> = {
  a: { type: 'added', kind: 'Service', object: object('default', 'web', '1') },
  A: { type: 'added', kind: 'Service', object: object('default', 'web', '2') },
  m: { type: 'modified', kind: 'Service', object: object('default', 'web', '2') },
  n: { type: 'modified', kind: 'Service', object: object('default', 'api', '5') },
  d: { type: 'deleted', kind: 'Service', object: object('default', 'web', '2') },
  p: { type: 'added', kind: 'Service', object: object('prod', 'shop', '1') },
  b: { type: 'added', kind: 'Ingress', object: object('default', 'site', '1') },
  u: { type: 'added', kind: 'Secret', object: object('default', 'tls', '1') },
  s: { type: 'synced', kind: 'Service' },
  i: { type: 'synced', kind: 'Ingress' },
  x: { type: 'synced', kind: 'Secret' },
};

/**
 * Stores are read live, so a snapshot must be read when it is emitted: by
 * the end of the test they hold the final state.
 */
function view(snapshot: Snapshot) {
  return {
    revision: snapshot.revision,
    change: snapshot.change,
    contents: Object.fromEntries(
      [...snapshot.stores].map(([kind, store]) => [
        kind,
        store
          .list()
          .map(({ metadata }) => `${metadata.namespace}/${metadata.name}@${metadata.resourceVersion}`)
          .sort(),
      ]),
    ),
  };
}

interface Harness {
  readonly scheduler: TestScheduler;
  readonly reports: Outcome[];
  readonly stage: ReturnType<typeof resources>;
}

function harness(kinds: readonly WatchedType[] = watched): Harness {
  const scheduler = testScheduler();
  const reports: Outcome[] = [];
  return { scheduler, reports, stage: resources({ watched: kinds, report: (o) => reports.push(o), scheduler }) };
}

describe('resources', () => {
  it('emits nothing until every kind has synced, then one initial snapshot', () => {
    const { scheduler, reports, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // Events before the last sync only fill the stores; Ingress syncing last at frame 8 releases one snapshot.
      const source = hot('  a-b-s-m-i---|', events);
      const expected = '    --------X---|';
      expectObservable(source.pipe(stage, map(view))).toBe(expected, {
        X: {
          revision: 1,
          change: undefined,
          contents: { Service: ['default/web@2'], Ingress: ['default/site@1'] },
        },
      });
    });
    expect(reports).to.have.length(1);
    const [synced] = reports;
    expect(synced).to.include({ type: 'synced', revision: 1 });
    expect(synced?.type === 'synced' && synced.kinds).to.deep.equal(['Service', 'Ingress']);
    // The report hands out the live stores, so debug views and gauges read what the pipeline holds.
    expect(synced?.type === 'synced' && [...synced.stores].map(([kind, store]) => [kind, store.size])).to.deep.equal([
      ['Service', 1],
      ['Ingress', 1],
    ]);
  });

  it('emits one snapshot per changing event after the sync, naming the change', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // Every change bumps the revision by one and carries the frame it was seen at.
      const source = hot('  s-i-a-b-m-|', events);
      const expected = '    --X-A-B-M-|';
      expectObservable(source.pipe(stage, map(view))).toBe(expected, {
        X: { revision: 1, change: undefined, contents: { Service: [], Ingress: [] } },
        A: {
          revision: 2,
          change: { kind: 'Service', type: 'added', namespace: 'default', name: 'web', at: 4 },
          contents: { Service: ['default/web@1'], Ingress: [] },
        },
        B: {
          revision: 3,
          change: { kind: 'Ingress', type: 'added', namespace: 'default', name: 'site', at: 6 },
          contents: { Service: ['default/web@1'], Ingress: ['default/site@1'] },
        },
        M: {
          revision: 4,
          change: { kind: 'Service', type: 'modified', namespace: 'default', name: 'web', at: 8 },
          contents: { Service: ['default/web@2'], Ingress: ['default/site@1'] },
        },
      });
    });
  });

  it('emits nothing for an event that does not change a store, nor for a relist', () => {
    const { scheduler, reports, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // The repeated a and m carry known resourceVersions; the second s is an informer relist.
      const source = hot('  s-i-a-a-m-m-s-|', events);
      const expected = '    --X-A---M-----|';
      expectObservable(
        source.pipe(
          stage,
          map((snapshot) => snapshot.revision),
        ),
      ).toBe(expected, {
        X: 1,
        A: 2,
        M: 3,
      });
    });
    expect(reports).to.have.length(1);
  });

  it('emits a delete, after which the store no longer holds the object', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // The second d deletes an object that is already gone: no change, no snapshot.
      const source = hot('  a-s-i-d-d-|', events);
      const expected = '    ----X-D---|';
      expectObservable(source.pipe(stage, map(view))).toBe(expected, {
        X: { revision: 1, change: undefined, contents: { Service: ['default/web@1'], Ingress: [] } },
        D: {
          revision: 2,
          change: { kind: 'Service', type: 'deleted', namespace: 'default', name: 'web', at: 6 },
          contents: { Service: [], Ingress: [] },
        },
      });
    });
  });

  it('names the change by what happened to the store, not by the event type', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // After a reconnect an informer may re-add a known object (A) or modify one it never listed (n).
      const source = hot('  a-s-i-A-n-|', events);
      const expected = '    ----X-A-N-|';
      expectObservable(
        source.pipe(
          stage,
          map((snapshot) => snapshot.change?.type),
        ),
      ).toBe(expected, {
        X: undefined,
        A: 'modified',
        N: 'added',
      });
    });
  });

  it('ignores events of a kind it does not watch', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // Secret events neither emit nor create a store, and a Secret sync does not stand in for a watched one.
      const source = hot('  u-x-s-u-i-u-|', events);
      const expected = '    --------X---|';
      expectObservable(source.pipe(stage, map(view))).toBe(expected, {
        X: { revision: 1, change: undefined, contents: { Service: [], Ingress: [] } },
      });
    });
  });

  it('gives each store the index of its watched type', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable }) => {
      // Service is indexed by namespace, so a lookup by namespace finds exactly that namespace's objects.
      const source = hot('  a-p-s-i-|', events);
      const expected = '    ------X-|';
      const inProd = (snapshot: Snapshot) =>
        snapshot.stores
          .get('Service')
          ?.lookup('prod')
          .map(({ metadata }) => metadata.name);
      expectObservable(source.pipe(stage, map(inProd))).toBe(expected, { X: ['shop'] });
    });
  });

  it('passes completion and errors through, whether synced or not', () => {
    const { scheduler, stage } = harness();
    const initial = { X: { revision: 1, change: undefined, contents: { Service: [], Ingress: [] } } };
    scheduler.run(({ hot, expectObservable }) => {
      // After the sync the end follows the snapshot; before it the stage ends without one.
      const completing = hot('        s-i-|', events);
      const completed = '             --X-|';
      const erroring = hot('          s-i-#', events);
      const errored = '               --X-#';
      const completingEarly = hot('   s-|', events);
      const completedEarly = '        --|';
      const erroringEarly = hot('     s-#', events);
      const erroredEarly = '          --#';
      expectObservable(completing.pipe(stage, map(view))).toBe(completed, initial);
      expectObservable(erroring.pipe(stage, map(view))).toBe(errored, initial);
      expectObservable(completingEarly.pipe(stage)).toBe(completedEarly);
      expectObservable(erroringEarly.pipe(stage)).toBe(erroredEarly);
    });
  });

  it('unsubscribes from the source when unsubscribed', () => {
    const { scheduler, stage } = harness();
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // The consumer leaves at frame 3; later events find nothing subscribed.
      const source = hot('  s-i-a-b-|', events);
      const unsub = '       ---!';
      const expected = '    --X';
      const subscribed = '  ^--!';
      expectObservable(
        source.pipe(
          stage,
          map((snapshot) => snapshot.revision),
        ),
        unsub,
      ).toBe(expected, { X: 1 });
      expectSubscriptions(source.subscriptions).toBe(subscribed);
    });
  });

  it('keeps separate stores for each subscription', () => {
    const { scheduler, reports, stage } = harness();
    scheduler.run(({ cold, expectObservable }) => {
      // The second subscriber starts at frame 4, mid-way through the first; shared
      // stores would make its add a no-op and its syncs count for nothing.
      const source = cold('          a-s-i-d-|', events);
      const first = '                ^';
      const second = '               ----^';
      const expectedFirst = '        ----X-D-|';
      const expectedSecond = '       --------X-D-|';
      const result = source.pipe(stage, map(view));
      const values = {
        X: { revision: 1, change: undefined, contents: { Service: ['default/web@1'], Ingress: [] } },
      };
      expectObservable(result, first).toBe(expectedFirst, {
        ...values,
        D: {
          revision: 2,
          change: { kind: 'Service', type: 'deleted', namespace: 'default', name: 'web', at: 6 },
          contents: { Service: [], Ingress: [] },
        },
      });
      expectObservable(result, second).toBe(expectedSecond, {
        ...values,
        D: {
          revision: 2,
          change: { kind: 'Service', type: 'deleted', namespace: 'default', name: 'web', at: 10 },
          contents: { Service: [], Ingress: [] },
        },
      });
    });
    expect(reports).to.have.length(2);
  });

  it('emits the initial snapshot at once when no type is watched', () => {
    const { scheduler, reports, stage } = harness([]);
    scheduler.run(({ hot, expectObservable }) => {
      // With nothing to wait for, templates render once over no resources.
      const source = hot('  a-|', events);
      const expected = '    X-|';
      expectObservable(source.pipe(stage, map(view))).toBe(expected, {
        X: { revision: 1, change: undefined, contents: {} },
      });
    });
    expect(reports).to.have.length(1);
    expect(reports[0]).to.include({ type: 'synced', revision: 1 });
    expect(reports[0]?.type === 'synced' && reports[0].kinds).to.deep.equal([]);
  });

  it('hands out the same live store map in every snapshot', () => {
    const source = new Subject<ResourceEvent>();
    const snapshots: Snapshot[] = [];
    source.pipe(resources({ watched, report: () => undefined })).subscribe((snapshot) => snapshots.push(snapshot));
    for (const key of ['s', 'i', 'a', 'm']) source.next(events[key]!);
    expect(snapshots).to.have.length(3);
    expect(snapshots[2]!.stores).to.equal(snapshots[0]!.stores);
    // Read now, the first snapshot's stores show the newest state.
    expect(snapshots[0]!.stores.get('Service')?.get('default', 'web')?.metadata.resourceVersion).to.equal('2');
  });

  describe('status written by the controller', () => {
    const versioned = (kind: string, resourceVersion: string, host: string, address?: string): KubeObject =>
      ({
        kind,
        metadata: { namespace: 'default', name: 'site', resourceVersion, generation: 1 },
        spec: { host },
        ...(address ? { status: { loadBalancer: { ingress: [{ ip: address }] } } } : {}),
      }) as KubeObject;
    const ownStatus: readonly WatchedType[] = [
      { kind: 'Service', indexBy: [byNamespace] },
      { kind: 'Ingress', indexBy: [byNamespace], ownStatus: true },
    ];
    const statusEvents: Record<string, ResourceEvent> = {
      b: { type: 'added', kind: 'Ingress', object: versioned('Ingress', '1', 'a.example.com') },
      S: { type: 'modified', kind: 'Ingress', object: versioned('Ingress', '2', 'a.example.com', '10.0.0.1') },
      B: { type: 'modified', kind: 'Ingress', object: versioned('Ingress', '3', 'b.example.com', '10.0.0.1') },
      v: { type: 'added', kind: 'Service', object: versioned('Service', '1', 'a.example.com') },
      V: { type: 'modified', kind: 'Service', object: versioned('Service', '2', 'a.example.com', '10.0.0.9') },
      s: { type: 'synced', kind: 'Service' },
      i: { type: 'synced', kind: 'Ingress' },
    };

    it('stores an update that only changed the status of an own-status resource, without a snapshot', () => {
      const { scheduler, stage } = harness(ownStatus);
      scheduler.run(({ hot, expectObservable }) => {
        // S (the Ingress's status written, resourceVersion 2) makes no snapshot; B (its spec changed) does,
        // revision 2 and not 3: the status write was no change.
        const source = hot('  v-b-s-i-S---B--|', statusEvents);
        const expected = '    ------X-----Y--|';
        expectObservable(source.pipe(stage, map(view))).toBe(expected, {
          X: { revision: 1, change: undefined, contents: { Service: ['default/site@1'], Ingress: ['default/site@1'] } },
          Y: {
            revision: 2,
            change: { kind: 'Ingress', type: 'modified', namespace: 'default', name: 'site', at: 12 },
            contents: { Service: ['default/site@1'], Ingress: ['default/site@3'] },
          },
        });
      });
    });

    it('keeps the status-only update in the store, for the next snapshot and the status writer to read', () => {
      const { scheduler, stage } = harness(ownStatus);
      scheduler.run(({ hot, expectObservable }) => {
        // After S, the Service's own change V makes a snapshot whose Ingress is the one S delivered (@2).
        const source = hot('  v-b-s-i-S---V--|', statusEvents);
        const expected = '    ------X-----Y--|';
        expectObservable(source.pipe(stage, map(view))).toBe(expected, {
          X: { revision: 1, change: undefined, contents: { Service: ['default/site@1'], Ingress: ['default/site@1'] } },
          Y: {
            revision: 2,
            change: { kind: 'Service', type: 'modified', namespace: 'default', name: 'site', at: 12 },
            contents: { Service: ['default/site@2'], Ingress: ['default/site@2'] },
          },
        });
      });
    });

    it('makes a snapshot of a status-only update of a resource whose status others write', () => {
      const { scheduler, stage } = harness(ownStatus);
      scheduler.run(({ hot, expectObservable }) => {
        // V only changed the Service's status, but the controller does not write it: a template may read it.
        const source = hot('  v-b-s-i-V--|', statusEvents);
        const expected = '    ------X-Y--|';
        expectObservable(source.pipe(stage, map(view))).toBe(expected, {
          X: { revision: 1, change: undefined, contents: { Service: ['default/site@1'], Ingress: ['default/site@1'] } },
          Y: {
            revision: 2,
            change: { kind: 'Service', type: 'modified', namespace: 'default', name: 'site', at: 8 },
            contents: { Service: ['default/site@2'], Ingress: ['default/site@1'] },
          },
        });
      });
    });
  });
});
