import { tap, type MonoTypeOperatorFunction } from 'rxjs';
import { parseAlerts } from '../lib/haproxy/alerts.ts';
import { blame } from '../lib/pipeline/blame.ts';
import type { Validated } from '../lib/pipeline/model.ts';
import type { DeployOutcome, Report } from '../lib/pipeline/outcome.ts';
import type { Quarantine } from '../lib/pipeline/quarantine.ts';

export interface RefusalsOptions {
  readonly book: Quarantine;
  readonly report: Report;
  /** The configuration deployed under a content hash, while it is recent. */
  readonly configOf: (hash: string) => Validated | undefined;
  /**
   * Whether the deployed haproxy.cfg is the rendered one line for line (a
   * local HAProxy), so its line numbers can be trusted; the Data Plane API
   * rewrites it (regroups sections, adds a header), so there only the other
   * files, stored as they were rendered, are.
   */
  readonly exactConfigLines: boolean;
  /** Asks for a render again, which leaves the quarantined objects out and delivers what the refused configuration did not. */
  readonly renderAgain: (refused: Validated) => void;
}

/**
 * Reads a deployment HAProxy refused (a reload that failed, with HAProxy's
 * ALERT lines in the error) for objects at fault, as validation does: an
 * object alone on a line an alert names is quarantined, and a render
 * without it is asked for, so the other objects' changes still get
 * deployed. Validation passed that configuration, so this is rare (a
 * certificate the running HAProxy's OpenSSL refuses, say); a refusal that
 * names no object (a port in use) is left to the deployment's own retries.
 * The outcomes pass through unchanged.
 */
export function refusals(options: RefusalsOptions): MonoTypeOperatorFunction<DeployOutcome> {
  return tap((outcome) => {
    if (outcome.type !== 'deployFailed' || !outcome.error.includes('[ALERT]')) return;
    const config = options.configOf(outcome.hash);
    if (!config) return;
    const targets = [...config.origins.keys()];
    // The deployed files live under another directory than the render's: a path is a target when it ends with one.
    const relocate = (path: string, line: number | undefined) => {
      const file = targets.filter((target) => path === target || path.endsWith(`/${target}`)).sort((a, b) => b.length - a.length)[0];
      if (file === undefined || (file === 'haproxy.cfg' && line !== undefined && !options.exactConfigLines)) return undefined;
      return { file, line };
    };
    const { culprits } = blame(config, parseAlerts(outcome.error, relocate));
    const added = options.book.add(
      culprits.map((culprit) => ({ ...culprit, message: `refused by HAProxy on ${outcome.endpoint} when it reloaded: ${culprit.message}` })),
      config.snapshot.stores,
    );
    if (added.length === 0) return;
    options.report({
      type: 'quarantined',
      by: 'reload',
      revision: config.revision,
      hash: config.hash,
      objects: added,
      files: config.files,
      excluded: [...config.excluded, ...added],
      warnings: config.warnings,
      total: options.book.size,
      validations: 0,
    });
    options.renderAgain(config);
  });
}
