import { Observable } from 'rxjs';
import type { CompiledPath, WatchedResource } from '../lib/config/types.ts';
import type { InformerHandlers, InformerSpec } from '../lib/kube/informer.ts';
import { matchesFieldSelector, withoutIgnoredFields } from '../lib/kube/select.ts';
import type { ResourceEvent } from '../lib/pipeline/model.ts';
import { contained } from './operators/contained.ts';

/** Starts one informer and returns how to stop it; production passes ResilientInformer. */
export type StartInformer = (spec: InformerSpec, handlers: InformerHandlers) => { stop(): Promise<void> };

export interface InformerEventsOptions {
  readonly resources: readonly WatchedResource[];
  readonly ignoreFields: readonly CompiledPath[];
  readonly start: StartInformer;
  /** An informer restarting after an error or a silent watch, for logs and metrics. */
  readonly restarting: (resource: string, reason: string, delayMs: number) => void;
}

/**
 * One informer per watched resource, merged into the resource stream. The
 * label selector and namespace go to the API server; the configuration's
 * field selectors may name any field, so they apply here: an object that
 * stops matching leaves the store as if deleted. Ignored fields are dropped
 * before the informer keeps the object (its transform), and again here for
 * an informer without one, so nothing downstream sees them. Unsubscribing
 * stops every informer; what a handler throws (an object no selector can
 * read) is an error of the stream, never thrown back into the informer.
 */
export function informerEvents(options: InformerEventsOptions): Observable<ResourceEvent> {
  return new Observable<ResourceEvent>((subscriber) => {
    const informers = options.resources.map((resource) =>
      options.start(
        {
          apiVersion: resource.apiVersion,
          kind: resource.kind,
          resource: resource.resource,
          namespace: resource.namespace,
          labelSelector: resource.labelSelector,
          transform: (object) => withoutIgnoredFields(object, options.ignoreFields),
        },
        {
          event: contained(subscriber, (type, object) =>
            subscriber.next({
              type: type !== 'deleted' && !matchesFieldSelector(resource, object) ? 'deleted' : type,
              kind: resource.name,
              object: withoutIgnoredFields(object, options.ignoreFields),
            }),
          ),
          synced: () => subscriber.next({ type: 'synced', kind: resource.name }),
          restarting: contained(subscriber, (reason, delayMs) => options.restarting(resource.name, reason, delayMs)),
        },
      ),
    );
    return () => {
      for (const informer of informers) void informer.stop();
    };
  });
}
