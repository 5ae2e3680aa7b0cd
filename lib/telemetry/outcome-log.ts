import type { Outcome } from '../pipeline/outcome.ts';
import type { Reconciliation } from './reconciliations.ts';

export type Stage = 'config' | 'resources' | 'render' | 'validate' | 'deploy' | 'reconcile';

/** One log record: a human sentence plus the fields a machine filters on. */
export interface LogEntry {
  readonly level: 'error' | 'warn' | 'info' | 'debug';
  readonly stage: Stage;
  /** Set for records about one endpoint: they go to that endpoint's child logger. */
  readonly endpoint?: string;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

function indent(text: string): string {
  return `\n    ${text.replaceAll('\n', '\n    ')}`;
}

const shortHash = (hash: string) => hash.slice(0, 12);

/**
 * The log records of one outcome: what was deployed and how, and every
 * error with the object, file or setting at fault. Routine steps (a render,
 * a passed validation, a drift check that found nothing) are debug records.
 */
export function outcomeLog(outcome: Outcome): LogEntry[] {
  switch (outcome.type) {
    case 'configApplied':
      return [{ level: 'info', stage: 'config', msg: `configuration loaded (generation ${outcome.generation})`, fields: { generation: outcome.generation } }];
    case 'configRejected':
      return [
        {
          level: 'error',
          stage: 'config',
          msg: `configuration rejected, the running one keeps serving:${outcome.errors.map(indent).join('')}`,
          fields: { errors: outcome.errors },
        },
      ];
    case 'synced': {
      const counts = Object.fromEntries([...outcome.stores].map(([kind, store]) => [kind, store.size]));
      const listed = Object.entries(counts).map(([kind, count]) => `${kind} ${count}`);
      const what = outcome.kept ? 'resources kept from the last configuration' : 'resources listed';
      return [{ level: 'info', stage: 'resources', msg: `${what} (${listed.join(', ') || 'none watched'})`, fields: { revision: outcome.revision, counts } }];
    }
    case 'resourceError':
      return [{ level: 'error', stage: 'resources', msg: outcome.error, fields: {} }];
    case 'rendered': {
      const fields = { revision: outcome.revision, hash: outcome.hash, durationMs: outcome.durationMs, changes: outcome.changes.count };
      return [
        { level: 'debug', stage: 'render', msg: `rendered revision ${outcome.revision} (${shortHash(outcome.hash)}) in ${outcome.durationMs} ms`, fields },
        ...outcome.excluded.map((p): LogEntry => ({
          level: 'warn',
          stage: 'render',
          msg: `excluded ${p.object}: ${p.field}: ${p.message}`,
          fields: { revision: outcome.revision, object: p.object, field: p.field },
        })),
        ...outcome.warnings.map((p): LogEntry => ({
          level: 'warn',
          stage: 'render',
          msg: `warning ${p.object}: ${p.field}: ${p.message}`,
          fields: { revision: outcome.revision, object: p.object, field: p.field },
        })),
        ...(outcome.deprecations ?? []).map((line): LogEntry => ({ level: 'warn', stage: 'render', msg: `deprecated: ${line}`, fields: { revision: outcome.revision } })),
      ];
    }
    case 'renderFailed':
      return [
        {
          level: 'error',
          stage: 'render',
          msg: `render failed, the running configuration keeps serving:${indent(outcome.error)}`,
          fields: { revision: outcome.revision, durationMs: outcome.durationMs },
        },
      ];
    case 'validated':
      return [
        {
          level: 'debug',
          stage: 'validate',
          msg: `revision ${outcome.revision} is valid (${outcome.durationMs} ms)`,
          fields: { revision: outcome.revision, hash: outcome.hash, durationMs: outcome.durationMs },
        },
      ];
    case 'quarantined':
      return outcome.objects.map((p): LogEntry => ({
        level: 'warn',
        stage: 'validate',
        msg: `quarantined ${p.object}: ${p.field}: ${p.message} (${outcome.by === 'validation' ? `revision ${outcome.revision} rendered again without it` : 'rendering again without it'})`,
        fields: { revision: outcome.revision, hash: outcome.hash, object: p.object, field: p.field, by: outcome.by, quarantined: outcome.total },
      }));
    case 'released':
      return outcome.objects.map((p): LogEntry => ({
        level: 'info',
        stage: 'render',
        msg: `released ${p.object} from quarantine: it changed or went, so revision ${outcome.revision} renders it again`,
        fields: { revision: outcome.revision, object: p.object, quarantined: outcome.total },
      }));
    case 'validationUnavailable':
      return [
        {
          level: 'warn',
          stage: 'validate',
          msg: `could not validate revision ${outcome.revision} (attempt ${outcome.attempt}), the running configuration keeps serving; trying again in ${outcome.retryInMs} ms: ${outcome.error}`,
          fields: { revision: outcome.revision, hash: outcome.hash, attempt: outcome.attempt, retryInMs: outcome.retryInMs },
        },
      ];
    case 'validationSkipped':
      return [
        {
          level: 'debug',
          stage: 'validate',
          msg: `revision ${outcome.revision} is identical to the configuration last judged ${outcome.valid ? 'valid' : 'invalid'}`,
          fields: { revision: outcome.revision, hash: outcome.hash, valid: outcome.valid },
        },
      ];
    case 'runtimeFirst':
      return [
        {
          level: 'info',
          stage: 'validate',
          msg: `revision ${outcome.revision} changes only what the runtime applies: deploying it while haproxy -c runs`,
          fields: { revision: outcome.revision, hash: outcome.hash },
        },
      ];
    case 'runtimeReverted':
      return [
        {
          level: 'warn',
          stage: 'validate',
          msg: `revision ${outcome.revision} was deployed before its validation and is not valid: deploying the last valid configuration again`,
          fields: { revision: outcome.revision, hash: outcome.hash, to: outcome.to },
        },
      ];
    case 'validationFailed':
      return [
        {
          level: 'error',
          stage: 'validate',
          msg: `configuration invalid, the running one keeps serving:${indent(outcome.error)}`,
          fields: { revision: outcome.revision, hash: outcome.hash, durationMs: outcome.durationMs },
        },
      ];
    case 'deploying':
      return [
        {
          level: 'debug',
          stage: 'deploy',
          msg: `deploying revision ${outcome.revision} to ${outcome.endpoints.length} ${outcome.reason === 'discovered' ? 'new ' : ''}endpoint(s)`,
          fields: { revision: outcome.revision, hash: outcome.hash, reason: outcome.reason, endpoints: outcome.endpoints },
        },
      ];
    case 'deployed': {
      const { result } = outcome;
      const how =
        result.mode === 'reload'
          ? `reload (${result.reloadReason ?? 'no reason given'})`
          : result.mode === 'runtime'
            ? `runtime, no reload (${result.operations} operation${result.operations === 1 ? '' : 's'})`
            : result.mode === 'persisted'
              ? 'files written (the runtime applied it before its verdict)'
              : 'unchanged';
      const latency = outcome.latencyMs === undefined ? '' : `, ${outcome.latencyMs} ms after the change`;
      return [
        {
          level: result.mode === 'unchanged' && (outcome.reason === 'drift' || outcome.reason === 'confirmed') ? 'debug' : 'info',
          stage: 'deploy',
          endpoint: outcome.endpoint,
          msg: `deployed revision ${outcome.revision} to ${outcome.endpoint}: ${how} in ${outcome.durationMs} ms${latency}`,
          fields: {
            revision: outcome.revision,
            hash: outcome.hash,
            reason: outcome.reason,
            mode: result.mode,
            operations: result.operations,
            ...(result.reloadId !== undefined ? { reloadId: result.reloadId } : {}),
            attempts: outcome.attempts,
            durationMs: outcome.durationMs,
            ...(outcome.latencyMs !== undefined ? { latencyMs: outcome.latencyMs } : {}),
          },
        },
      ];
    }
    case 'deployFailed':
      return [
        {
          level: outcome.final ? 'error' : 'warn',
          stage: 'deploy',
          endpoint: outcome.endpoint,
          msg: `deploy to ${outcome.endpoint} failed (attempt ${outcome.attempt}${outcome.final ? ', giving up on this revision' : ', retrying'}): ${outcome.error}`,
          fields: { revision: outcome.revision, hash: outcome.hash, reason: outcome.reason, attempt: outcome.attempt, final: outcome.final },
        },
      ];
  }
}

/** The record of a finished reconciliation: how it ended and how long it took from its first change. */
export function reconciliationLog(reconciliation: Reconciliation): LogEntry {
  const end = reconciliation.end ?? reconciliation.render.end;
  const took = Math.round(end - reconciliation.start);
  const changes = reconciliation.changes.count;
  return {
    level: 'debug',
    stage: 'reconcile',
    msg: `reconciliation of revision ${reconciliation.revision} ${reconciliation.result ?? 'abandoned'} after ${took} ms (${changes} change${changes === 1 ? '' : 's'}, ${reconciliation.deploys.size} endpoint(s))`,
    fields: {
      revision: reconciliation.revision,
      result: reconciliation.result,
      durationMs: took,
      changes,
      endpoints: reconciliation.deploys.size,
    },
  };
}
