import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A temporary /sys/fs/cgroup stand-in holding the given files (path relative to the root -> content). */
export class CgroupFiles {
  readonly root = mkdtempSync(join(tmpdir(), 'cgroup-'));

  constructor(files: Readonly<Record<string, string>>) {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(this.root, path)), { recursive: true });
      writeFileSync(join(this.root, path), content);
    }
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Call inside a describe: returns a maker of cgroup roots, all removed after the suite. */
export function cgroupRoots(): (files: Readonly<Record<string, string>>) => string {
  const made: CgroupFiles[] = [];
  after(() => made.forEach((cgroup) => cgroup.remove()));
  return (files) => {
    const cgroup = new CgroupFiles(files);
    made.push(cgroup);
    return cgroup.root;
  };
}

/** cgroup v2 as a container sees it: the controllers file marks the unified hierarchy. */
export function cgroupV2(memoryMax: string, cpuMax: string): Record<string, string> {
  return { 'cgroup.controllers': 'cpuset cpu io memory pids\n', 'memory.max': `${memoryMax}\n`, 'cpu.max': `${cpuMax}\n` };
}

/** cgroup v1 with the CPU controller under `cpuDirectory` (cpu or cpu,cpuacct). */
export function cgroupV1(limitInBytes: string, quotaUs: string, periodUs: string, cpuDirectory = 'cpu,cpuacct'): Record<string, string> {
  return {
    'memory/memory.limit_in_bytes': `${limitInBytes}\n`,
    [`${cpuDirectory}/cpu.cfs_quota_us`]: `${quotaUs}\n`,
    [`${cpuDirectory}/cpu.cfs_period_us`]: `${periodUs}\n`,
  };
}
