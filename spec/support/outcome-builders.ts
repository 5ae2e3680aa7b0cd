import type { ChangeRef, DeployReason, DeployResult, StoreReader } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { change, changes, files } from './pipeline-values.ts';

/** Outcomes as the pipeline reports them, for specs of what subscribes to the outcome stream. */

type Of<T extends Outcome['type']> = Extract<Outcome, { type: T }>;

export const hashOf = (revision: number) => `hash-${revision}`;

export function rendered(revision: number, refs: readonly ChangeRef[] = [], durationMs = 10): Of<'rendered'> {
  return {
    type: 'rendered',
    revision,
    hash: hashOf(revision),
    durationMs,
    changes: changes(refs),
    files: files(`# revision ${revision}`),
    excluded: [],
    warnings: [],
  };
}

export function renderFailed(revision: number, error: string, refs: readonly ChangeRef[] = []): Of<'renderFailed'> {
  return { type: 'renderFailed', revision, error, durationMs: 5, changes: changes(refs) };
}

export function validated(revision: number, durationMs = 50): Of<'validated'> {
  return { type: 'validated', revision, hash: hashOf(revision), durationMs };
}

export function validationFailed(revision: number, error: string): Of<'validationFailed'> {
  return { type: 'validationFailed', revision, hash: hashOf(revision), error, durationMs: 50 };
}

export const refusedProblem = {
  object: 'Ingress shop/web',
  field: 'metadata.annotations.timeout',
  message: "HAProxy refused the configuration with it, left out until it changes: haproxy.cfg:12: unexpected character 'q'",
};

export function quarantined(revision: number, total = 1, by: 'validation' | 'reload' = 'validation'): Of<'quarantined'> {
  return {
    type: 'quarantined',
    by,
    revision,
    hash: `${hashOf(revision)}-again`,
    objects: [refusedProblem],
    files: files(`# revision ${revision}, again`),
    excluded: [refusedProblem],
    warnings: [],
    total,
    validations: 2,
  };
}

export function released(revision: number, total = 0): Of<'released'> {
  return { type: 'released', revision, objects: [refusedProblem], total };
}

export function validationUnavailable(revision: number, attempt: number, error = 'ENOSPC: no space left on device, mkdtemp'): Of<'validationUnavailable'> {
  return { type: 'validationUnavailable', revision, hash: hashOf(revision), error, attempt, retryInMs: 1000 * attempt };
}

export function validationSkipped(revision: number, valid: boolean): Of<'validationSkipped'> {
  return { type: 'validationSkipped', revision, hash: hashOf(revision), valid };
}

export function deploying(revision: number, endpoints: readonly string[], reason: 'change' | 'discovered' | 'confirmed' = 'change'): Of<'deploying'> {
  return { type: 'deploying', revision, hash: hashOf(revision), reason, endpoints };
}

export const runtime: DeployResult = { mode: 'runtime', operations: 2 };
export const reload: DeployResult = { mode: 'reload', reloadReason: 'backend default_api_80 added', reloadId: '7', operations: 0 };
export const unchanged: DeployResult = { mode: 'unchanged', operations: 0 };

export function deployed(
  revision: number,
  endpoint: string,
  result: DeployResult = runtime,
  timing: { durationMs?: number; latencyMs?: number; attempts?: number; reason?: DeployReason } = {},
): Of<'deployed'> {
  const reason = timing.reason ?? 'change';
  return {
    type: 'deployed',
    endpoint,
    revision,
    hash: hashOf(revision),
    reason,
    result,
    attempts: timing.attempts ?? 1,
    durationMs: timing.durationMs ?? 20,
    latencyMs: reason === 'change' ? (timing.latencyMs ?? 600) : undefined,
  };
}

export function deployFailed(revision: number, endpoint: string, attempt: number, final: boolean, error = 'connection refused', reason: DeployReason = 'change'): Of<'deployFailed'> {
  return { type: 'deployFailed', endpoint, revision, hash: hashOf(revision), reason, error, attempt, final };
}

export function synced(stores: ReadonlyMap<string, StoreReader>, revision = 1): Of<'synced'> {
  return { type: 'synced', revision, kinds: [...stores.keys()], stores };
}

/**
 * Configurations dropped on the way, each at a different stage: 2 waits for
 * validation behind 1 and is replaced by 3; 3 waits for the deployment slot
 * and is replaced by 4; endpoint b never takes 1, so 4 delivers 1 there.
 */
export const droppedOnTheWay: readonly [at: number, outcome: Outcome][] = [
  [100, rendered(1, [change('one', 90)])],
  [110, rendered(2, [change('two', 105)])],
  [120, rendered(3, [change('three', 115), change('four', 116)])],
  [150, validated(1)],
  [151, deploying(1, ['a', 'b'])],
  [200, validated(3)],
  [210, deployed(1, 'a')],
  [300, rendered(4, [change('five', 290)])],
  [350, validated(4)],
  [2_151, deploying(4, ['a', 'b'])],
  [2_160, deployed(4, 'a')],
  [2_170, deployed(4, 'b')],
];
