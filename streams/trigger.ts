import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { defaultMaxChangeRefs } from '../lib/pipeline/changes.ts';
import type { ChangeRef, Snapshot, Trigger } from '../lib/pipeline/model.ts';
import { contained, forwardingTo } from './operators/contained.ts';

export interface TriggerOptions {
  readonly debounceMs: number;
  /** Longest a change may wait while others keep arriving. */
  readonly maxWaitMs: number;
  /** Whether an idle stage triggers a change at once (see below) rather than after the quiet period. */
  readonly leadingEdge: boolean;
  /** Change references kept per trigger (trace links); the count stays exact. */
  readonly maxChangeRefs?: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * debounceTime with a maximum wait: a quiet period of `debounceMs` triggers,
 * and so does `maxWaitMs` after the first change of a window, so constant
 * churn cannot starve deployment. While churn goes on (the next change comes
 * within `debounceMs` of a trigger) the next deadline is anchored at that
 * trigger, not at the next change, so triggers come every `maxWaitMs` rather
 * than drifting later by one change interval each time. Each trigger carries
 * every change folded into it.
 *
 * With `leadingEdge`, an idle stage (nothing pending, no trigger in the last
 * `debounceMs`) triggers a snapshot as soon as the turn it arrived in ends: a
 * lone change waits for nothing. What follows within `debounceMs` of a trigger is
 * batched as above, so a burst costs one render at its start and one after
 * it, and a change made while the first render runs waits for quiet rather
 * than superseding that render (the render stage is a switchMap).
 */
export function trigger(options: TriggerOptions): OperatorFunction<Snapshot, Trigger> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const maxRefs = options.maxChangeRefs ?? defaultMaxChangeRefs;
  return (source) =>
    new Observable<Trigger>((subscriber) => {
      let latest: Snapshot | undefined;
      let count = 0;
      let firstAt = 0;
      let refs: ChangeRef[] = [];
      let quiet: Subscription | undefined;
      let deadline: Subscription | undefined;
      let leading: Subscription | undefined;
      let lastTriggerAt = Number.NEGATIVE_INFINITY;

      const cancelTimers = () => {
        quiet?.unsubscribe();
        deadline?.unsubscribe();
        leading?.unsubscribe();
        quiet = deadline = leading = undefined;
      };
      const flush = contained(subscriber, () => {
        cancelTimers();
        if (!latest) return;
        const snapshot = latest;
        const triggered: Trigger = { snapshot, changes: { count, firstAt, refs } };
        latest = undefined;
        count = 0;
        refs = [];
        lastTriggerAt = scheduler.now();
        subscriber.next(triggered);
      });
      const fold = (snapshot: Snapshot) => {
        latest = snapshot;
        if (snapshot.change) {
          count++;
          if (refs.length < maxRefs) refs.push(snapshot.change);
        }
      };

      const arrived = (snapshot: Snapshot) => {
        if (leading) return fold(snapshot);
        const now = scheduler.now();
        const pending = latest !== undefined;
        const churning = now - lastTriggerAt < options.debounceMs;
        if (!pending) firstAt = snapshot.change?.at ?? now;
        fold(snapshot);
        if (!pending && !churning && options.leadingEdge) {
          // At the end of this turn rather than now: events delivered together (a relist, the
          // documents of one manifest file) are one trigger.
          leading = scheduler.schedule(flush, 0);
          return;
        }
        if (!pending) deadline = scheduler.schedule(flush, (churning ? lastTriggerAt : now) + options.maxWaitMs - now);
        quiet?.unsubscribe();
        quiet = scheduler.schedule(flush, options.debounceMs);
      };
      const ended = () => {
        flush();
        subscriber.complete();
      };

      subscriber.add(source.subscribe(forwardingTo(subscriber, arrived, ended)));
      return cancelTimers;
    });
}
