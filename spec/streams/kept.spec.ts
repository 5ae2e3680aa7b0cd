import { expect } from 'chai';
import { NEVER } from 'rxjs';
import type { KubeObject, ResourceEvent, Snapshot } from '../../lib/pipeline/model.ts';
import { kept, type KeptWatches } from '../../streams/kept.ts';
import { replayingEvents, replayingLast, replayingStores } from '../../streams/operators/replaying.ts';
import { change, snapshot } from '../support/pipeline-values.ts';
import { testScheduler } from '../support/marbles.ts';

// Marbles use a grace of 3 frames. Two subscriptions in one frame stand for switchMap handing over
// from one configuration's pipeline to the next: the old one unsubscribes, then the new one subscribes.

const object = (name: string, resourceVersion: string): KubeObject => ({ metadata: { namespace: 'default', name, resourceVersion } });
const events: Record<string, ResourceEvent> = {
  x: { type: 'added', kind: 'Ingress', object: object('x', '1') },
  y: { type: 'added', kind: 'Ingress', object: object('y', '1') },
  s: { type: 'synced', kind: 'Ingress' },
  m: { type: 'modified', kind: 'Ingress', object: object('x', '2') },
  d: { type: 'deleted', kind: 'Ingress', object: object('y', '1') },
  X: { type: 'added', kind: 'Ingress', object: object('x', '2') },
};

describe('kept stage', () => {
  it('hands a running watch over to the pipeline that asks for it as the last one leaves, subscribed once', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // The first pipeline reads a and b and leaves at 4; the next takes over in the same frame, is told
      // the last set (b) at once, and reads on. Three frames after it leaves at 10 the watch stops: one
      // subscription to the source all along.
      const source = hot('-a-b-c-d-e--------');
      const watch = source.pipe(kept({ key: 'pods', kept: new Map(), connector: replayingLast, graceMs: 3, released: NEVER }));
      expectObservable(watch, '^---!').toBe('                  -a-b');
      expectObservable(watch, '----^-----!').toBe('            ----bc-d-e');
      expectSubscriptions(source.subscriptions).toBe('^------------!');
    });
  });

  it('starts the watch again for a pipeline that comes after the grace, with nothing of the old one', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // The first pipeline leaves at 3; nobody takes over by 6, so the watch stops. The pipeline that
      // comes at 8 starts it again (a new LIST in a cluster) and is told nothing from before.
      const source = hot('-a-b-c-d-e-f---');
      const watch = source.pipe(kept({ key: 'pods', kept: new Map(), connector: replayingLast, graceMs: 3, released: NEVER }));
      expectObservable(watch, '^--!').toBe('                  -a-');
      expectObservable(watch, '--------^----!').toBe('        ---------e-f-');
      expectSubscriptions(source.subscriptions).toBe(['^-----!', '--------^-------!']);
    });
  });

  it('tells the next pipeline the objects as they are after changes that came while nobody read', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // x and y are listed (s); the first pipeline leaves at 5. x changes (m) and y goes (d) before the
      // next pipeline comes at 10: it is told x as it is now and the listing, without y.
      const source = hot('x-y-s--m-d---------', events);
      const watches: KeptWatches = new Map();
      const watch = source.pipe(kept({ key: 'ingresses', kept: watches, connector: replayingEvents, graceMs: 10, released: NEVER }));
      expectObservable(watch, '^----!').toBe('      x-y-s', events);
      expectObservable(watch, '----------^--!').toBe('----------(Xs)', events);
    });
  });

  it('hands the stores to the next pipeline as its initial snapshot, with nothing changed, and says so', () => {
    const handedOver: number[] = [];
    testScheduler().run(({ hot, expectObservable }) => {
      // The stores reach revision 2 under the first pipeline, which leaves at 3. The next one comes at 5:
      // it is handed revision 2 as its initial snapshot (no change of its own: the configuration changed,
      // nothing in the stores), told once, then follows on with revision 3.
      const source = hot('-a-b----c-', { a: snapshot(1), b: snapshot(2, change('b', 3)), c: snapshot(3, change('c', 8)) });
      const watch = source.pipe(kept({ key: 'stores', kept: new Map(), connector: () => replayingStores((last) => handedOver.push(last.revision)), graceMs: 3, released: NEVER }));
      expectObservable(watch, '^--!').toBe('       -a-', { a: snapshot(1) });
      expectObservable(watch, '-----^----!').toBe('-----b--c-', { b: snapshot(2), c: snapshot(3, change('c', 8)) } satisfies Record<string, Snapshot>);
    });
    expect(handedOver).to.deep.equal([2]);
  });

  it('hands over the newest stores once the next pipeline has subscribed, never a snapshot twice', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // The next pipeline subscribes at 5, in the frame revision 3 comes: the hand-over waits for the
      // scheduler (until the whole pipeline has subscribed), so it hands over revision 3, once, and
      // goes on with revision 4.
      const source = hot('-a---c-d-', { a: snapshot(1), c: snapshot(3, change('c', 5)), d: snapshot(4, change('d', 7)) });
      const watch = source.pipe(kept({ key: 'stores', kept: new Map(), connector: () => replayingStores(() => undefined), graceMs: 3, released: NEVER }));
      expectObservable(watch, '^--!').toBe('     -a-', { a: snapshot(1) });
      expectObservable(watch, '-----^---!').toBe('-----c-d-', { c: snapshot(3), d: snapshot(4, change('d', 7)) } satisfies Record<string, Snapshot>);
    });
  });

  it('stops a watch nobody reads at once when the mode stops, and forgets it', () => {
    const watches: KeptWatches = new Map();
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // The only pipeline leaves at 3 and the mode stops at 5, well within the grace of 100 frames:
      // the watch stops at 5.
      const source = hot('-a-b-c-d-');
      const released = hot('-----r');
      const watch = source.pipe(kept({ key: 'pods', kept: watches, connector: replayingLast, graceMs: 100, released }));
      expectObservable(watch, '^--!').toBe('-a-');
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    expect([...watches.keys()]).to.deep.equal([]);
  });

  it('keeps no watch that failed: the next pipeline starts it again', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // The watch fails at 3 (an error a retry inside did not cure); the pipeline that comes at 5 finds
      // nothing kept and subscribes anew.
      const source = cold('-a-#');
      const watch = source.pipe(kept({ key: 'pods', kept: new Map(), connector: replayingLast, graceMs: 3, released: NEVER }));
      expectObservable(watch, '^').toBe('     -a-#');
      expectObservable(watch, '-----^').toBe('------a-#');
      expectSubscriptions(source.subscriptions).toBe(['^--!', '-----^--!']);
    });
  });

  it('keeps watches of different keys apart: a pipeline asking for another key starts its own', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // The first pipeline watched key one; the next asks for key two in the same frame (a resource
      // added to the configuration): two sources subscribed, each stopping 3 frames after it was left.
      const one = hot('-a-b-c-d-');
      const two = hot('-p-q-r-s-');
      const watches: KeptWatches = new Map();
      const options = { kept: watches, connector: replayingLast, graceMs: 3, released: NEVER };
      expectObservable(one.pipe(kept({ key: 'one', ...options })), '^--!').toBe('-a-');
      expectObservable(two.pipe(kept({ key: 'two', ...options })), '---^---!').toBe('---q-r-');
      expectSubscriptions(one.subscriptions).toBe('^-----!');
      expectSubscriptions(two.subscriptions).toBe('---^------!');
    });
  });
});
