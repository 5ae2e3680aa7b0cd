import type { Changes, DeployReason, DeployResult, Problem, RenderedFiles, StoreReader } from './model.ts';

/**
 * Everything the pipeline reports, on one typed stream. Logging, metrics,
 * tracing and Kubernetes events subscribe to it; stages never call them.
 */
export type Outcome =
  | { readonly type: 'configApplied'; readonly generation: number }
  | { readonly type: 'configRejected'; readonly errors: readonly string[] }
  | {
      readonly type: 'synced';
      readonly revision: number;
      readonly kinds: readonly string[];
      /** The live stores, by watched type: what the debug endpoints and the resource gauges read. */
      readonly stores: ReadonlyMap<string, StoreReader>;
      /** The stores of the last controller configuration, handed over to this one's pipeline: nothing was listed again. */
      readonly kept?: boolean;
    }
  /** A resource source could not read something (a manifest that does not parse...); what it held keeps serving. */
  | { readonly type: 'resourceError'; readonly error: string }
  | {
      readonly type: 'rendered';
      readonly revision: number;
      readonly hash: string;
      readonly durationMs: number;
      readonly changes: Changes;
      readonly files: RenderedFiles;
      /** Objects left out of this configuration, each naming the field at fault. */
      readonly excluded: readonly Problem[];
      readonly warnings: readonly Problem[];
      /** Template lines reading a name about to go, each told once per configuration (RenderOutput.deprecations). */
      readonly deprecations?: readonly string[];
    }
  | {
      readonly type: 'renderFailed';
      readonly revision: number;
      readonly error: string;
      readonly durationMs: number;
      readonly changes: Changes;
    }
  | { readonly type: 'validated'; readonly revision: number; readonly hash: string; readonly durationMs: number }
  /**
   * HAProxy refused the configuration and objects were found at fault: they
   * are left out of every later configuration until they change. Found by
   * validation, the configuration was rendered again without them (as
   * `hash`, with `files`); found in a refused reload, `hash` and `files` are
   * the refused configuration's, and a render without them follows.
   */
  | {
      readonly type: 'quarantined';
      readonly by: 'validation' | 'reload';
      readonly revision: number;
      readonly hash: string;
      /** The objects quarantined now, each with the field on the refused line and HAProxy's message. */
      readonly objects: readonly Problem[];
      readonly files: RenderedFiles;
      /** Everything left out of the configuration rendered again, the quarantined objects included. */
      readonly excluded: readonly Problem[];
      readonly warnings: readonly Problem[];
      /** Objects in quarantine now. */
      readonly total: number;
      /** Validations this configuration took so far, the first included. */
      readonly validations: number;
    }
  /** Quarantined objects that changed or went: rendered (and judged) again from this revision on. */
  | { readonly type: 'released'; readonly revision: number; readonly objects: readonly Problem[]; readonly total: number }
  /**
   * Validation could not run (no space or descriptors for the copy, HAProxy
   * missing or killed): no verdict, the running configuration keeps serving,
   * and the same configuration is tried again after `retryInMs`.
   */
  | {
      readonly type: 'validationUnavailable';
      readonly revision: number;
      readonly hash: string;
      readonly error: string;
      readonly attempt: number;
      readonly retryInMs: number;
    }
  /** Identical to the configuration last judged: not checked again, and nothing new to deploy. */
  | { readonly type: 'validationSkipped'; readonly revision: number; readonly hash: string; readonly valid: boolean }
  /**
   * A configuration that differs from the last valid one only in what the
   * runtime applies, passed on to deployment before its validation ended
   * (runtimeFirst, docs/adr/0022-runtime-first.md).
   */
  | { readonly type: 'runtimeFirst'; readonly revision: number; readonly hash: string }
  /** That configuration was refused (or never judged): the last valid one, `to`, is deployed again to undo it. */
  | { readonly type: 'runtimeReverted'; readonly revision: number; readonly hash: string; readonly to: string }
  | {
      readonly type: 'validationFailed';
      readonly revision: number;
      readonly hash: string;
      readonly error: string;
      readonly durationMs: number;
    }
  /**
   * A configuration handed to endpoints: for reason 'change' every current
   * endpoint, for 'discovered' the endpoints just found.
   */
  | {
      readonly type: 'deploying';
      readonly revision: number;
      readonly hash: string;
      readonly reason: Exclude<DeployReason, 'drift'>;
      readonly endpoints: readonly string[];
    }
  | {
      readonly type: 'deployed';
      readonly endpoint: string;
      readonly revision: number;
      readonly hash: string;
      readonly reason: DeployReason;
      readonly result: DeployResult;
      readonly attempts: number;
      readonly durationMs: number;
      /**
       * Time from the first change folded into this config to its deployment
       * here; only for reason 'change' (a drift repair or a new endpoint has no
       * triggering change).
       */
      readonly latencyMs: number | undefined;
    }
  | {
      readonly type: 'deployFailed';
      readonly endpoint: string;
      readonly revision: number;
      readonly hash: string;
      readonly reason: DeployReason;
      readonly error: string;
      readonly attempt: number;
      /** True when no more retries follow for this configuration. */
      readonly final: boolean;
    };

export type OutcomeType = Outcome['type'];

/** Where a stage sends its outcomes. */
export type Report = (outcome: Outcome) => void;

export type DeployOutcome = Extract<Outcome, { readonly type: 'deployed' | 'deployFailed' }>;
