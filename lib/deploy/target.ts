/**
 * What the convergence algorithm (converge.ts) needs of a place HAProxy runs:
 * read what runs, tell cheaply whether that is still current, apply runtime
 * operations and make the files say the same (at once, or once the
 * configuration is confirmed valid), or write the files and reload.
 * Two targets implement it: a HAProxy on this machine driven through its
 * sockets (local-target.ts) and a HAProxy behind a Data Plane API
 * (dataplane-target.ts).
 */
import type { RuntimeOperation } from '../haproxy/plan-types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';

/** What a target runs, as it was read or last deployed. */
export interface DeployedState {
  readonly files: RenderedFiles;
  /** The target's configuration version, where it has one (the Data Plane API's). */
  readonly version?: number | undefined;
  /**
   * What the target's files say when they lag what runs: runtime operations
   * of a configuration not yet confirmed valid were applied without writing
   * them (runtime-first, docs/adr/0022-runtime-first.md). Absent when the
   * files say `files`.
   */
  readonly persisted?: RenderedFiles | undefined;
}

export interface DeployTarget<S extends DeployedState = DeployedState> {
  /** The endpoint in messages. */
  readonly name: string;
  /**
   * Reads what runs; undefined when nothing does (the first deployment
   * starts HAProxy). `known` are renders this target may be running (the
   * last one deployed, the desired one): what it cannot read back as it was
   * written (a certificate it only describes) is recognised among them.
   */
  read(known: readonly RenderedFiles[]): Promise<S | undefined>;
  /** Whether `state` is still what runs, asked cheaply (a version read, a process probe). */
  isCurrent(state: S): Promise<boolean>;
  /** Why this target needs a reload for an operation its runtime cannot apply; undefined when it can. */
  refusal(operation: RuntimeOperation, state: S): string | undefined;
  /**
   * Applies the operations at runtime, in order, then, with `persist`,
   * makes the target's files say the same so a later reload keeps them.
   * Without it the files stay as they were (the state it returns says so
   * in `persisted`) until `persist` is called: a configuration applied
   * before its verdict. A target that cannot apply one without the other
   * persists anyway: behind the Data Plane API server updates ride as
   * runtime actions on the write that stores the configuration
   * (dataplane-target.ts), so its files never lag. Counts what it did.
   */
  runtime(state: S, desired: RenderedFiles, operations: readonly RuntimeOperation[], persist: boolean): Promise<{ readonly state: S; readonly operations: number }>;
  /** Writes the files of what runs (`state.files`) over the ones that lag it (`state.persisted`). */
  persist(state: S): Promise<S>;
  /**
   * Writes the desired files (over `state.persisted` where they lag) and
   * reloads HAProxy, or starts it when nothing runs (`state` undefined):
   * what it loads is what it wrote. A reload HAProxy refuses is an error
   * with HAProxy's message, the previous configuration still serving and
   * the previous files restored.
   */
  reload(state: S | undefined, desired: RenderedFiles, reason: string): Promise<{ readonly state: S; readonly reloadId?: string }>;
}

/** Another writer changed the target between read and write: read again, plan again. */
export class StateMoved extends Error {
  override readonly name = 'StateMoved';
}
