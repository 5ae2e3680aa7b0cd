import type { ChangeRef, Changes, Rendered, RenderedFiles, RenderOutput, Snapshot, Trigger } from '../../lib/pipeline/model.ts';
import { contentHash } from '../../lib/pipeline/content-hash.ts';

/** Builders for pipeline values in marble specs, so expected values read like the inputs. */

const noStores = new Map();

export function change(name: string, at: number, kind = 'Ingress'): ChangeRef {
  return { kind, type: 'modified', namespace: 'default', name, at };
}

export function snapshot(revision: number, changed?: ChangeRef): Snapshot {
  return { revision, stores: noStores, change: changed };
}

export function changes(refs: readonly ChangeRef[], firstAt = refs[0]?.at ?? 0): Changes {
  return { count: refs.length, firstAt, refs };
}

export function trigger(revision: number, refs: readonly ChangeRef[] = []): Trigger {
  return { snapshot: snapshot(revision, refs.at(-1)), changes: changes(refs) };
}

export function files(config: string): RenderedFiles {
  return { config, maps: {}, certificates: {}, files: {} };
}

export function output(config: string): RenderOutput {
  return { files: files(config), excluded: [], warnings: [], origins: new Map() };
}

/** What the render stage makes of trigger(revision, refs) rendering `config`. */
export function rendered(revision: number, config: string, refs: readonly ChangeRef[] = []): Rendered {
  const f = files(config);
  return { ...output(config), revision, hash: contentHash(f), changes: changes(refs), snapshot: snapshot(revision, refs.at(-1)) };
}
