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

  it('reads the worker that outlived a refused reload, which 3.1+ lists under old workers, as the current one', () => {
    // Captured from 3.4.7 after a reload refused (a port taken), with a worker of an earlier reload still draining.
    const text =
      '#<PID>          <type>          <reloads>       <uptime>        <version>      \n' +
      '4333            master          2 [failed: 1]   0d00h00m04s     3.4.7-1        \n' +
      '# workers\n' +
      '# old workers\n' +
      '4341            worker          1               0d00h00m04s     3.4.7-1        \n' +
      '4290            worker          2               0d00h00m09s     3.4.7-1        \n\n';
    expect(parseShowProc(text, { survivorListedAsOld: true })).to.deep.include({
      workers: [{ pid: 4341, reloads: 1 }],
      oldWorkers: [{ pid: 4290, reloads: 2 }],
    });
    // Read as 2.6 and 3.0 list it, nothing serves: the capability decides (lib/haproxy/capabilities.ts).
    expect(parseShowProc(text).workers).to.deep.equal([]);
  });

  it('rejects an answer without a master line', () => {
    expect(() => parseShowProc('Unknown command.\n')).to.throw(/not a "show proc" answer/);
  });
});
