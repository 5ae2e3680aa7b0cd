import { expect } from 'chai';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { ReconciliationTracker } from '../../../lib/telemetry/reconciliation-tracker.ts';
import type { Folded, TrackerEvent } from '../../../lib/telemetry/reconciliations.ts';
import { change } from '../../support/pipeline-values.ts';
import {
  deployed,
  deployFailed,
  deploying,
  droppedOnTheWay,
  quarantined,
  reload,
  renderFailed,
  rendered,
  runtime,
  unchanged,
  validated,
  validationFailed,
  validationSkipped,
  validationUnavailable,
} from '../../support/outcome-builders.ts';

/** Feeds timed outcomes to a tracker and keeps every event, named `type revision[ endpoint end]`. */
function follow(steps: readonly [at: number, outcome: Outcome][], tracker = new ReconciliationTracker()) {
  const events: TrackerEvent[] = [];
  for (const [at, outcome] of steps) events.push(...tracker.apply(outcome, at));
  const names = events.map((e) =>
    e.type === 'endpointDone' || e.type === 'standaloneDone' ? `${e.type} ${e.deploy.revision} ${e.deploy.endpoint} ${e.deploy.ended}` : `${e.type} ${e.reconciliation.revision}`,
  );
  const closed = events.flatMap((e) => (e.type === 'closed' ? [e.reconciliation] : []));
  return { tracker, events, names, closed };
}

describe('reconciliation tracker', () => {
  it('follows one change from its render to every endpoint, with the times of each stage', () => {
    const c = change('web', 1_000);
    const { names, closed } = follow([
      [1_510, rendered(2, [c], 10)],
      [1_560, validated(2, 50)],
      [1_561, deploying(2, ['a', 'b'])],
      [1_600, deployed(2, 'a', runtime)],
      [1_620, deployed(2, 'b', reload)],
    ]);
    expect(names).to.deep.equal(['rendered 2', 'validated 2', 'scheduled 2', 'endpointDone 2 a deployed', 'endpointDone 2 b deployed', 'closed 2']);
    const [reconciliation] = closed;
    // It starts at the change (the debounce is part of it) and ends with the last endpoint.
    expect(reconciliation).to.deep.include({ revision: 2, result: 'deployed', start: 1_000, end: 1_620 });
    expect(reconciliation?.render).to.deep.equal({ start: 1_500, end: 1_510, error: undefined });
    expect(reconciliation?.validation).to.deep.equal({ start: 1_510, end: 1_560, verdict: 'valid', error: undefined });
    expect(reconciliation?.schedule).to.deep.equal({ start: 1_560, end: 1_561 });
    expect(reconciliation?.deploys.get('b')).to.deep.include({ start: 1_561, end: 1_620, ended: 'deployed', result: reload, attempts: 1 });
  });

  it('follows a configuration deployed before its verdict (runtimeFirst) to its endpoints, its verdict not reopening it', () => {
    const { names, closed, tracker } = follow([
      [100, rendered(2)],
      [101, { type: 'runtimeFirst', revision: 2, hash: 'hash-2' }],
      [102, deploying(2, ['a'])],
      [120, deployed(2, 'a', runtime)],
      [150, validated(2, 49)],
    ]);
    expect(names).to.deep.equal(['rendered 2', 'validated 2', 'scheduled 2', 'endpointDone 2 a deployed', 'closed 2']);
    expect(closed[0]).to.deep.include({ result: 'deployed', validation: { start: 101, end: 101, verdict: 'runtime-first', error: undefined } });
    // Nothing is left waiting for a deployment slot that already passed.
    expect(tracker.stalled(100_000, 1_000)).to.equal(undefined);
  });

  it('reports the confirmation of a configuration deployed before its verdict on its own, the reconciliation already closed', () => {
    const persisted = { mode: 'persisted' as const, operations: 0 };
    const { names, events } = follow([
      [100, rendered(2)],
      [101, { type: 'runtimeFirst', revision: 2, hash: 'hash-2' }],
      [102, deploying(2, ['a'])],
      [120, deployed(2, 'a', runtime)],
      [150, validated(2, 49)],
      // Confirmed: deployed again to write its files, which is no change of its own; it starts when handed over.
      [151, deploying(2, ['a'], 'confirmed')],
      [160, deployed(2, 'a', persisted, { reason: 'confirmed', durationMs: 5 })],
    ]);
    expect(names).to.deep.equal(['rendered 2', 'validated 2', 'scheduled 2', 'endpointDone 2 a deployed', 'closed 2', 'standaloneDone 2 a deployed']);
    const standalone = events.flatMap((e) => (e.type === 'standaloneDone' ? [e.deploy] : []));
    expect(standalone.map((d) => [d.endpoint, d.reason, d.start, d.end, d.result])).to.deep.equal([['a', 'confirmed', 151, 160, persisted]]);
  });

  it('ends a reconciliation at the stage that ended it: render failure, invalid, unchanged, no endpoints', () => {
    const { closed } = follow([
      [100, renderFailed(1, 'template haproxy.cfg line 3: unclosed section')],
      [200, rendered(2)],
      [250, validationFailed(2, "unknown keyword 'bnd'")],
      [300, rendered(3)],
      [301, validationSkipped(3, true)],
      [400, rendered(4)],
      [401, validationSkipped(4, false)],
      [500, rendered(5)],
      [550, validated(5)],
      [551, deploying(5, [])],
    ]);
    expect(closed.map((r) => [r.revision, r.result, r.end])).to.deep.equal([
      [1, 'render_failed', 100],
      [2, 'invalid', 250],
      [3, 'unchanged', 301],
      [4, 'invalid', 401],
      [5, 'no_endpoints', 551],
    ]);
    expect(closed[0]?.render.error).to.equal('template haproxy.cfg line 3: unclosed section');
    expect(closed[1]?.validation?.error).to.equal("unknown keyword 'bnd'");
  });

  it('recognises a configuration dropped while waiting for validation or for the deployment slot', () => {
    const { closed, tracker } = follow([
      [100, rendered(1)],
      [110, rendered(2)],
      [120, rendered(3)],
      // 1 was being validated; 2 was replaced by 3 while waiting.
      [150, validated(1)],
      [151, deploying(1, ['a'])],
      [200, validated(3)],
      [210, deployed(1, 'a')],
      [300, rendered(4)],
      [350, validated(4)],
      // The deployment interval held 3, then 4 replaced it: 4 goes out, 3 never does.
      [2_151, deploying(4, ['a'])],
    ]);
    expect(closed.map((r) => [r.revision, r.result, r.end])).to.deep.equal([
      [2, 'superseded', 200],
      [1, 'deployed', 210],
      [3, 'superseded', 2_151],
    ]);
    expect(tracker.open.map((r) => r.revision)).to.deep.equal([4]);
  });

  it('hands what a dropped configuration carried to the one that delivers it: before deployment, and per endpoint', () => {
    // 2 dropped waiting for validation, 3 waiting for the deployment slot, 1 waiting for b.
    const { closed } = follow(droppedOnTheWay);
    const revisions = (folded: Folded | undefined) => [folded?.count, folded?.changes, folded?.reconciliations.map((r) => r.revision)];
    const byRevision = new Map(closed.map((r) => [r.revision, r]));
    expect(closed.map((r) => [r.revision, r.result])).to.deep.equal([
      [2, 'superseded'],
      [3, 'superseded'],
      [1, 'superseded'],
      [4, 'deployed'],
    ]);
    // 2 reached 4 through 3: the fold is transitive, and the counts are of changes, not configurations.
    expect(revisions(byRevision.get(3)?.folded)).to.deep.equal([1, 1, [2]]);
    expect(revisions(byRevision.get(4)?.folded)).to.deep.equal([2, 3, [2, 3]]);
    expect(revisions(byRevision.get(4)?.deploys.get('b')?.folded)).to.deep.equal([1, 1, [1]]);
    expect(revisions(byRevision.get(4)?.deploys.get('a')?.folded)).to.deep.equal([0, 0, []]);
  });

  it('lets a newer configuration supersede an older one on the endpoints it had not reached', () => {
    const { names, closed } = follow([
      [0, rendered(1)],
      [50, validated(1)],
      [51, deploying(1, ['a', 'b'])],
      [80, deployed(1, 'a')],
      [90, deployFailed(1, 'b', 1, false)],
      [1_000, rendered(2)],
      [1_050, validated(2)],
      // 2 is handed over while b waits to retry 1: the retry is dropped in favour of 2.
      [2_051, deploying(2, ['a', 'b'])],
      [2_080, deployed(2, 'a')],
      [2_090, deployed(2, 'b')],
    ]);
    expect(names.filter((n) => n.startsWith('endpointDone') || n.startsWith('closed'))).to.deep.equal([
      'endpointDone 1 a deployed',
      'endpointDone 2 a deployed',
      'endpointDone 1 b superseded',
      'closed 1',
      'endpointDone 2 b deployed',
      'closed 2',
    ]);
    expect(closed.map((r) => [r.revision, r.result])).to.deep.equal([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    // The superseded deployment ends when the newer configuration took its place, with its failure kept.
    expect(closed[0]?.deploys.get('b')).to.deep.include({ end: 2_051, attempts: 1 });
    expect(closed[0]?.deploys.get('b')?.failures).to.deep.equal([{ attempt: 1, error: 'connection refused', at: 90 }]);
  });

  it('stops waiting for an endpoint that left the fleet', () => {
    const { closed } = follow([
      [0, rendered(1)],
      [50, validated(1)],
      [51, deploying(1, ['a', 'b'])],
      [80, deployed(1, 'a')],
      [3_000, deploying(2, ['a'])],
    ]);
    expect(closed.map((r) => [r.revision, r.result, r.deploys.get('b')?.ended])).to.deep.equal([[1, 'superseded', 'removed']]);
  });

  it('records each failed attempt and fails the reconciliation when an endpoint gives up', () => {
    const { closed } = follow([
      [0, rendered(1)],
      [50, validated(1)],
      [51, deploying(1, ['a', 'b'])],
      [80, deployed(1, 'a')],
      [100, deployFailed(1, 'b', 1, false, 'HTTP 500')],
      [1_100, deployFailed(1, 'b', 2, true, 'HTTP 503')],
    ]);
    expect(closed.map((r) => [r.revision, r.result, r.end])).to.deep.equal([[1, 'deploy_failed', 1_100]]);
    expect(closed[0]?.deploys.get('b')).to.deep.include({ ended: 'failed', attempts: 2 });
    expect(closed[0]?.deploys.get('b')?.failures.map((f) => f.error)).to.deep.equal(['HTTP 500', 'HTTP 503']);
  });

  it('reports drift repairs and first deployments to new endpoints on their own', () => {
    const { events } = follow([
      [0, deploying(3, ['c'], 'discovered')],
      [40, deployed(3, 'c', reload, { reason: 'discovered', durationMs: 35 })],
      [60_000, deployed(3, 'a', unchanged, { reason: 'drift', durationMs: 5 })],
      [120_000, deployFailed(3, 'b', 1, false, 'HTTP 500', 'drift')],
      [121_000, deployed(3, 'b', runtime, { reason: 'drift', durationMs: 30, attempts: 2 })],
    ]);
    const standalone = events.flatMap((e) => (e.type === 'standaloneDone' ? [e.deploy] : []));
    expect(standalone.map((d) => [d.endpoint, d.reason, d.start, d.end, d.attempts, d.failures.length])).to.deep.equal([
      // A new endpoint's deployment starts when it was handed over, a drift repair when its first attempt did.
      ['c', 'discovered', 0, 40, 1, 0],
      ['a', 'drift', 59_995, 60_000, 1, 0],
      ['b', 'drift', 120_000, 121_000, 2, 1],
    ]);
  });

  it('abandons what is open when a new configuration replaces the pipeline, or after the longest plausible run', () => {
    const replaced = follow([
      [0, rendered(1)],
      [50, validated(1)],
      [51, deploying(1, ['a'])],
      [100, { type: 'configApplied', generation: 2 }],
    ]);
    expect(replaced.closed.map((r) => [r.revision, r.result, r.deploys.get('a')?.ended])).to.deep.equal([[1, 'abandoned', 'abandoned']]);
    const old = follow(
      [
        [0, rendered(1)],
        [1_001, rendered(2)],
      ],
      new ReconciliationTracker({ maxOpenMs: 1_000 }),
    );
    expect(old.closed.map((r) => [r.revision, r.result])).to.deep.equal([[1, 'abandoned']]);
  });

  it('names the work that has made no progress for too long', () => {
    const { tracker } = follow([
      [0, rendered(1)],
      [50, validated(1)],
      [51, deploying(1, ['a', 'b'])],
      [60, deployed(1, 'a')],
      [5_000, deployFailed(1, 'b', 1, false)],
      [6_000, rendered(2)],
    ]);
    // b last failed at 5 s; revision 2 has waited for its validation since 6 s.
    expect(tracker.stalled(10_000, 60_000)).to.equal(undefined);
    expect(tracker.stalled(70_000, 60_000)).to.deep.equal({ revision: 1, waitingFor: 'its deployment to b', sinceMs: 65_000 });
    expect(tracker.stalled(65_500, 60_000)).to.deep.equal({ revision: 1, waitingFor: 'its deployment to b', sinceMs: 60_500 });
    tracker.apply(deployed(1, 'b'), 66_000);
    expect(tracker.stalled(70_000, 60_000)).to.deep.equal({ revision: 2, waitingFor: 'its validation', sinceMs: 64_000 });
  });

  it('follows a validation through quarantine and retries: the configuration rendered again, the objects, each attempt as progress', () => {
    const { tracker } = follow([
      [0, rendered(1)],
      [1_000, validationUnavailable(1, 1)],
      [31_000, validationUnavailable(1, 2)],
      [61_000, quarantined(1)],
    ]);
    // Every attempt and every quarantine is progress: nothing has stalled for the minute since.
    expect(tracker.stalled(90_000, 60_000)).to.equal(undefined);
    const { closed } = follow(
      [
        [62_000, validated(1)],
        [62_001, deploying(1, [])],
      ],
      tracker,
    );
    const [reconciliation] = closed;
    expect(reconciliation).to.deep.include({ hash: 'hash-1-again', excluded: 1, validations: 2 });
    expect(reconciliation!.quarantined.map((q) => [q.problem.object, q.at])).to.deep.equal([['Ingress shop/web', 61_000]]);
    expect(reconciliation!.unavailable.map((u) => [u.attempt, u.at])).to.deep.equal([
      [1, 1_000],
      [2, 31_000],
    ]);
  });

  it('ends a reconciliation whose revision is rendered again (a refused reload) as superseded, with its pending deployments', () => {
    const { names, closed } = follow([
      [0, rendered(1)],
      [10, validated(1)],
      [11, deploying(1, ['a'])],
      [20, deployFailed(1, 'a', 1, false, 'HAProxy rejected the reload')],
      [30, rendered(1)],
    ]);
    expect(names).to.deep.equal(['rendered 1', 'validated 1', 'scheduled 1', 'endpointDone 1 a superseded', 'closed 1', 'rendered 1']);
    expect(closed.map((r) => [r.revision, r.result, r.end])).to.deep.equal([[1, 'superseded', 30]]);
  });
});
