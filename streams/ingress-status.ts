import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, combineLatest, defer, EMPTY, filter, map, merge, of, tap, withLatestFrom, type Observable, type OperatorFunction } from 'rxjs';
import { errorMessage } from '../lib/error-message.ts';
import { IngressStatusWriter, type ServedIngress } from '../lib/kube/ingress-status-writer.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { RoutingOutcome } from '../lib/routing-view/routing-outcome.ts';
import type { Logger } from '../lib/telemetry/logger.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface IngressStatusInput {
  readonly leader: boolean;
  /** What the last render's translation made of the objects; undefined before the first render. */
  readonly routing: RoutingOutcome | undefined;
  /** The published HAProxy Service, whose addresses Ingresses publish. */
  readonly service: KubeObject | undefined;
}

export interface IngressStatusOptions {
  /** Brings these Ingresses' status to the Service's addresses; emits how many it wrote. */
  readonly sync: (served: readonly ServedIngress[], service: KubeObject | undefined) => Observable<number>;
  readonly warn: (message: string) => void;
}

/**
 * Ingress status, written by the leader only: each input is a whole
 * snapshot (what the last render's translation made of the objects, the
 * published Service), so the newest waiting one replaces any older one
 * while a round of writes runs. The Ingresses are those the render took as
 * its class's, each as stored now (lib/routing-view/routing-outcome.ts): the
 * stores are not read again. A failed round is logged and left: the next
 * input brings every Ingress's status up to date again.
 */
export function ingressStatus({ sync, warn }: IngressStatusOptions): OperatorFunction<IngressStatusInput, number> {
  return (source) =>
    source.pipe(
      filter((input) => input.leader && input.routing !== undefined),
      serialLatest((input) =>
        defer(() => sync(input.routing!.servedIngresses(), input.service)).pipe(
          catchError((error: unknown) => {
            warn(`ingress status not written: ${errorMessage(error)}`);
            return EMPTY;
          }),
        ),
      ),
    );
}

export interface IngressStatusWritesOptions {
  readonly kubeConfig: KubeConfig;
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
export function ingressStatusWrites({ kubeConfig, pipeline, publishedService, publish, leading, log }: IngressStatusWritesOptions): Observable<number> {
  const writer = new IngressStatusWriter(kubeConfig);
  const rounds = merge(of(undefined), pipeline.outcomes.pipe(filter((outcome) => outcome.type === 'deployed')));
  return combineLatest([publishedService, rounds, leading]).pipe(
    withLatestFrom(pipeline.state),
    map(([[service, , leader], state]): IngressStatusInput => ({ leader, routing: state.routing, service })),
    ingressStatus({ sync: (served, service) => defer(() => writer.sync(served, service)), warn: (message) => log.warn(message) }),
    tap((written) => {
      if (written > 0) log.info(`ingress status: ${written} Ingress(es) now publish ${publish.namespace}/${publish.name}`);
    }),
  );
}
