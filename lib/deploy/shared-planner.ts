/**
 * One plan per distinct (deployed, desired) pair across a fleet. Every
 * endpoint of a fleet usually runs the same files and gets the same desired
 * ones, and planning parses both configurations: done per endpoint it is
 * the controller's largest CPU cost of a fan-out, paid ten times in a row
 * when a wave of deploys starts at once.
 */
import { parseConfig, type ParsedConfig } from '../haproxy/config-parser.ts';
import { planDeployment, sameFiles, type ConfigReader } from '../haproxy/plan.ts';
import { nameSections, type NamedSections } from '../haproxy/plan-sections.ts';
import type { Plan } from '../haproxy/plan-types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';

export type Planner = (deployed: RenderedFiles, desired: RenderedFiles, reader?: ConfigReader) => Plan;

/**
 * Deployed states kept per desired configuration. Endpoints in step share
 * one; more are endpoints that lag behind or were changed out of band.
 */
const STATES_PER_TARGET = 4;

/** Configurations whose reading is kept: the desired one, and the one before it (what is deployed next time). */
const CONFIGS_READ = 2;

/**
 * A planner that reuses the plan of an earlier call with the same desired
 * files object (the fleet hands every endpoint the same one) and deployed
 * files of equal content (each endpoint reads or keeps its own copy).
 * Plans are read-only, so sharing one is safe. It keeps its last few
 * configurations read too: the next change's plan starts from this one's
 * desired configuration, parsed already.
 */
export function sharedPlanner(plan: Planner = planDeployment): Planner {
  const plans = new WeakMap<RenderedFiles, { deployed: RenderedFiles; plan: Plan }[]>();
  const reader = keptReader();
  return (deployed, desired) => {
    const known = plans.get(desired) ?? [];
    const found = known.find((entry) => sameFiles(entry.deployed, deployed));
    if (found) return found.plan;
    const planned = plan(deployed, desired, reader);
    plans.set(desired, [{ deployed, plan: planned }, ...known].slice(0, STATES_PER_TARGET));
    return planned;
  };
}

/** parseConfig and nameSections, the CONFIGS_READ configurations read last kept (a parse is read-only; its sections are read lazily and kept). */
function keptReader(): ConfigReader {
  let kept: { readonly text: string; readonly parsed: ParsedConfig }[] = [];
  const named = new WeakMap<ParsedConfig, NamedSections>();
  return {
    parse: (text) => {
      // The same text is most often the same string: compared by identity first, at no cost.
      const found = kept.find((entry) => entry.text === text);
      const entry = found ?? { text, parsed: parseConfig(text) };
      kept = [entry, ...kept.filter((other) => other !== entry)].slice(0, CONFIGS_READ);
      return entry.parsed;
    },
    named: (config) => {
      let sections = named.get(config);
      if (sections === undefined) {
        sections = nameSections(config);
        named.set(config, sections);
      }
      return sections;
    },
  };
}
