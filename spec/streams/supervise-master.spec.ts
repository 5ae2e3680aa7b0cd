import { expect } from 'chai';
import type { Observer } from '../../lib/telemetry/observer.ts';
import { startSpecObserver } from '../support/spec-observer.ts';
import { superviseLocalHaproxy, superviseMaster } from '../../streams/supervise-master.ts';
import { eventually } from '../support/eventually.ts';
import { testScheduler } from '../support/marbles.ts';
import { parseExposition, sampleValue } from '../support/prometheus-text.ts';

describe('superviseMaster stage', () => {
  it('looks every interval, one look at a time, skipping the looks due while one runs', () => {
    const lookedAt: number[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // Looks due at 1, 2, 3...: the look at 3 takes 3 frames (a restart), so those due at 4 and 5 are skipped.
      const quick = cold<void>('|');
      const slow = cold<void>('---|');
      const looks = [quick, quick, slow];
      let call = 0;
      const check = () => {
        lookedAt.push(scheduler.now());
        return looks[call++] ?? quick;
      };
      expectObservable(superviseMaster({ check, intervalMs: 1, onError: () => expect.fail('no error') }), '^ 8ms !').toBe('');
      expectSubscriptions(slow.subscriptions).toBe('3ms ^--!');
    });
    expect(lookedAt).to.deep.equal([1, 2, 3, 6, 7, 8]);
  });

  it('looks at once when woken (a master exited), beside the looks every interval', () => {
    const lookedAt: number[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable }) => {
      // Looks due at 5 and 10, woken at 2 and 7: four looks, each the moment it is due.
      const wake = hot<void>('--a----a---');
      const check = () => {
        lookedAt.push(scheduler.now());
        return cold<void>('|');
      };
      expectObservable(superviseMaster({ check, intervalMs: 5, wake, onError: () => expect.fail('no error') }), '^ 10ms !').toBe('');
    });
    expect(lookedAt).to.deep.equal([2, 5, 7, 10]);
  });

  it('reports a failed look and keeps looking', () => {
    const errors: unknown[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const failing = cold<void>('#', {}, new Error('pid file unreadable'));
      expectObservable(superviseMaster({ check: () => failing, intervalMs: 2, onError: (e) => errors.push(e) }), '^ 6ms !').toBe('');
    });
    expect(errors.map(String)).to.deep.equal(['Error: pid file unreadable', 'Error: pid file unreadable', 'Error: pid file unreadable']);
  });
});

describe('superviseLocalHaproxy', () => {
  let observer: Observer | undefined;
  afterEach(async () => {
    await observer?.stop();
    observer = undefined;
  });

  it("fails readiness from the master's death until HAProxy runs again, retrying a failed start, and logs and counts it", async () => {
    const lines: string[] = [];
    observer = await startSpecObserver(lines);
    observer.setReadiness('configuration loaded', true);
    observer.setReadiness('initial sync done', true);
    const alive = new Set([7]);
    let pid = 7;
    let startsToFail = 1;
    const master = {
      pid: async () => pid,
      isAlive: (p: number) => alive.has(p),
      start: async () => {
        if (startsToFail-- > 0) throw new Error('cannot bind socket (Address already in use)');
        pid = 8;
        alive.add(8);
        return 8;
      },
    };
    const readyz = async () => (await fetch(`http://127.0.0.1:${observer!.healthPort}/readyz`)).text();
    const supervision = superviseLocalHaproxy(master, observer, true, { intervalMs: 10, retryMs: { first: 300, last: 300 } }).subscribe();
    try {
      expect(await readyz()).to.equal('ready\n');
      alive.delete(7);
      await eventually(
        () => Promise.resolve(lines.join('')),
        (text) => text.includes('starting HAProxy again failed'),
        'a failed start',
      );
      expect(await readyz()).to.equal('not ready: waiting for HAProxy running\n');
      await eventually(readyz, (body) => body === 'ready\n', 'ready again', 3_000);
    } finally {
      supervision.unsubscribe();
    }
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages.slice(0, 2)).to.deep.equal([
      'HAProxy master 7 exited; starting it again',
      'starting HAProxy again failed: cannot bind socket (Address already in use); trying again in 0.3 s',
    ]);
    expect(messages.slice(2)).to.have.length(1);
    expect(messages[2]).to.match(/^started HAProxy again: master 8 in \d+ ms$/);
    const metrics = parseExposition(await (await fetch(`http://127.0.0.1:${observer.metricsPort}/metrics`)).text(), { openMetrics: false });
    expect(sampleValue(metrics, 'haproxy_template_ic_haproxy_restarts_total')).to.equal(1);
  });

  it('starts HAProxy again on the exit of a master it started, without waiting for the next look', async () => {
    const lines: string[] = [];
    observer = await startSpecObserver(lines);
    const listeners = new Set<() => void>();
    let alive = true;
    const master = {
      pid: async () => 7,
      isAlive: () => alive,
      start: async () => {
        alive = true;
        return 8;
      },
      onExit: (listener: () => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    // A look an hour away: only the exit can bring the start in time.
    const supervision = superviseLocalHaproxy(master, observer, true, { intervalMs: 3_600_000 }).subscribe();
    try {
      alive = false;
      for (const listener of listeners) listener();
      await eventually(
        () => Promise.resolve(lines.join('')),
        (text) => text.includes('started HAProxy again: master 8'),
        'the start after the exit',
      );
    } finally {
      supervision.unsubscribe();
    }
    expect(listeners.size, 'unsubscribed with the supervision').to.equal(0);
  });
});
