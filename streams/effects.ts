import type { Observable } from 'rxjs';
import type { DeployRequest, DeployResult, Rendered, RenderOutput, Snapshot, ValidationVerdict } from '../lib/pipeline/model.ts';

/**
 * The side effects the pipeline performs. Each returns an Observable so that
 * cancellation reaches the work and virtual time can drive it in marble
 * tests; production implementations wrap async work in `defer`.
 */
export type RenderEffect = (snapshot: Snapshot) => Observable<RenderOutput>;
/** Emits one verdict; an error means validation could not run (it is not a verdict). */
export type ValidateEffect = (rendered: Rendered) => Observable<ValidationVerdict>;
/** Applies a configuration to one endpoint; emits one result or errors. */
export type DeployEffect = (request: DeployRequest) => Observable<DeployResult>;
