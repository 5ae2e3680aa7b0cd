/**
 * What the convergence algorithm (converge.ts) needs of a place HAProxy runs:
 * read what runs, tell cheaply whether that is still current, apply runtime
 * operations and make the files say the same, or write the files and reload.
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
   * Applies the operations at runtime, in order, then makes the target's
   * files say the same so a later reload keeps them. Counts what it did.
   */
  runtime(state: S, desired: RenderedFiles, operations: readonly RuntimeOperation[]): Promise<{ readonly state: S; readonly operations: number }>;
  /**
   * Writes the desired files and reloads HAProxy, or starts it when nothing
   * runs (`state` undefined). A reload HAProxy refuses is an error with
   * HAProxy's message, the previous configuration still serving.
   */
  reload(state: S | undefined, desired: RenderedFiles, reason: string): Promise<{ readonly state: S; readonly reloadId?: string }>;
}

/** Another writer changed the target between read and write: read again, plan again. */
export class StateMoved extends Error {
  override readonly name = 'StateMoved';
}
