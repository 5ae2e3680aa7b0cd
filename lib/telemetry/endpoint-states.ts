import type { DeployOutcome, Outcome } from '../pipeline/outcome.ts';

type Deployed = Extract<DeployOutcome, { readonly type: 'deployed' }>;
type DeployFailed = Extract<DeployOutcome, { readonly type: 'deployFailed' }>;

export interface EndpointState {
  readonly endpoint: string;
  /** The configuration handed to it last, and when. */
  readonly requested: { readonly revision: number; readonly hash: string; readonly at: string } | undefined;
  readonly deployed: (Pick<Deployed, 'revision' | 'hash' | 'reason' | 'result' | 'attempts' | 'durationMs'> & { readonly at: string }) | undefined;
  readonly lastFailure: (Pick<DeployFailed, 'revision' | 'attempt' | 'final' | 'error'> & { readonly at: string }) | undefined;
  /** Failed attempts since the last success. */
  readonly consecutiveFailures: number;
}

const empty = (endpoint: string): EndpointState => ({
  endpoint,
  requested: undefined,
  deployed: undefined,
  lastFailure: undefined,
  consecutiveFailures: 0,
});

/** What each endpoint was last asked to run, runs, and last failed at, as the outcomes tell it. */
export class EndpointStates {
  readonly #states = new Map<string, EndpointState>();

  apply(outcome: Outcome, now: number): void {
    const at = new Date(now).toISOString();
    const update = (endpoint: string, change: (state: EndpointState) => EndpointState) => this.#states.set(endpoint, change(this.#states.get(endpoint) ?? empty(endpoint)));
    switch (outcome.type) {
      case 'configApplied':
        // A new configuration starts a new pipeline: its endpoints are found again.
        this.#states.clear();
        break;
      case 'deploying':
        for (const endpoint of outcome.endpoints) update(endpoint, (state) => ({ ...state, requested: { revision: outcome.revision, hash: outcome.hash, at } }));
        break;
      case 'deployed':
        update(outcome.endpoint, (state) => ({
          ...state,
          deployed: {
            revision: outcome.revision,
            hash: outcome.hash,
            reason: outcome.reason,
            result: outcome.result,
            attempts: outcome.attempts,
            durationMs: outcome.durationMs,
            at,
          },
          consecutiveFailures: 0,
        }));
        break;
      case 'deployFailed':
        update(outcome.endpoint, (state) => ({
          ...state,
          lastFailure: { revision: outcome.revision, attempt: outcome.attempt, final: outcome.final, error: outcome.error, at },
          consecutiveFailures: state.consecutiveFailures + 1,
        }));
        break;
      default:
        break;
    }
  }

  get states(): readonly EndpointState[] {
    return [...this.#states.values()];
  }
}
