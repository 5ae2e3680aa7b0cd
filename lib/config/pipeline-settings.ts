/** The timing and concurrency settings of the pipeline, in milliseconds. */
export interface PipelineSettings {
  readonly debounceMs: number;
  readonly maxWaitMs: number;
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

/** The seed design's defaults. */
export const defaultPipelineSettings: PipelineSettings = {
  debounceMs: 500,
  maxWaitMs: 5_000,
  minDeploymentIntervalMs: 2_000,
  driftCheckIntervalMs: 60_000,
  deployTimeoutMs: 30_000,
  maxParallel: 10,
  retry: { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 },
};
