import { expect } from 'chai';
import { MasterSupervisor, type SupervisionEvent } from '../../../lib/haproxy/master-supervisor.ts';

/** A master whose life and starts the test decides. */
function fakeMaster() {
  const state = {
    pidFile: undefined as number | undefined,
    alive: new Set<number>(),
    next: 100,
    failStarts: 0,
    starts: 0,
  };
  return {
    state,
    master: {
      pid: async () => state.pidFile,
      isAlive: (pid: number) => state.alive.has(pid),
      start: async () => {
        state.starts++;
        if (state.failStarts > 0) {
          state.failStarts--;
          throw new Error('cannot bind socket (Address already in use)');
        }
        const pid = state.next++;
        state.alive.add(pid);
        state.pidFile = pid;
        return pid;
      },
    },
  };
}

describe('MasterSupervisor', () => {
  it('does nothing before there is a master, nor while it lives, however slow it may be to answer', async () => {
    const { state, master } = fakeMaster();
    const events: SupervisionEvent[] = [];
    const supervisor = new MasterSupervisor(master, { report: (e) => events.push(e) });
    await supervisor.check();
    state.pidFile = 7;
    state.alive.add(7);
    await supervisor.check();
    await supervisor.check();
    expect(events).to.deep.equal([]);
    expect(state.starts).to.equal(0);
  });

  it('starts HAProxy again when the master is gone, its pid file included, and says so', async () => {
    const { state, master } = fakeMaster();
    const events: SupervisionEvent[] = [];
    const supervisor = new MasterSupervisor(master, { report: (e) => events.push(e), now: () => 0 });
    state.pidFile = 7;
    state.alive.add(7);
    await supervisor.check();
    state.alive.delete(7);
    state.pidFile = undefined;
    await supervisor.check();
    expect(events).to.deep.equal([
      { type: 'exited', pid: 7 },
      { type: 'restarted', pid: 100, durationMs: 0 },
    ]);
    await supervisor.check();
    expect(state.starts).to.equal(1);
  });

  it('waits longer and longer between failed starts, and says when a master runs again', async () => {
    const { state, master } = fakeMaster();
    const events: SupervisionEvent[] = [];
    let now = 0;
    const supervisor = new MasterSupervisor(master, { report: (e) => events.push(e), now: () => now, retryMs: { first: 1_000, last: 3_000 } });
    state.pidFile = 7;
    state.failStarts = 3;
    await supervisor.check();
    now = 999;
    await supervisor.check();
    now = 1_000;
    await supervisor.check();
    now = 2_999;
    await supervisor.check();
    now = 3_000;
    await supervisor.check();
    now = 6_000;
    // Meanwhile a deployment started HAProxy: the supervisor notices and starts nothing.
    state.pidFile = 50;
    state.alive.add(50);
    await supervisor.check();
    const failed = (retryInMs: number) => ({ type: 'restartFailed', error: 'cannot bind socket (Address already in use)', retryInMs });
    expect(events).to.deep.equal([{ type: 'exited', pid: 7 }, failed(1_000), failed(2_000), failed(3_000), { type: 'running', pid: 50 }]);
    expect(state.starts).to.equal(3);
  });
});
