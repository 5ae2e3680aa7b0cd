import type { Outcome } from '../pipeline/outcome.ts';
import type { Deployment } from './status.ts';

/**
 * How far the configuration in force has got, from the pipeline's outcomes:
 * what Programmed says of Gateways and listeners. The configuration in
 * force is the one last rendered (its hash); it is deployed once every
 * HAProxy instance it was handed to has taken it, failed when validation
 * refused it or an instance gave up on it, pending until then. An unchanged
 * render keeps the hash already deployed, so it stays deployed.
 */
export interface DeploymentTracker {
  readonly current: string | undefined;
  readonly deployed: string | undefined;
  /** Per hash, the instances handed it that have not taken it yet. */
  readonly waiting: ReadonlyMap<string, ReadonlySet<string>>;
  readonly failed: ReadonlySet<string>;
}

export const NOTHING_DEPLOYED: DeploymentTracker = { current: undefined, deployed: undefined, waiting: new Map(), failed: new Set() };

export function trackDeployment(tracker: DeploymentTracker, outcome: Outcome): DeploymentTracker {
  switch (outcome.type) {
    case 'rendered':
    case 'quarantined':
      return { ...tracker, current: outcome.hash };
    case 'validationFailed':
      return { ...tracker, failed: new Set([...tracker.failed, outcome.hash]) };
    case 'deploying': {
      const waiting = new Map(tracker.waiting);
      waiting.set(outcome.hash, new Set([...(waiting.get(outcome.hash) ?? []), ...outcome.endpoints]));
      return { ...tracker, waiting };
    }
    case 'deployed': {
      const waiting = new Map(tracker.waiting);
      const left = new Set(waiting.get(outcome.hash) ?? []);
      left.delete(outcome.endpoint);
      waiting.set(outcome.hash, left);
      return { ...tracker, waiting, deployed: left.size === 0 ? outcome.hash : tracker.deployed };
    }
    case 'deployFailed':
      return outcome.final ? { ...tracker, failed: new Set([...tracker.failed, outcome.hash]) } : tracker;
    default:
      return tracker;
  }
}

export function deploymentOf(tracker: DeploymentTracker): Deployment {
  if (tracker.current === undefined) return 'pending';
  if (tracker.current === tracker.deployed) return 'deployed';
  return tracker.failed.has(tracker.current) ? 'failed' : 'pending';
}
