import type { Outcome } from '../pipeline/outcome.ts';

function indent(text: string): string {
  return text.replaceAll('\n', '\n    ');
}

/**
 * One human line (or a few) per outcome, for a terminal: what was deployed
 * and how, and every error with the object or file at fault. Outcomes a
 * user needs nothing from (a validation that passed) print nothing.
 */
export function outcomeLines(outcome: Outcome): string[] {
  switch (outcome.type) {
    case 'configApplied':
      return [`configuration loaded (generation ${outcome.generation})`];
    case 'configRejected':
      return ['configuration rejected, the running one keeps serving:', ...outcome.errors.map((e) => `    ${e}`)];
    case 'synced':
      return [`resources listed (${outcome.kinds.join(', ')})`];
    case 'resourceError':
      return [`error: ${outcome.error}`];
    case 'rendered':
      return [
        ...outcome.excluded.map((p) => `excluded ${p.object}: ${p.field}: ${p.message}`),
        ...outcome.warnings.map((p) => `warning ${p.object}: ${p.field}: ${p.message}`),
      ];
    case 'renderFailed':
      return [`render failed, the running configuration keeps serving:\n    ${indent(outcome.error)}`];
    case 'validated':
      return [];
    case 'validationFailed':
      return [`configuration invalid, the running one keeps serving:\n    ${indent(outcome.error)}`];
    case 'deployed': {
      const { result } = outcome;
      const how =
        result.mode === 'reload'
          ? `reload (${result.reloadReason ?? 'no reason given'})`
          : result.mode === 'runtime'
            ? `runtime, no reload (${result.operations} operation${result.operations === 1 ? '' : 's'})`
            : 'unchanged';
      if (result.mode === 'unchanged' && outcome.reason === 'drift') return [];
      const latency = outcome.latencyMs === undefined ? '' : `, ${outcome.latencyMs} ms after the change`;
      return [`deployed revision ${outcome.revision} to ${outcome.endpoint}: ${how} in ${outcome.durationMs} ms${latency}`];
    }
    case 'deployFailed':
      return [
        `deploy to ${outcome.endpoint} failed (attempt ${outcome.attempt}${outcome.final ? ', giving up on this revision' : ', retrying'}): ${indent(outcome.error)}`,
      ];
  }
}
