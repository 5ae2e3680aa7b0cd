import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { Outcome } from '../pipeline/outcome.ts';

const prefix = 'haproxy_template_ic_';

export interface Metrics {
  readonly registry: Registry;
  /** Updates the metrics from one pipeline outcome. */
  readonly observe: (outcome: Outcome) => void;
}

/** The controller's metrics, in a registry of its own (never the global one). */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const deploys = new Counter({
    name: `${prefix}deploys_total`,
    help: 'Deployments by endpoint mode (runtime, reload, unchanged) and result',
    labelNames: ['mode', 'result'] as const,
    registers: [registry],
  });
  const reloads = new Counter({ name: `${prefix}reloads_total`, help: 'Deployments that reloaded HAProxy', registers: [registry] });
  const runtime = new Counter({
    name: `${prefix}runtime_deploys_total`,
    help: 'Deployments applied through the Runtime API without a reload',
    registers: [registry],
  });
  return {
    registry,
    observe: (outcome) => {
      if (outcome.type === 'deployed') {
        deploys.inc({ mode: outcome.result.mode, result: 'success' });
        if (outcome.result.mode === 'reload') reloads.inc();
        if (outcome.result.mode === 'runtime') runtime.inc();
      } else if (outcome.type === 'deployFailed') {
        deploys.inc({ mode: 'unknown', result: 'failure' });
      }
    },
  };
}
