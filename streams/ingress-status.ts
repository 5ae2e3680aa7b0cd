import type { KubeConnection } from '../lib/kube/kube-connection.ts';
import {
  asyncScheduler,
  catchError,
  combineLatest,
  defer,
  EMPTY,
  endWith,
  filter,
  from,
  ignoreElements,
  map,
  merge,
  mergeMap,
  of,
  reduce,
  retry,
  tap,
  timer,
  withLatestFrom,
  type Observable,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { loadBalancerWrites, publishedAddresses, WrittenStatus, type IngressStatusWrite } from '../lib/kube/ingress-status.ts';
import { IngressStatusWriter } from '../lib/kube/ingress-status-writer.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { RoutingOutcome } from '../lib/routing-view/routing-outcome.ts';
import type { Logger } from '../lib/telemetry/logger.ts';
import { WRITE_RETRIES } from '../lib/backoff.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface IngressStatusInput {
  readonly leader: boolean;
  /** What the last render's translation and map model made of the objects; undefined before the first render. */
  readonly routing: RoutingOutcome | undefined;
  /** The published HAProxy Service, whose addresses Ingresses publish. */
  readonly service: KubeObject | undefined;
}

export interface IngressStatusOptions {
  /** Writes one Ingress's status.loadBalancer. */
  readonly write: (write: IngressStatusWrite) => Observable<unknown>;
  readonly warn: (message: string) => void;
  readonly scheduler?: SchedulerLike;
}

/** Status writes in flight at once: enough to publish thousands of Ingresses in seconds, few enough not to flood the API. */
const PARALLEL_WRITES = 8;
/**
 * Ingress status, written by the leader only: each input is a whole
 * snapshot (what the last render made of the objects, the published
 * Service), so the newest waiting one replaces any older one while a round
 * of writes runs. A round writes only the Ingresses whose stored status
 * differs from what the render decided (lib/kube/ingress-status.ts), each
 * as stored now (lib/routing-view/routing-outcome.ts): the stores are not
 * read again. A failed write is tried again with backoff inside its round;
 * one that keeps failing is said, and the next input finds it still
 * differing. Emits how many Ingresses each round wrote.
 */
export function ingressStatus({ write, warn, scheduler = asyncScheduler }: IngressStatusOptions): OperatorFunction<IngressStatusInput, number> {
  const written = new WrittenStatus();
  const writeOne = (one: IngressStatusWrite): Observable<number> =>
    defer(() => write(one)).pipe(
      retry({ count: WRITE_RETRIES.count, delay: (_error, attempt) => timer(WRITE_RETRIES.delayMs(attempt), scheduler) }),
      ignoreElements(),
      endWith(1),
      tap(() => written.add(one)),
      catchError((error: unknown) => {
        warn(`status of Ingress ${one.ingress.metadata.namespace}/${one.ingress.metadata.name} not written: ${errorMessage(error)}`);
        return of(0);
      }),
    );
  return (source) =>
    source.pipe(
      filter((input) => input.leader && input.routing !== undefined),
      serialLatest((input) =>
        defer(() => {
          const writes = loadBalancerWrites(input.routing!.classIngresses(), publishedAddresses(input.service), written);
          return writes.length === 0
            ? of(0)
            : from(writes).pipe(
                mergeMap(writeOne, PARALLEL_WRITES),
                reduce((count, one) => count + one, 0),
              );
        }).pipe(
          catchError((error: unknown) => {
            warn(`ingress status not written: ${errorMessage(error)}`);
            return EMPTY;
          }),
        ),
      ),
    );
}

export interface IngressStatusWritesOptions {
  readonly kubeConnection: KubeConnection;
  readonly pipeline: {
    readonly outcomes: Observable<Outcome>;
    readonly state: Observable<{ readonly routing: RoutingOutcome | undefined }>;
  };
  readonly publishedService: Observable<KubeObject | undefined>;
  /** The Service's namespace and name, for the log. */
  readonly publish: { readonly namespace: string; readonly name: string };
  readonly leading: Observable<boolean>;
  readonly log: Logger;
}

/** The Ingress status side stream of cluster mode: after each deployment and whenever the published Service or leadership changes. */
export function ingressStatusWrites({ kubeConnection, pipeline, publishedService, publish, leading, log }: IngressStatusWritesOptions): Observable<number> {
  const writer = new IngressStatusWriter(kubeConnection);
  const rounds = merge(of(undefined), pipeline.outcomes.pipe(filter((outcome) => outcome.type === 'deployed')));
  return combineLatest([publishedService, rounds, leading]).pipe(
    withLatestFrom(pipeline.state),
    map(([[service, , leader], state]): IngressStatusInput => ({ leader, routing: state.routing, service })),
    ingressStatus({ write: (one) => defer(() => writer.write(one)), warn: (message) => log.warn(message) }),
    tap((written) => {
      if (written > 0) log.info(`ingress status: ${written} Ingress(es) written (those served publish ${publish.namespace}/${publish.name}, those left out nothing)`);
    }),
  );
}
