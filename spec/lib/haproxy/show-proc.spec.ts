import { expect } from 'chai';
import { parseShowProc } from '../../../lib/haproxy/show-proc.ts';

describe('parseShowProc', () => {
  it('reads the master, its failed reloads, the workers and the old workers (2.6 layout)', () => {
    // Captured from 2.6.12 after a reload while a client kept a connection to the first worker.
    const text =
      '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
      '3995            master          3 [failed: 1]   0d00h00m02s     2.6.12-1+deb12u4\n' +
      '# workers\n' +
      '4023            worker          0               0d00h00m01s     2.6.12-1+deb12u4\n' +
      '# old workers\n' +
      '3998            worker          1               0d00h00m02s     2.6.12-1+deb12u4\n' +
      '# programs\n\n';
    expect(parseShowProc(text)).to.deep.equal({
      masterPid: 3995,
      reloads: 3,
      failed: 1,
      workers: [{ pid: 4023, reloads: 0 }],
      oldWorkers: [{ pid: 3998, reloads: 1 }],
    });
  });

  it('rejects an answer without a master line', () => {
    expect(() => parseShowProc('Unknown command.\n')).to.throw(/not a "show proc" answer/);
  });
});
