import type { ControllerConfig } from '../config/types.ts';
import type { DeployReason, DeployResult, Endpoint, RenderedFiles } from '../pipeline/model.ts';
import type { Planner } from './shared-planner.ts';

/** Where a controller deploys: its endpoints, and how it reaches each. */
export interface Fleet {
  readonly endpoints: readonly Endpoint[];
  /** What the fleet needs of the configuration, laid over it (a local HAProxy's ports and directories). */
  prepare(config: ControllerConfig): ControllerConfig;
  /** `confirmed` false: passed on before its verdict (runtime-first); its files wait where the target can apply it without them. */
  deploy(endpoint: Endpoint, files: RenderedFiles, hash: string, reason: DeployReason, confirmed: boolean): Promise<DeployResult>;
  /** One line for the user: where the fleet is. */
  describe(): string;
  stop(options?: { readonly keepHaproxy?: boolean }): Promise<void>;
  /**
   * The planner its deployments plan with (shared-planner.ts): runtime-first's
   * question (runtime-only.ts) asked of it is the plan the deployment then
   * reuses, where another planner would parse both configurations again.
   */
  readonly plan?: Planner;
}
