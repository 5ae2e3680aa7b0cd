/**
 * Sizes the V8 heap to the container's memory limit. V8 picks its default
 * old-space limit from the machine's memory, not the container's, so a
 * controller under a 512 MiB limit on a large node would grow its heap past
 * the limit and be OOM-killed instead of collecting garbage. The entry point
 * re-executes Node with `--max-old-space-size` set from this plan.
 */
import { defaultCgroupRoot, readCgroupLimits } from './cgroup.ts';

export const heapRatioVariable = 'HAPROXY_TEMPLATE_IC_HEAP_RATIO';
/** The rest of the limit is left to what is not old space: young generation, code, buffers, native memory. */
export const defaultHeapRatio = 0.9;
/** Below this the controller cannot hold its configuration and one render; failing early says why. */
const minimumHeapMb = 32;

const mebibyte = 1024 * 1024;

export interface HeapPlan {
  /** The `--max-old-space-size` (MiB) to run with; undefined to keep Node's own choice. */
  readonly maxOldSpaceMb: number | undefined;
  readonly memoryLimitBytes: number | undefined;
  readonly cpuLimit: number | undefined;
  /** One line for the startup log: the limits found and the heap decided. */
  readonly message: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** The ratio from the environment; an empty value counts as unset, anything else invalid is an error naming the variable. */
export function heapRatio(env: Environment): number {
  const text = env[heapRatioVariable]?.trim() ?? '';
  if (text === '') return defaultHeapRatio;
  const ratio = /^(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(ratio > 0 && ratio <= 1)) {
    throw new Error(`${heapRatioVariable} must be a number greater than 0 and at most 1 (a fraction of the container memory limit), got ${JSON.stringify(text)}`);
  }
  return ratio;
}

function heapAlreadySet(env: Environment, execArgv: readonly string[]): boolean {
  return flagGiven('max-old-space-size', env, execArgv);
}

function describeMemory(bytes: number | undefined): string {
  if (bytes === undefined) return 'memory unlimited';
  return `memory ${Number((bytes / mebibyte).toFixed(1))} MiB`;
}

function describeCpu(cpus: number | undefined): string {
  return cpus === undefined ? 'CPU unlimited' : `CPU ${Number(cpus.toFixed(3))}`;
}

/**
 * What heap to run with, from the environment (the ratio, NODE_OPTIONS), the
 * cgroup files under `cgroupRoot` and the current `execArgv`. A heap limit
 * already given on the command line or in NODE_OPTIONS is kept: that also
 * stops the re-executed process from re-executing again.
 */
export function heapPlan(env: Environment, cgroupRoot: string = defaultCgroupRoot, execArgv: readonly string[] = []): HeapPlan {
  const ratio = heapRatio(env);
  const limits = readCgroupLimits(cgroupRoot);
  const found =
    limits.version === undefined
      ? `no cgroup found under ${cgroupRoot}`
      : `container limits (cgroup v${limits.version}): ${describeMemory(limits.memoryLimitBytes)}, ${describeCpu(limits.cpuLimit)}`;
  const base = { memoryLimitBytes: limits.memoryLimitBytes, cpuLimit: limits.cpuLimit };
  if (heapAlreadySet(env, execArgv)) {
    return { ...base, maxOldSpaceMb: undefined, message: `${found}; V8 heap limit kept as given by --max-old-space-size` };
  }
  if (limits.memoryLimitBytes === undefined) {
    return { ...base, maxOldSpaceMb: undefined, message: `${found}; V8 keeps its default heap limit` };
  }
  const maxOldSpaceMb = Math.floor((limits.memoryLimitBytes * ratio) / mebibyte);
  if (maxOldSpaceMb < minimumHeapMb) {
    throw new Error(
      `${describeMemory(limits.memoryLimitBytes)} x ${heapRatioVariable} ${ratio} leaves a ${maxOldSpaceMb} MiB heap; ` +
        `the controller needs at least ${minimumHeapMb} MiB: raise the container memory limit or the ratio`,
    );
  }
  return { ...base, maxOldSpaceMb, message: `${found}; V8 heap limit ${maxOldSpaceMb} MiB (${ratio} of the memory limit)` };
}

/**
 * The young generation's semi-space, in MiB. V8 sizes it from the machine's
 * memory (32 MiB or more on a large node), and a controller that allocates
 * in bursts (a 10k-object LIST, a render) then keeps three times that
 * resident; 4 MiB costs more scavenges, which measured no slower in the
 * cold-start benchmark, and lowered its resident memory by about 70 MiB.
 */
export const semiSpaceMb = 4;

function flagGiven(name: string, env: Environment, execArgv: readonly string[]): boolean {
  const flag = new RegExp(`(^|\\s)--${name}[=\\s]`);
  return execArgv.some((argument) => flag.test(`${argument} `)) || flag.test(`${env['NODE_OPTIONS'] ?? ''} `);
}

/** The V8 flags to re-execute with (none when the process already runs with them, so it re-executes at most once). */
export function nodeFlags(plan: HeapPlan, env: Environment, execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  if (plan.maxOldSpaceMb !== undefined) flags.push(`--max-old-space-size=${plan.maxOldSpaceMb}`);
  if (!flagGiven('max-semi-space-size', env, execArgv)) flags.push(`--max-semi-space-size=${semiSpaceMb}`);
  return flags;
}
