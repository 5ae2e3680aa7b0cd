/**
 * Whether a rendered configuration differs from the last valid one only in
 * what the runtime applies (servers of existing backends, map entries,
 * certificate contents): the one rule is the planner's, which decides the
 * same question for every deployment. Such a configuration may be deployed
 * before its `haproxy -c` ends (docs/adr/0022-runtime-first.md): the last
 * valid configuration is a plan of runtime operations away, so it can be put
 * back without a reload.
 */
import { planDeployment } from '../haproxy/plan.ts';
import type { RuntimeOperation } from '../haproxy/plan-types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';
import type { Planner } from './shared-planner.ts';

export interface RuntimeOnlyOptions {
  /** Default planDeployment. */
  readonly plan?: Planner;
  /**
   * Operations a target may still turn into a reload (the Data Plane API's
   * map entry calls, dataplane-maps.ts): a reload of an unvalidated
   * configuration is what runtime-first must never cause.
   */
  readonly mayReload?: (operation: RuntimeOperation) => boolean;
}

export function runtimeOnly(validated: RenderedFiles, rendered: RenderedFiles, options: RuntimeOnlyOptions = {}): boolean {
  const plan = (options.plan ?? planDeployment)(validated, rendered);
  if (plan.kind === 'empty') return true;
  if (plan.kind === 'reload') return false;
  const mayReload = options.mayReload;
  return mayReload === undefined || !plan.operations.some((operation) => mayReload(operation));
}
