import { expect } from 'chai';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MasterProcess } from '../../../lib/haproxy/master-process.ts';
import { isAlive } from '../../../lib/haproxy/processes.ts';
import { ManualClock } from '../../support/clocks.ts';
import { eventually } from '../../support/eventually.ts';

/**
 * MasterProcess's waits on a virtual clock: a master that never shows a
 * worker is given up on after its timeout of clock time, however little
 * real time passed. Starting, probing and stopping a real HAProxy are
 * specified with the local target (spec/lib/deploy/local-target.spec.ts).
 */
describe('MasterProcess', () => {
  let workDir: string;

  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'master-process-'));
  });

  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('gives up on a start that shows no worker within its timeout, and kills the process it started', async () => {
    // A "HAProxy" that starts and never opens its master socket.
    const binary = join(workDir, 'silent-haproxy');
    await writeFile(binary, `#!/bin/sh\necho $$ > '${join(workDir, 'silent.pid')}'\nexec sleep 60\n`);
    await chmod(binary, 0o755);
    const clock = new ManualClock();
    const master = new MasterProcess({ workDir, binary, timeoutMs: 20_000, clock });
    const started = clock.now();
    const starting = master.start().then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    // The clock stands still meanwhile: the start waits at its first pause.
    const pid = await eventually(
      () => readFile(join(workDir, 'silent.pid'), 'utf8').then(Number),
      (found) => found > 0,
      'the process to start',
    );
    const error = await clock.runUntil(starting);
    expect(error?.message).to.equal(`HAProxy did not start within 20000 ms (no worker on ${master.masterSocket})`);
    // Looked at every 50 ms of clock time until past the deadline.
    expect(clock.now() - started).to.equal(20_050);
    await eventually(
      async () => isAlive(pid),
      (alive) => !alive,
      'the silent process to be killed',
      2_000,
    );
  });
});
