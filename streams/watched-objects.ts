import { Observable } from 'rxjs';
import type { InformerSpec } from '../lib/kube/informer.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import type { StartInformer } from './informer-events.ts';
import { contained } from './operators/contained.ts';
import { objectKey } from '../lib/pipeline/object-key.ts';

/**
 * A small watched set (the controller's ConfigMap, its credentials Secret,
 * the HAProxy pods, the published Service) as whole snapshots keyed by
 * namespace/name: nothing before the first LIST is in, then the full set
 * after every change. Meant for a handful of objects; the resource stores
 * serve the large sets. What a handler throws is an error of the stream.
 */
export function watchedObjects(start: StartInformer, spec: InformerSpec, restarting: (reason: string, delayMs: number) => void): Observable<ReadonlyMap<string, KubeObject>> {
  return new Observable((subscriber) => {
    const objects = new Map<string, KubeObject>();
    let synced = false;
    const informer = start(spec, {
      event: contained(subscriber, (type, object) => {
        const key = objectKey(object.metadata.namespace, object.metadata.name);
        if (type === 'deleted') objects.delete(key);
        else objects.set(key, object);
        if (synced) subscriber.next(new Map(objects));
      }),
      synced: () => {
        synced = true;
        subscriber.next(new Map(objects));
      },
      restarting: contained(subscriber, restarting),
    });
    return () => void informer.stop();
  });
}
