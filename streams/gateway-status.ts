import type { KubeConnection } from '../lib/kube/kube-connection.ts';
import { catchError, combineLatest, defer, distinctUntilChanged, EMPTY, filter, map, merge, of, scan, tap, withLatestFrom, type Observable, type OperatorFunction } from 'rxjs';
import type { ControllerConfig } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import { deploymentOf, NOTHING_DEPLOYED, trackDeployment } from '../lib/gateway/deployment.ts';
import { GatewayStatusWriter, statusWrites, type StatusWrite } from '../lib/gateway/status-writer.ts';
import type { Deployment } from '../lib/gateway/status.ts';
import { publishedAddresses } from '../lib/kube/ingress-status.ts';
import type { KubeObject } from '../lib/pipeline/model.ts';
import type { RoutingOutcome } from '../lib/routing-view/routing-outcome.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import type { Logger } from '../lib/telemetry/logger.ts';
import { serialLatest } from './operators/serial-latest.ts';

export interface GatewayStatusInput {
  readonly leader: boolean;
  /** What the last render's translation made of the objects; undefined before the first render. */
  readonly routing: RoutingOutcome | undefined;
  readonly config: ControllerConfig | undefined;
  /** The published HAProxy Service, whose addresses Gateways publish. */
  readonly service: KubeObject | undefined;
  readonly deployment: Deployment;
}

export interface GatewayStatusOptions {
  /** Writes the statuses; emits how many objects it wrote. */
  readonly write: (writes: readonly StatusWrite[]) => Observable<number>;
  readonly now: () => number;
  readonly warn: (message: string) => void;
}

/**
 * Gateway API status, written by the leader only and only where it
 * differs: each input is a whole snapshot (what the last render's
 * translation made of the objects, the published Service, how the
 * deployment went), so the newest waiting one replaces any older one while
 * a round of writes runs. The Gateway API model and what its translation
 * left out of each HTTPRoute are the render's own: nothing is judged or
 * translated here. A failed round is logged and left: the next input
 * computes every status again from the objects as they are stored then.
 */
export function gatewayStatus({ write, now, warn }: GatewayStatusOptions): OperatorFunction<GatewayStatusInput, number> {
  return (source) =>
    source.pipe(
      filter((input) => input.leader && input.routing?.gatewayApi !== undefined && input.config !== undefined),
      serialLatest((input) =>
        defer(() => {
          const routing = input.routing!;
          const writes = statusWrites({
            model: routing.gatewayApi!,
            controllerName: input.config!.gatewayApi.controllerName,
            addresses: publishedAddresses(input.service),
            deployment: input.deployment,
            now: now(),
            leftOut: routing.leftOut,
            current: routing.currentGatewayObject,
          });
          return writes.length === 0 ? of(0) : write(writes);
        }).pipe(
          catchError((error: unknown) => {
            warn(`gateway API status not written: ${errorMessage(error)}`);
            return EMPTY;
          }),
        ),
      ),
    );
}

/** What the outcomes say of the deployment of the configuration in force (lib/gateway/deployment.ts). */
function deployments(outcomes: Observable<Outcome>): Observable<Deployment> {
  return outcomes.pipe(scan(trackDeployment, NOTHING_DEPLOYED), map(deploymentOf), distinctUntilChanged());
}

export interface GatewayStatusWritesOptions {
  readonly kubeConnection: KubeConnection;
  readonly pipeline: {
    readonly outcomes: Observable<Outcome>;
    readonly state: Observable<{ readonly routing: RoutingOutcome | undefined; readonly config: ControllerConfig | undefined }>;
  };
  readonly publishedService: Observable<KubeObject | undefined>;
  readonly leading: Observable<boolean>;
  readonly log: Logger;
  /** Milliseconds since the epoch, for conditions' lastTransitionTime. */
  readonly now: () => number;
}

/** The Gateway API status side stream of cluster mode: after every render and deployment, and when the published Service or leadership changes. */
export function gatewayStatusWrites({ kubeConnection, pipeline, publishedService, leading, log, now }: GatewayStatusWritesOptions): Observable<number> {
  const writer = new GatewayStatusWriter(kubeConnection);
  const rounds = merge(of(undefined), pipeline.outcomes.pipe(filter((outcome) => outcome.type === 'rendered' || outcome.type === 'deployed')));
  return combineLatest([publishedService, merge(of<Deployment>('pending'), deployments(pipeline.outcomes)), leading, rounds]).pipe(
    withLatestFrom(pipeline.state),
    map(([[service, deployment, leader], state]): GatewayStatusInput => ({ leader, routing: state.routing, config: state.config, service, deployment })),
    gatewayStatus({ write: (writes) => defer(() => writer.write(writes)), now, warn: (message) => log.warn(message) }),
    tap((written) => {
      if (written > 0) log.info(`gateway API status: ${written} object(s) written`);
    }),
  );
}
