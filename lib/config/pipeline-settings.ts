import { parseDuration } from './duration.ts';
import { controllerConfigSchema } from './schema.ts';

/** The timing and concurrency settings of the pipeline, in milliseconds. */
export interface PipelineSettings {
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  /** Whether an idle controller renders a change at once, batching only what follows within the debounce. */
  readonly leadingEdge: boolean;
  /**
   * Whether a configuration that differs from the last valid one only in what
   * the runtime applies is deployed while `haproxy -c` runs, and undone if it
   * fails (docs/adr/0022-runtime-first.md).
   */
  readonly runtimeFirst: boolean;
  readonly minDeploymentIntervalMs: number;
  readonly driftCheckIntervalMs: number;
  readonly deployTimeoutMs: number;
  readonly maxParallel: number;
  readonly retry: RetrySettings;
}

export interface RetrySettings {
  /** Attempts per configuration and endpoint, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

const { fields: schema } = controllerConfigSchema;
const { fields: dataplane } = schema.dataplane;

/** The seed design's defaults, as the schema declares them; retries are not configurable. */
export const defaultPipelineSettings: PipelineSettings = {
  debounceMs: parseDuration(schema.debounce.default),
  maxWaitMs: parseDuration(schema.maxWait.default),
  leadingEdge: schema.leadingEdge.default,
  runtimeFirst: schema.runtimeFirst.default,
  minDeploymentIntervalMs: parseDuration(dataplane.minDeploymentInterval.default),
  driftCheckIntervalMs: parseDuration(dataplane.driftCheckInterval.default),
  deployTimeoutMs: parseDuration(dataplane.deployTimeout.default),
  maxParallel: dataplane.maxParallel.default,
  retry: { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 },
};
