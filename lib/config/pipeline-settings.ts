/** The timing and concurrency settings of the pipeline, in milliseconds. */
export interface PipelineSettings {
  readonly debounceMs: number;
  readonly maxWaitMs: number;
  /** Whether an idle controller renders a change at once, batching only what follows within the debounce. */
  readonly leadingEdge: boolean;
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
  leadingEdge: true,
  minDeploymentIntervalMs: 2_000,
  driftCheckIntervalMs: 60_000,
  deployTimeoutMs: 30_000,
  // A fleet of up to 20 HAProxy pods gets a configuration in one wave: with fewer slots the last
  // pods lag a whole deployment behind the first. Waiting deploys cost a promise each, not a thread.
  maxParallel: 20,
  retry: { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 },
};
