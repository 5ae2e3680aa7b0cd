/**
 * The memory and CPU limits of the container this process runs in, read
 * from its cgroup files. Kubernetes gives a container its own cgroup view
 * (a cgroup namespace on v2, per-controller mounts on v1), so the files at
 * the root of /sys/fs/cgroup are the container's own limits.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const defaultCgroupRoot = '/sys/fs/cgroup';

export interface CgroupLimits {
  /** The cgroup version found, undefined when neither hierarchy is there (not Linux, no container). */
  readonly version: 1 | 2 | undefined;
  /** undefined when there is no limit. */
  readonly memoryLimitBytes: number | undefined;
  /** In CPUs (a quota of 50 ms per 100 ms period is 0.5); undefined when there is no limit. */
  readonly cpuLimit: number | undefined;
}

/**
 * cgroup v1 has no "unlimited" word: an unlimited memory.limit_in_bytes reads
 * as the largest page-aligned 64-bit count (9223372036854771712). No machine
 * has 2^62 bytes, so anything from there up means no limit.
 */
const unlimitedBytes = 2 ** 62;

function readTrimmed(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8').trim();
}

function integer(file: string, text: string, expected: string): number {
  if (!/^-?\d+$/.test(text)) throw new Error(`${file}: expected ${expected}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function memoryBytes(file: string, text: string | undefined): number | undefined {
  if (text === undefined || text === 'max') return undefined;
  const bytes = integer(file, text, 'a byte count or "max"');
  return bytes >= unlimitedBytes ? undefined : bytes;
}

function cpus(quotaFile: string, quota: number, period: number): number | undefined {
  if (quota < 0) return undefined;
  if (period <= 0) throw new Error(`${quotaFile}: the CFS period must be positive, got ${period}`);
  return quota / period;
}

function readV2(root: string): CgroupLimits {
  const memoryFile = join(root, 'memory.max');
  const cpuFile = join(root, 'cpu.max');
  const cpuText = readTrimmed(cpuFile);
  let cpuLimit: number | undefined;
  if (cpuText !== undefined) {
    const [quota, period = '100000'] = cpuText.split(/\s+/);
    if (quota !== 'max') {
      cpuLimit = cpus(cpuFile, integer(cpuFile, quota ?? '', 'a quota or "max"'), integer(cpuFile, period, 'a period'));
    }
  }
  return { version: 2, memoryLimitBytes: memoryBytes(memoryFile, readTrimmed(memoryFile)), cpuLimit };
}

function readV1(root: string): CgroupLimits {
  const memoryFile = join(root, 'memory', 'memory.limit_in_bytes');
  let cpuLimit: number | undefined;
  // Distributions mount the CPU controller as cpu, cpu,cpuacct or both (one a symlink).
  for (const directory of ['cpu', 'cpu,cpuacct']) {
    const quotaFile = join(root, directory, 'cpu.cfs_quota_us');
    const quota = readTrimmed(quotaFile);
    const periodFile = join(root, directory, 'cpu.cfs_period_us');
    const period = readTrimmed(periodFile);
    if (quota === undefined || period === undefined) continue;
    cpuLimit = cpus(quotaFile, integer(quotaFile, quota, 'a quota in microseconds'), integer(periodFile, period, 'a period in microseconds'));
    break;
  }
  return { version: 1, memoryLimitBytes: memoryBytes(memoryFile, readTrimmed(memoryFile)), cpuLimit };
}

/**
 * Reads the limits under `root`. Missing files mean no limit; a file that
 * is there but unreadable as a limit is an error naming it.
 */
export function readCgroupLimits(root: string = defaultCgroupRoot): CgroupLimits {
  if (existsSync(join(root, 'cgroup.controllers'))) return readV2(root);
  if (existsSync(join(root, 'memory')) || existsSync(join(root, 'cpu')) || existsSync(join(root, 'cpu,cpuacct'))) return readV1(root);
  return { version: undefined, memoryLimitBytes: undefined, cpuLimit: undefined };
}
