import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { defaultMaxChangeRefs } from '../lib/pipeline/changes.ts';
import type { ChangeRef, Snapshot, Trigger } from '../lib/pipeline/model.ts';
import { contained, forwardingTo } from './operators/contained.ts';

export interface TriggerOptions {
  readonly debounceMs: number;
  /** Longest a change may wait while others keep arriving. */
  readonly maxWaitMs: number;
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
      let lastTriggerAt = Number.NEGATIVE_INFINITY;

      const cancelTimers = () => {
        quiet?.unsubscribe();
        deadline?.unsubscribe();
        quiet = deadline = undefined;
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

      const arrived = (snapshot: Snapshot) => {
        if (!latest) {
          const now = scheduler.now();
          firstAt = snapshot.change?.at ?? now;
          const churning = now - lastTriggerAt < options.debounceMs;
          const anchor = churning ? lastTriggerAt : now;
          deadline = scheduler.schedule(flush, anchor + options.maxWaitMs - now);
        }
        latest = snapshot;
        if (snapshot.change) {
          count++;
          if (refs.length < maxRefs) refs.push(snapshot.change);
        }
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
