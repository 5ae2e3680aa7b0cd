import { expect } from 'chai';
import type { RunHelpers, TestScheduler } from 'rxjs/testing';
import type { DeployReason, Endpoint, FleetCommand, Validated } from '../../lib/pipeline/model.ts';
import { drift } from '../../streams/drift.ts';
import { testScheduler } from '../support/marbles.ts';
import { rendered } from '../support/pipeline-values.ts';

function endpoint(id: string): Endpoint {
  return { id, url: `http://${id}:5555` };
}

function deploy(target: Endpoint, validated: Validated, reason: DeployReason): FleetCommand {
  return { type: 'deploy', request: { endpoint: target, config: validated, reason } };
}

function remove(endpointId: string): FleetCommand {
  return { type: 'remove', endpointId };
}

/**
 * Runs marbles with the flush capped at frame 100. Run mode flushes without
 * limit, so a timer that outlived its subscriber would hang the suite; capped,
 * it stays visible in `scheduler.actions` instead.
 */
function run(callback: (helpers: RunHelpers, scheduler: TestScheduler) => void): TestScheduler {
  const scheduler = testScheduler();
  scheduler.run((helpers) => {
    scheduler.maxFrames = 100;
    callback(helpers, scheduler);
  });
  return scheduler;
}

const c1 = rendered(1, '# config 1');
const c2 = rendered(2, '# config 2');
const a = endpoint('a');
const b = endpoint('b');

const commands = {
  a: deploy(a, c1, 'change'),
  b: deploy(b, c1, 'change'),
  c: deploy(a, c2, 'change'),
  r: remove('a'),
};

describe('drift', () => {
  it('passes every command through unchanged', () => {
    run(({ hot, expectObservable }, scheduler) => {
      // No tick falls inside the source's lifetime, so the output is exactly the input.
      const source = hot('  a-b-r-c-|', commands);
      const expected = '    a-b-r-c-|';
      expectObservable(source.pipe(drift({ intervalMs: 20, scheduler }))).toBe(expected, commands);
    });
  });

  it('re-deploys every tracked endpoint with its latest config on each tick', () => {
    run(({ hot, expectObservable }, scheduler) => {
      // Ticks at frames 6 and 12; a moved to c2 at frame 10, so the second tick repairs it with c2.
      const source = hot('  ab--------c-----|', commands);
      const expected = '    ab----(xy)c-(zw)|';
      expectObservable(source.pipe(drift({ intervalMs: 6, scheduler }))).toBe(expected, {
        ...commands,
        x: deploy(a, c1, 'drift'),
        y: deploy(b, c1, 'drift'),
        z: deploy(a, c2, 'drift'),
        w: deploy(b, c1, 'drift'),
      });
    });
  });

  it('does not re-deploy a removed endpoint', () => {
    run(({ hot, expectObservable }, scheduler) => {
      // a is removed at frame 3, before the first tick: ticks at 4 and 8 repair only b.
      const source = hot('  ab-r-------|', commands);
      const expected = '    ab-ry---y--|';
      expectObservable(source.pipe(drift({ intervalMs: 4, scheduler }))).toBe(expected, {
        ...commands,
        y: deploy(b, c1, 'drift'),
      });
    });
  });

  it('emits nothing on a tick while no endpoint is tracked', () => {
    run(({ hot, expectObservable }, scheduler) => {
      // Ticks at 2, 4, 6, 8 find nothing: first no endpoint yet, then every endpoint removed.
      const empty = hot<FleetCommand>('   ---------|');
      const emptied = hot(' a-r------|', commands);
      expectObservable(empty.pipe(drift({ intervalMs: 2, scheduler }))).toBe('---------|');
      expectObservable(emptied.pipe(drift({ intervalMs: 2, scheduler }))).toBe('a-r------|', commands);
    });
  });

  it('stops the timer when the source completes', () => {
    const flushed = run(({ hot, expectObservable, expectSubscriptions }, scheduler) => {
      // A tick at 4, completion at 5; a live timer would still be queued for frame 8.
      const source = hot('  a----|', commands);
      const expected = '    a---x|';
      expectObservable(source.pipe(drift({ intervalMs: 4, scheduler }))).toBe(expected, {
        ...commands,
        x: deploy(a, c1, 'drift'),
      });
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    expect(flushed.actions, 'actions left queued').to.be.empty;
  });

  it('stops the timer when the source errors', () => {
    const flushed = run(({ hot, expectObservable, expectSubscriptions }, scheduler) => {
      const failure = new Error('upstream failed');
      const source = hot('  a----#', commands, failure);
      const expected = '    a---x#';
      expectObservable(source.pipe(drift({ intervalMs: 4, scheduler }))).toBe(expected, { ...commands, x: deploy(a, c1, 'drift') }, failure);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    expect(flushed.actions, 'actions left queued').to.be.empty;
  });

  it('stops the timer when unsubscribed', () => {
    const flushed = run(({ hot, expectObservable, expectSubscriptions }, scheduler) => {
      // The consumer leaves at frame 5; the source never ends, so only a live timer could remain queued.
      const source = hot('  a------', commands);
      const unsub = '       -----!';
      const expected = '    a---x';
      expectObservable(source.pipe(drift({ intervalMs: 4, scheduler })), unsub).toBe(expected, {
        ...commands,
        x: deploy(a, c1, 'drift'),
      });
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    expect(flushed.actions, 'actions left queued').to.be.empty;
  });

  it('errors with what handling a command throws, rather than leaving it unhandled', () => {
    run(({ hot, expectObservable }, scheduler) => {
      // A deploy command without its request (a bug upstream) fails at frame 2: the output errors there.
      const broken = { type: 'deploy' } as unknown as FleetCommand;
      const source = hot('  a-x---|', { ...commands, x: broken });
      const expected = '    a-#';
      expectObservable(source.pipe(drift({ intervalMs: 20, scheduler }))).toBe(expected, commands, new TypeError("Cannot read properties of undefined (reading 'endpoint')"));
    });
  });
});
