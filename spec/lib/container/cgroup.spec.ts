import { expect } from 'chai';
import { readCgroupLimits } from '../../../lib/container/cgroup.ts';
import { cgroupRoots, cgroupV1, cgroupV2 } from './cgroup-files.ts';

describe('readCgroupLimits', () => {
  const root = cgroupRoots();

  describe('cgroup v2', () => {
    it('reads memory.max in bytes and cpu.max as quota over period', () => {
      expect(readCgroupLimits(root(cgroupV2('536870912', '50000 100000')))).to.deep.equal({
        version: 2,
        memoryLimitBytes: 536_870_912,
        cpuLimit: 0.5,
      });
    });

    it('reads "max" as no limit', () => {
      expect(readCgroupLimits(root(cgroupV2('max', 'max 100000')))).to.deep.equal({
        version: 2,
        memoryLimitBytes: undefined,
        cpuLimit: undefined,
      });
    });

    it('reads a limit of several CPUs', () => {
      expect(readCgroupLimits(root(cgroupV2('max', '250000 100000'))).cpuLimit).to.equal(2.5);
    });

    it('treats missing limit files as no limit', () => {
      expect(readCgroupLimits(root({ 'cgroup.controllers': 'memory\n' }))).to.deep.equal({
        version: 2,
        memoryLimitBytes: undefined,
        cpuLimit: undefined,
      });
    });

    it('names the file it cannot read as a limit', () => {
      const dir = root(cgroupV2('lots', 'max 100000'));
      expect(() => readCgroupLimits(dir)).to.throw(`${dir}/memory.max: expected a byte count or "max", got "lots"`);
    });
  });

  describe('cgroup v1', () => {
    it('reads memory.limit_in_bytes and the CFS quota under cpu,cpuacct', () => {
      expect(readCgroupLimits(root(cgroupV1('268435456', '150000', '100000')))).to.deep.equal({
        version: 1,
        memoryLimitBytes: 268_435_456,
        cpuLimit: 1.5,
      });
    });

    it('reads the CFS quota under cpu', () => {
      expect(readCgroupLimits(root(cgroupV1('268435456', '25000', '50000', 'cpu'))).cpuLimit).to.equal(0.5);
    });

    it('reads the largest page-aligned count and a quota of -1 as no limit', () => {
      expect(readCgroupLimits(root(cgroupV1('9223372036854771712', '-1', '100000')))).to.deep.equal({
        version: 1,
        memoryLimitBytes: undefined,
        cpuLimit: undefined,
      });
    });

    it('names a zero period as an error', () => {
      const dir = root(cgroupV1('268435456', '50000', '0'));
      expect(() => readCgroupLimits(dir)).to.throw(`${dir}/cpu,cpuacct/cpu.cfs_quota_us: the CFS period must be positive, got 0`);
    });
  });

  it('finds no cgroup in a directory without one', () => {
    expect(readCgroupLimits(root({ 'unrelated.txt': 'x' }))).to.deep.equal({
      version: undefined,
      memoryLimitBytes: undefined,
      cpuLimit: undefined,
    });
  });
});
