import { asyncScheduler, interval, Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { DeployRequest, FleetCommand } from '../lib/pipeline/model.ts';
import { contained, forwardingTo } from './operators/contained.ts';

export interface DriftOptions {
  readonly intervalMs: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * Passes commands through and, every `intervalMs`, re-deploys each known
 * endpoint's last config. Someone may have changed an HAProxy behind the
 * controller's back (or it restarted with an old file); the tick does not
 * compare anything itself, the deploy effect finds out whether the endpoint
 * really differs and repairs only then.
 */
export function drift({ intervalMs, scheduler = asyncScheduler }: DriftOptions): OperatorFunction<FleetCommand, FleetCommand> {
  return (source) =>
    new Observable<FleetCommand>((subscriber) => {
      const lastDeploys = new Map<string, DeployRequest>();

      // Added to the subscriber so completion, error and unsubscribe all stop the timer.
      subscriber.add(
        interval(intervalMs, scheduler).subscribe(
          contained(subscriber, () => {
            for (const { endpoint, config } of lastDeploys.values()) {
              subscriber.next({ type: 'deploy', request: { endpoint, config, reason: 'drift' } });
            }
          }),
        ),
      );

      subscriber.add(
        source.subscribe(
          forwardingTo(subscriber, (command) => {
            if (command.type === 'deploy') lastDeploys.set(command.request.endpoint.id, command.request);
            else lastDeploys.delete(command.endpointId);
            subscriber.next(command);
          }),
        ),
      );
    });
}
