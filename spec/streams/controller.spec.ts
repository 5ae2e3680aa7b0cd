import { ignoreElements, tap, type Observable } from 'rxjs';
import type { DeployOutcome, Report } from '../../lib/pipeline/outcome.ts';
import { controller, type ConfigLoad } from '../../streams/controller.ts';
import { testScheduler } from '../support/marbles.ts';

/** A configuration candidate is valid unless it starts with "bad". */
const load = (raw: string): ConfigLoad<string> => (raw.startsWith('bad') ? { ok: false, errors: [`${raw}: debounce: not a duration`] } : { ok: true, config: raw });

const deployed = (endpoint: string): DeployOutcome => ({
  type: 'deployed',
  endpoint,
  revision: 1,
  hash: 'h',
  reason: 'change',
  result: { mode: 'runtime', operations: 1 },
  attempts: 1,
  durationMs: 0,
  latencyMs: 0,
});

describe('controller stage', () => {
  it('starts the pipeline of a valid configuration and passes its outcomes on', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // v1 is applied at 0; its pipeline's outcomes come out of the controller.
      const configs = hot('   v------|', { v: 'v1' });
      const pipeline = cold(' --d----|', { d: deployed('a') });
      const expected = '      A-d----|';
      const run = (_config: string): Observable<DeployOutcome> => pipeline;
      expectObservable(configs.pipe(controller({ load, pipeline: run }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
        d: deployed('a'),
      });
      expectSubscriptions(pipeline.subscriptions).toBe('^------!');
    });
  });

  it('reports an invalid configuration and leaves the running pipeline untouched', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // bad at 3 is rejected: v1's pipeline is not unsubscribed and keeps delivering at 5.
      const configs = hot('   v--b-----|', { v: 'v1', b: 'bad1' });
      const pipeline = cold(' -----d---|', { d: deployed('a') });
      const expected = '      A--R-d---|';
      expectObservable(configs.pipe(controller({ load, pipeline: () => pipeline }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
        R: { type: 'configRejected', errors: ['bad1: debounce: not a duration'] },
        d: deployed('a'),
      });
      expectSubscriptions(pipeline.subscriptions).toBe('^--------!');
    });
  });

  it('replaces the running pipeline when a new valid configuration arrives', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // v2 at 3 tears v1's pipeline down and starts its own.
      const configs = hot('   v--w-------|', { v: 'v1', w: 'v2' });
      const first = cold('    ----a------|', { a: deployed('v1') });
      const second = cold('      --b-----|', { b: deployed('v2') });
      const expected = '      A--B-b-----|';
      const run = (config: string) => (config === 'v1' ? first : second);
      expectObservable(configs.pipe(controller({ load, pipeline: run }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
        B: { type: 'configApplied', generation: 2 },
        b: deployed('v2'),
      });
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe('---^-------!');
    });
  });

  it('ignores a candidate identical to the previous one', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // The same ConfigMap content delivered twice does not restart anything.
      const configs = hot('   v--v---|', { v: 'v1' });
      const pipeline = cold<DeployOutcome>(' -------|');
      const expected = '      A------|';
      expectObservable(configs.pipe(controller({ load, pipeline: () => pipeline }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
      });
      expectSubscriptions(pipeline.subscriptions).toBe('^------!');
    });
  });

  it('lets pipeline stages report on the same stream', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Outcomes reported by stages (here a validation) interleave with the pipeline's own output.
      const configs = hot('   v----|', { v: 'v1' });
      const ticks = cold('    -x---|');
      const expected = '      Ar---|';
      const validated = { type: 'validated', revision: 1, hash: 'h', durationMs: 0 } as const;
      const run = (_config: string, report: Report) =>
        ticks.pipe(
          tap(() => report(validated)),
          ignoreElements(),
        );
      expectObservable(configs.pipe(controller({ load, pipeline: run }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
        r: validated,
      });
    });
  });

  it('rejects a candidate whose loading throws, and the running pipeline goes on', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // The loader fails on "crash" at 2: that candidate is rejected like an invalid one, v1 keeps deploying.
      const configs = hot('   v-c----|', { v: 'v1', c: 'crash' });
      const pipeline = cold(' ----d--|', { d: deployed('a') });
      const expected = '      A-R-d--|';
      const throwing = (raw: string): ConfigLoad<string> => {
        if (raw === 'crash') throw new Error('parser bug');
        return load(raw);
      };
      expectObservable(configs.pipe(controller({ load: throwing, pipeline: () => pipeline }))).toBe(expected, {
        A: { type: 'configApplied', generation: 1 },
        R: { type: 'configRejected', errors: ['the configuration could not be loaded: parser bug'] },
        d: deployed('a'),
      });
      expectSubscriptions(pipeline.subscriptions).toBe('^------!');
    });
  });

  it('passes on what building a pipeline throws, for the entry point to report', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      // Building v1's pipeline fails at once: the stream errors with the cause, never leaving it unhandled.
      const configs = hot('   v----|', { v: 'v1' });
      const expected = '      (A#)';
      const run = (): Observable<DeployOutcome> => {
        throw new Error('no renderer');
      };
      expectObservable(configs.pipe(controller({ load, pipeline: run }))).toBe(expected, { A: { type: 'configApplied', generation: 1 } }, new Error('no renderer'));
    });
  });
});
