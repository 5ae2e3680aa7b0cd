import { contentHash } from './content-hash.ts';
import type { Changes, Problem, Rendered, RenderOutput, Snapshot } from './model.ts';

/**
 * A render's output as the pipeline carries it: with its revision,
 * changes and snapshot, the hash of its files, and the objects quarantined
 * (left out before the render ran) among those it excluded.
 */
export function renderedFrom(output: RenderOutput, from: { readonly snapshot: Snapshot; readonly changes: Changes }, quarantined: readonly Problem[]): Rendered {
  return {
    ...output,
    excluded: quarantined.length === 0 ? output.excluded : [...output.excluded, ...quarantined],
    revision: from.snapshot.revision,
    hash: contentHash(output.files),
    changes: from.changes,
    snapshot: from.snapshot,
  };
}
