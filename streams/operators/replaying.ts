import { asapScheduler, Observable, ReplaySubject, Subject, Subscription, type SchedulerLike, type SubjectLike } from 'rxjs';
import { EventReplay } from '../../lib/pipeline/event-replay.ts';
import type { ResourceEvent, Snapshot } from '../../lib/pipeline/model.ts';

/** A subject of resource events that tells each new subscriber what was said before it came (see EventReplay). */
export function replayingEvents(): SubjectLike<ResourceEvent> {
  const replay = new EventReplay();
  const live = new Subject<ResourceEvent>();
  const replayed = new Observable<ResourceEvent>((subscriber) => {
    for (const event of replay.events()) subscriber.next(event);
    return live.subscribe(subscriber);
  });
  return {
    next: (event) => {
      replay.apply(event);
      live.next(event);
    },
    error: (error: unknown) => live.error(error),
    complete: () => live.complete(),
    subscribe: (observer) => replayed.subscribe(observer),
  };
}

/** A subject of whole sets that tells each new subscriber the last one. */
export function replayingLast<T>(): SubjectLike<T> {
  return new ReplaySubject<T>(1);
}

/**
 * A subject of store snapshots that hands the stores to each subscriber that
 * comes after the first snapshot (the next controller configuration's
 * pipeline): `handedOver` is told, then the subscriber gets the newest
 * snapshot as the initial one of its stores (no change of its own: nothing
 * changed, the configuration did), and the live ones after it. The hand-over
 * waits for `scheduler` (the microtask queue by default: before any watch
 * event can come), as a first list would come after the whole pipeline has
 * subscribed, the fleet's members included, which its first render reads.
 */
export function replayingStores(handedOver: (snapshot: Snapshot) => void, scheduler: SchedulerLike = asapScheduler): SubjectLike<Snapshot> {
  let last: Snapshot | undefined;
  const live = new Subject<Snapshot>();
  const replayed = new Observable<Snapshot>((subscriber) => {
    if (last === undefined) return live.subscribe(subscriber);
    const subscription = new Subscription();
    subscription.add(
      scheduler.schedule(() => {
        handedOver(last!);
        subscriber.next({ ...last!, change: undefined });
        subscription.add(live.subscribe(subscriber));
      }),
    );
    return subscription;
  });
  return {
    next: (snapshot) => {
      last = snapshot;
      live.next(snapshot);
    },
    error: (error: unknown) => live.error(error),
    complete: () => live.complete(),
    subscribe: (observer) => replayed.subscribe(observer),
  };
}
