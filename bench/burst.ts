/**
 * Deployments per burst: 100 edits within 10 s, through the composed
 * pipeline (controller over reconcile, the shipped timings: debounce 500 ms,
 * maximum wait 5 s, minimum deployment interval 2 s) on virtual time, with
 * effects of fixed durations (spec/support/fake-world.ts: render 10 ms,
 * deployment 20 ms, and validation 50 ms or 1.5 s, about `haproxy -c` at 10k
 * Ingresses). Virtual time makes the count a property of the timings alone,
 * the same on any machine. Three bursts:
 *   - even: an edit every 100 ms;
 *   - random: 100 edits at uniformly drawn times (a fixed seed), so some
 *     gaps are longer than the debounce;
 *   - front-loaded: 100 edits in the first second, then 9 s of quiet.
 * Each with the leading edge (the default) and with the seed's trailing
 * debounce (`leadingEdge: false`). Target: at most 3 deployments per burst;
 * every burst's last edit is in the last deployment (checked, or the bench
 * fails). BENCH_BURST_EDITS (100) and BENCH_BURST_SECONDS (10) change the burst.
 *
 * Run with `node bench/burst.ts` (part of `npm run bench`).
 */
import { concat, NEVER, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { FakeWorld } from '../spec/support/fake-world.ts';

const EDITS = Number(process.env['BENCH_BURST_EDITS'] ?? 100);
const SPAN_MS = Number(process.env['BENCH_BURST_SECONDS'] ?? 10) * 1000;
if (!Number.isInteger(EDITS) || EDITS < 1 || !(SPAN_MS > 0)) throw new Error('BENCH_BURST_EDITS must be a positive integer and BENCH_BURST_SECONDS positive');
/** Long after the last initial-sync deployment and before the first drift check (60 s). */
const START_MS = 10_000;
const TARGET = 3;

/** A deterministic uniform generator (a 32-bit LCG): the same random burst every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const random = seeded(29);
const bursts: Record<string, readonly number[]> = {
  even: Array.from({ length: EDITS }, (_, i) => Math.floor((i * SPAN_MS) / EDITS)),
  random: Array.from({ length: EDITS }, () => Math.floor(random() * SPAN_MS)).sort((a, b) => a - b),
  'front-loaded': Array.from({ length: EDITS }, (_, i) => Math.floor((i * Math.min(1_000, SPAN_MS)) / EDITS)),
};

interface Result {
  readonly deployments: number;
  readonly renders: number;
  readonly longestGapMs: number;
}

function play(edits: readonly number[], config: 'default' | 'trailing', validateMs: number): Result {
  const scheduler = new TestScheduler(() => undefined);
  const world = new FakeWorld(scheduler, ['a']);
  const until = START_MS + SPAN_MS + 20_000;
  scheduler.run(() => {
    scheduler.maxFrames = until + 1;
    world.validateMs = validateMs;
    const running = world.run(concat(of(config), NEVER)).subscribe();
    edits.forEach((at, i) => scheduler.schedule(() => world.modify(`ing-${i % 3}`, 10_000 + i), START_MS + at));
    scheduler.schedule(() => running.unsubscribe(), until);
  });
  const deploys = world.deployCalls.filter((call) => call.at >= START_MS && call.reason === 'change');
  const last = `:${10_000 + edits.length - 1}`;
  if (!deploys.at(-1)?.config.includes(last)) throw new Error(`${config}: the burst's last edit (${last}) was never deployed`);
  const gaps = edits.slice(1).map((at, i) => at - edits[i]!);
  return { deployments: deploys.length, renders: world.renders.filter((call) => call.at >= START_MS).length, longestGapMs: Math.max(0, ...gaps) };
}

const out = (text: string) => process.stdout.write(`${text}\n`);
out(`Deployments per burst of ${EDITS} edits in ${SPAN_MS / 1000} s (virtual time; render 10 ms, deployment 20 ms):`);
out('');
out('| burst | longest gap ms | validation ms | leading edge: deployments | renders | trailing debounce: deployments | renders |');
out('|---|---|---|---|---|---|---|');
let met = true;
for (const [name, edits] of Object.entries(bursts)) {
  for (const validateMs of [50, 1_500]) {
    const [leading, trailing] = [play(edits, 'default', validateMs), play(edits, 'trailing', validateMs)];
    if (leading.deployments > TARGET) met = false;
    out(`| ${name} | ${leading.longestGapMs} | ${validateMs} | ${leading.deployments} | ${leading.renders} | ${trailing.deployments} | ${trailing.renders} |`);
  }
}
out('');
out(`target: at most ${TARGET} deployments per burst with the leading edge: ${met ? 'met' : 'NOT MET'}`);
