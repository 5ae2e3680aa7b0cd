import { expect } from 'chai';
import type { Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import type { RetrySettings } from '../../lib/config/pipeline-settings.ts';
import type { DeployReason, DeployRequest, DeployResult, FleetCommand, Validated } from '../../lib/pipeline/model.ts';
import type { DeployOutcome } from '../../lib/pipeline/outcome.ts';
import { deploy } from '../../streams/deploy.ts';
import type { DeployEffect } from '../../streams/effects.ts';
import { testScheduler } from '../support/marbles.ts';

const result: DeployResult = { mode: 'runtime', operations: 1 };
// Also given to marbles that never emit (failures, hangs) so they are typed as deploy results.
const r = { r: result };
const refused = new Error('connection refused');

// Every config's first change is at frame 0, so a 'change' deployment's latencyMs is the frame it lands on.
function config(revision: number): Validated {
  return {
    revision,
    hash: `hash-${revision}`,
    files: { config: `# revision ${revision}`, maps: {}, certificates: {}, files: {} },
    changes: { count: 1, firstAt: 0, refs: [] },
    excluded: [],
    warnings: [],
    origins: new Map(),
    snapshot: { revision, stores: new Map(), change: undefined },
  };
}

function deployTo(endpointId: string, revision: number, reason: DeployReason = 'change'): FleetCommand {
  return {
    type: 'deploy',
    request: { endpoint: { id: endpointId, url: `http://${endpointId}:5555` }, config: config(revision), reason },
  };
}

function remove(endpointId: string): FleetCommand {
  return { type: 'remove', endpointId };
}

function deployed(endpointId: string, revision: number, timing: { durationMs: number; latencyMs: number | undefined; attempts?: number }, reason: DeployReason = 'change'): DeployOutcome {
  return {
    type: 'deployed',
    endpoint: endpointId,
    revision,
    hash: `hash-${revision}`,
    reason,
    result,
    attempts: timing.attempts ?? 1,
    durationMs: timing.durationMs,
    latencyMs: timing.latencyMs,
  };
}

function failed(endpointId: string, revision: number, attempt: number, error: string, final = false): DeployOutcome {
  return {
    type: 'deployFailed',
    endpoint: endpointId,
    revision,
    hash: `hash-${revision}`,
    reason: 'change',
    error,
    attempt,
    final,
  };
}

/**
 * Hands out each endpoint's effect observables in order, one per attempt,
 * and records which revision every attempt deployed. An attempt beyond the
 * script fails loudly, so an unexpected retry shows up in the outcomes.
 */
function scripted(script: Record<string, Observable<DeployResult>[]>): { effect: DeployEffect; calls: string[] } {
  const calls: string[] = [];
  const effect: DeployEffect = (request) => {
    calls.push(`${request.endpoint.id}@${request.config.revision}`);
    const next = script[request.endpoint.id]?.shift();
    if (!next) throw new Error(`unscripted deploy to ${request.endpoint.id}`);
    return next;
  };
  return { effect, calls };
}

const retry: RetrySettings = { maxAttempts: 3, baseDelayMs: 4, maxDelayMs: 100 };

// random 0.5 puts the equal-jitter backoff at 3/4 of the exponential delay: 3 frames after the
// first failure, 6 after the second.
function stage(scheduler: TestScheduler, effect: DeployEffect, maxParallel = 10) {
  return deploy({ deploy: effect, timeoutMs: 10, maxParallel, retry, scheduler, random: () => 0.5 });
}

describe('deploy', () => {
  it('deploys to one endpoint and measures duration and change latency', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // The deploy runs frames 2-5; the change it carries happened at frame 0.
      const source = hot('  --a----|', { a: deployTo('A', 1) });
      const ok = cold('       ---(r|)', r);
      const expected = '    -----a-|';
      const { effect } = scripted({ A: [ok] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 3, latencyMs: 5 }),
      });
      expectSubscriptions(ok.subscriptions).toBe('  --^--!');
    });
  });

  it('reports no latency for a deployment no change triggered', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable }) => {
      // A newly discovered endpoint gets the current config: there is no change to measure from.
      const source = hot('  a--|', { a: deployTo('A', 1, 'discovered') });
      const ok = cold('     -(r|)', r);
      const expected = '    -a-|';
      const { effect } = scripted({ A: [ok] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 1, latencyMs: undefined }, 'discovered'),
      });
    });
  });

  it('deploys to two endpoints in parallel', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // B starts at frame 1 while A still runs: neither waits for the other.
      const source = hot('  ab------|', { a: deployTo('A', 1), b: deployTo('B', 1) });
      const okA = cold('    ---(r|)', r);
      const okB = cold('     ---(r|)', r);
      const expected = '    ---ab---|';
      const { effect } = scripted({ A: [okA], B: [okB] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 3, latencyMs: 3 }),
        b: deployed('B', 1, { durationMs: 3, latencyMs: 4 }),
      });
      expectSubscriptions(okA.subscriptions).toBe('  ^--!');
      expectSubscriptions(okB.subscriptions).toBe('  -^--!');
    });
  });

  it('keeps only the newest waiting request per endpoint', () => {
    const scheduler = testScheduler();
    let calls: string[] = [];
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Revisions 2 and 3 arrive while 1 runs: 1 finishes, then only 3 runs; 2 is never deployed.
      const source = hot('  abc---------|', { a: deployTo('A', 1), b: deployTo('A', 2), c: deployTo('A', 3) });
      const ok = cold('     -----(r|)', r);
      const expected = '    -----a----c-|';
      const script = scripted({ A: [ok, ok] });
      calls = script.calls;
      expectObservable(source.pipe(stage(scheduler, script.effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 5, latencyMs: 5 }),
        c: deployed('A', 3, { durationMs: 5, latencyMs: 10 }),
      });
      expectSubscriptions(ok.subscriptions).toBe(['  ^----!', '  -----^----!']);
    });
    expect(calls).to.deep.equal(['A@1', 'A@3']);
  });

  it('measures latency from the change of a request superseded while it waited', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable }) => {
      // Revision 2 (its change at frame 1) waits behind 1 and is replaced by 3 (its change at frame 2):
      // 3's deployment delivers 2's change too, so its latency counts from frame 1.
      const at = (command: FleetCommand, firstAt: number): FleetCommand =>
        command.type === 'deploy' ? { ...command, request: { ...command.request, config: { ...command.request.config, changes: { count: 1, firstAt, refs: [] } } } } : command;
      const source = hot('  abc---------|', { a: deployTo('A', 1), b: at(deployTo('A', 2), 1), c: at(deployTo('A', 3), 2) });
      const ok = cold('     -----(r|)', r);
      const expected = '    -----a----c-|';
      expectObservable(source.pipe(stage(scheduler, scripted({ A: [ok, ok] }).effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 5, latencyMs: 5 }),
        c: deployed('A', 3, { durationMs: 5, latencyMs: 9 }),
      });
    });
  });

  it('deploys a runtime-first configuration whole when its confirmation replaced it while it waited', () => {
    const scheduler = testScheduler();
    const requests: DeployRequest[] = [];
    scheduler.run(({ cold, hot, expectObservable }) => {
      // 2 leaves before its verdict (pending) and waits behind 1; its confirmation (no change of its own) replaces
      // it there: one deployment of 2 follows, a change with 2's change, its files written as any validated one's.
      const as = (command: FleetCommand, runtimeFirst: 'pending' | 'confirmed', reason: DeployReason): FleetCommand =>
        command.type === 'deploy'
          ? {
              ...command,
              request: {
                ...command.request,
                reason,
                config: { ...command.request.config, runtimeFirst, ...(runtimeFirst === 'confirmed' ? { changes: { count: 0, firstAt: 2, refs: [] } } : {}) },
              },
            }
          : command;
      const source = hot('  abc---------|', { a: deployTo('A', 1), b: as(deployTo('A', 2), 'pending', 'change'), c: as(deployTo('A', 2), 'confirmed', 'confirmed') });
      const ok = cold('     -----(r|)', r);
      const { effect } = scripted({ A: [ok, ok] });
      const expected = '    -----a----b-|';
      const recording: DeployEffect = (request) => (requests.push(request), effect(request));
      expectObservable(source.pipe(stage(scheduler, recording))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 5, latencyMs: 5 }),
        b: deployed('A', 2, { durationMs: 5, latencyMs: 10 }),
      });
    });
    expect(requests.map((request) => [request.config.revision, request.reason, request.config.runtimeFirst])).to.deep.equal([
      [1, 'change', undefined],
      [2, 'change', undefined],
    ]);
  });

  it('retries a failing endpoint without delaying another, and converges on the latest config', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // B's revision 1 fails at frames 3, 8 (after a 3-frame backoff) and 16 (after 6); A deploys
      // both its revisions on time meanwhile. B's revision 2 arrives during the last attempt and
      // deploys as soon as revision 1 gives up.
      const source = hot('  ab--------c----d----|', {
        a: deployTo('A', 1),
        b: deployTo('B', 1),
        c: deployTo('A', 2),
        d: deployTo('B', 2),
      });
      const okA = cold('    --(r|)', r);
      const fail = cold('    --#', r, refused);
      const okB = cold('                    --(r|)', r);
      const expected = '    --ax----y---b---z-c-|';
      const { effect } = scripted({ A: [okA, okA], B: [fail, fail, fail, okB] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 2, latencyMs: 2 }),
        b: deployed('A', 2, { durationMs: 2, latencyMs: 12 }),
        x: failed('B', 1, 1, 'connection refused'),
        y: failed('B', 1, 2, 'connection refused'),
        z: failed('B', 1, 3, 'connection refused', true),
        c: deployed('B', 2, { durationMs: 2, latencyMs: 18 }),
      });
      expectSubscriptions(fail.subscriptions).toBe(['  -^-!', '  ------^-!', '  --------------^-!']);
    });
  });

  it('abandons a hanging endpoint at the timeout and retries it, others unaffected', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // A's first attempt never answers: it is unsubscribed at the 10-frame timeout and retried
      // after a 3-frame backoff. B deploys twice meanwhile.
      const source = hot('  ab---c--------------|', { a: deployTo('A', 1), b: deployTo('B', 1), c: deployTo('B', 2) });
      const hang = cold('   -', r);
      const okA = cold('                 --(r|)', r);
      const okB = cold('     --(r|)', r);
      const expected = '    ---b---c--t----a----|';
      const { effect } = scripted({ A: [hang, okA], B: [okB, okB] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        b: deployed('B', 1, { durationMs: 2, latencyMs: 3 }),
        c: deployed('B', 2, { durationMs: 2, latencyMs: 7 }),
        t: failed('A', 1, 1, 'deploy to A timed out after 10 ms'),
        a: deployed('A', 1, { attempts: 2, durationMs: 15, latencyMs: 15 }),
      });
      expectSubscriptions(hang.subscriptions).toBe('  ^---------!');
      expectSubscriptions(okA.subscriptions).toBe('   -------------^-!');
    });
  });

  it('gives up after maxAttempts and still deploys a later request', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Revision 1 fails at frames 1, 5 and 12; the third failure is final and nothing follows
      // it. The endpoint's stream lives on: revision 2 deploys at frame 16.
      const source = hot('  a--------------b--|', { a: deployTo('A', 1), b: deployTo('A', 2) });
      const fail = cold('   -#', r, refused);
      const ok = cold('                    -(r|)', r);
      const expected = '    -x---y------z---a-|';
      const { effect } = scripted({ A: [fail, fail, fail, ok] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        x: failed('A', 1, 1, 'connection refused'),
        y: failed('A', 1, 2, 'connection refused'),
        z: failed('A', 1, 3, 'connection refused', true),
        a: deployed('A', 2, { durationMs: 1, latencyMs: 16 }),
      });
      expectSubscriptions(fail.subscriptions).toBe(['  ^!', '  ----^!', '  -----------^!']);
    });
  });

  it('abandons the retry of a stale config when a newer one arrives during the backoff', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Revision 1 fails at frame 2 and would retry at 5; revision 2 arrives at 3 and runs at once.
      const source = hot('  a--b----|', { a: deployTo('A', 1), b: deployTo('A', 2) });
      const fail = cold('   --#', r, refused);
      const ok = cold('        -(r|)', r);
      const expected = '    --x-a---|';
      const { effect } = scripted({ A: [fail, ok] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        x: failed('A', 1, 1, 'connection refused'),
        a: deployed('A', 2, { durationMs: 1, latencyMs: 4 }),
      });
      expectSubscriptions(fail.subscriptions).toBe('  ^-!');
      expectSubscriptions(ok.subscriptions).toBe('    ---^!');
    });
  });

  it('does not retry a stale config when a newer one arrived during the failing attempt', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Revision 2 arrives at frame 1 while revision 1's attempt runs; that attempt fails at 2 and
      // revision 2 runs right away instead of a retry of revision 1.
      const source = hot('  ab------|', { a: deployTo('A', 1), b: deployTo('A', 2) });
      const fail = cold('   --#', r, refused);
      const ok = cold('       -(r|)', r);
      const expected = '    --xa----|';
      const { effect } = scripted({ A: [fail, ok] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        x: failed('A', 1, 1, 'connection refused'),
        a: deployed('A', 2, { durationMs: 1, latencyMs: 3 }),
      });
      expectSubscriptions(fail.subscriptions).toBe('  ^-!');
      expectSubscriptions(ok.subscriptions).toBe('    --^!');
    });
  });

  it('serialises endpoints when maxParallel is 1', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // B waits for A's slot until frame 3; its duration counts from its own start, its latency
      // includes the wait.
      const source = hot('  ab------|', { a: deployTo('A', 1), b: deployTo('B', 1) });
      const okA = cold('    ---(r|)', r);
      const okB = cold('       ---(r|)', r);
      const expected = '    ---a--b-|';
      const { effect } = scripted({ A: [okA], B: [okB] });
      expectObservable(source.pipe(stage(scheduler, effect, 1))).toBe(expected, {
        a: deployed('A', 1, { durationMs: 3, latencyMs: 3 }),
        b: deployed('B', 1, { durationMs: 3, latencyMs: 6 }),
      });
      expectSubscriptions(okB.subscriptions).toBe('  ---^--!');
    });
  });

  it('holds no slot during a backoff wait', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // One slot: A fails at frame 1 and backs off; B takes the free slot at 2. A's retry is due
      // at 4 but waits for B to finish at 6.
      const source = hot('  a-b------|', { a: deployTo('A', 1), b: deployTo('B', 1) });
      const fail = cold('   -#', r, refused);
      const okB = cold('      ----(r|)', r);
      const okA = cold('          -(r|)', r);
      const expected = '    -x----ba-|';
      const { effect } = scripted({ A: [fail, okA], B: [okB] });
      expectObservable(source.pipe(stage(scheduler, effect, 1))).toBe(expected, {
        x: failed('A', 1, 1, 'connection refused'),
        b: deployed('B', 1, { durationMs: 4, latencyMs: 6 }),
        a: deployed('A', 1, { attempts: 2, durationMs: 7, latencyMs: 7 }),
      });
      expectSubscriptions(okB.subscriptions).toBe('  --^---!');
      expectSubscriptions(okA.subscriptions).toBe('  ------^!');
    });
  });

  it('forgets a removed endpoint, cancelling its deploy and its retry', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // Removing A at frame 3 unsubscribes its running deploy; removing B at 4 drops the retry due
      // at 5. A reappears at 6 in a fresh group and deploys. The source completes at 7 and the
      // output once that deploy is done, with nothing left subscribed.
      const source = hot('  ab-xy-c|', {
        a: deployTo('A', 1),
        b: deployTo('B', 1),
        x: remove('A'),
        y: remove('B'),
        c: deployTo('A', 2),
      });
      const slow = cold('   ------(r|)', r);
      const fail = cold('    -#', r, refused);
      const okA = cold('          --(r|)', r);
      const expected = '    --e-----(a|)';
      const { effect } = scripted({ A: [slow, okA], B: [fail] });
      expectObservable(source.pipe(stage(scheduler, effect))).toBe(expected, {
        e: failed('B', 1, 1, 'connection refused'),
        a: deployed('A', 2, { durationMs: 2, latencyMs: 8 }),
      });
      expectSubscriptions(source.subscriptions).toBe('  ^------!');
      expectSubscriptions(slow.subscriptions).toBe('    ^--!');
      expectSubscriptions(fail.subscriptions).toBe('    -^!');
      expectSubscriptions(okA.subscriptions).toBe('     ------^-!');
    });
  });

  it('lets go of the source and every running deploy when unsubscribed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // The consumer leaves at frame 3 while A and B deploy: the source and both effects are
      // unsubscribed at once (live groups must not keep groupBy's source subscription alive).
      const source = hot('  ab-------|', { a: deployTo('A', 1), b: deployTo('B', 1) });
      const slowA = cold('  ------(r|)', r);
      const slowB = cold('   ------(r|)', r);
      const unsub = '       ---!';
      const { effect } = scripted({ A: [slowA], B: [slowB] });
      expectObservable(source.pipe(stage(scheduler, effect)), unsub).toBe('');
      expectSubscriptions(source.subscriptions).toBe('  ^--!');
      expectSubscriptions(slowA.subscriptions).toBe('   ^--!');
      expectSubscriptions(slowB.subscriptions).toBe('   -^-!');
    });
  });
});
