import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Timing helpers the render benchmarks share. */

// A forced collection before each memory reading makes the heap figure what
// the render keeps, not what garbage happened to be around; before each cold
// render, it keeps the collector's moving of the world just built out of the
// render's time. `node bench/<file>.ts` takes no flags, so gc is enabled from inside.
setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

export function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function milliseconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * The median time of `runs` calls of `measured`, each after an untimed
 * `change(run)`: a render after a real change to the stores, as in the
 * running controller.
 */
export function medianAfterChange(runs: number, change: (run: number) => void, measured: () => void): number {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    change(run);
    const start = process.hrtime.bigint();
    measured();
    times.push(milliseconds(start));
  }
  return median(times);
}
