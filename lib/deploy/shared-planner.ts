/**
 * One plan per distinct (deployed, desired) pair across a fleet. Every
 * endpoint of a fleet usually runs the same files and gets the same desired
 * ones, and planning parses both configurations: done per endpoint it is
 * the controller's largest CPU cost of a fan-out, paid ten times in a row
 * when a wave of deploys starts at once.
 */
import { planDeployment, sameFiles } from '../haproxy/plan.ts';
import type { Plan } from '../haproxy/plan-types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';

export type Planner = (deployed: RenderedFiles, desired: RenderedFiles) => Plan;

/**
 * Deployed states kept per desired configuration. Endpoints in step share
 * one; more are endpoints that lag behind or were changed out of band.
 */
const STATES_PER_TARGET = 4;

/**
 * A planner that reuses the plan of an earlier call with the same desired
 * files object (the fleet hands every endpoint the same one) and deployed
 * files of equal content (each endpoint reads or keeps its own copy).
 * Plans are read-only, so sharing one is safe.
 */
export function sharedPlanner(plan: Planner = planDeployment): Planner {
  const plans = new WeakMap<RenderedFiles, { deployed: RenderedFiles; plan: Plan }[]>();
  return (deployed, desired) => {
    const known = plans.get(desired) ?? [];
    const found = known.find((entry) => sameFiles(entry.deployed, deployed));
    if (found) return found.plan;
    const planned = plan(deployed, desired);
    plans.set(desired, [{ deployed, plan: planned }, ...known].slice(0, STATES_PER_TARGET));
    return planned;
  };
}
