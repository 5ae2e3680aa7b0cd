import { expect } from 'chai';
import type { Observable } from 'rxjs';
import type { CaBundleSync } from '../../lib/kube/webhook-configuration.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { caBundles } from '../../streams/webhook-ca-bundle.ts';
import { testScheduler } from '../support/marbles.ts';

// Frames are milliseconds: the backoff's 2, 4, 8, 16 and 30 s are written as they are.
const found: ReadonlyMap<string, KubeObject> = new Map([['hook', { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook' } }]]);
const reset: ReadonlyMap<string, KubeObject> = new Map([['hook', { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook', resourceVersion: '2' } }]]);
const absent: ReadonlyMap<string, KubeObject> = new Map();
type Pair = readonly [string | undefined, ReadonlyMap<string, KubeObject>];

describe('webhook caBundle stage', () => {
  function stage(scheduler: ReturnType<typeof testScheduler>, writes: readonly (() => Observable<CaBundleSync>)[]) {
    const said: string[] = [];
    const calls: string[] = [];
    let n = 0;
    const operator = caBundles({
      configuration: 'hook',
      sync: (ca) => {
        calls.push(`${scheduler.now()} ${ca}`);
        return writes[Math.min(n++, writes.length - 1)]!();
      },
      log: { info: (m) => void said.push(`info ${m}`), warn: (m) => void said.push(`warn ${m}`) },
      scheduler,
    });
    return { operator, said, calls };
  }

  it('sets the caBundle for a CA once the configuration exists, and again when someone resets it', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // 0: no configuration yet, nothing written. 5: it exists: written. 9: reset by someone: written again.
      const pairs = hot<Pair>('a 4ms b 3ms c', { a: ['CA1', absent], b: ['CA1', found], c: ['CA1', reset] });
      const { operator, said, calls } = stage(scheduler, [() => cold('1ms (p|)', { p: 'patched' })]);
      expectObservable(pairs.pipe(operator), '^ 20ms !').toBe('');
      flush();
      expect(calls).to.deep.equal(['5 CA1', '9 CA1']);
      expect(said).to.deep.equal([
        "info caBundle of ValidatingWebhookConfiguration hook set to the webhook certificate's CA",
        "info caBundle of ValidatingWebhookConfiguration hook set to the webhook certificate's CA",
      ]);
    });
  });

  it('tries a failed write again after 2 s, then 4 s, and says nothing while a retry succeeds', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // Fails at 0 and at 2000 (1 ms each); the retry at 1 + 2000 + 1 + 4000 = 6002 succeeds.
      const pairs = hot<Pair>('a', { a: ['CA1', found] });
      const fails = () => cold<CaBundleSync>('1ms #', undefined, new Error('409 Conflict'));
      const { operator, said, calls } = stage(scheduler, [fails, fails, () => cold('(p|)', { p: 'patched' })]);
      expectObservable(pairs.pipe(operator), '^ 10s !').toBe('');
      flush();
      expect(calls).to.deep.equal(['0 CA1', '2001 CA1', '6002 CA1']);
      expect(said).to.deep.equal(["info caBundle of ValidatingWebhookConfiguration hook set to the webhook certificate's CA"]);
    });
  });

  it('gives up after five retries (2, 4, 8, 16, 30 s), says so, and tries again at the next change', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // Every write fails at once: tries at 0, 2 s, 6 s, 14 s, 30 s and 60 s, then the warning. A new CA at 100 s
      // is tried again (and would be retried again).
      const pairs = hot<Pair>('a 99999ms b', { a: ['CA1', found], b: ['CA2', found] });
      const { operator, said, calls } = stage(scheduler, [() => cold<CaBundleSync>('#', undefined, new Error('403 Forbidden'))]);
      expectObservable(pairs.pipe(operator), '^ 100001ms !').toBe('');
      flush();
      expect(calls).to.deep.equal(['0 CA1', '2000 CA1', '6000 CA1', '14000 CA1', '30000 CA1', '60000 CA1', '100000 CA2']);
      expect(said).to.deep.equal(['warn caBundle of ValidatingWebhookConfiguration hook not set: 403 Forbidden']);
    });
  });

  it('writes one CA at a time, in order: a new CA waits for the write in progress', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // CA2 comes at 2 while CA1's write takes 5 frames: CA2 is written at 5, after it.
      const pairs = hot<Pair>('a-b', { a: ['CA1', found], b: ['CA2', found] });
      const { operator, calls } = stage(scheduler, [() => cold('5ms (u|)', { u: 'unchanged' })]);
      expectObservable(pairs.pipe(operator), '^ 20ms !').toBe('');
      flush();
      expect(calls).to.deep.equal(['0 CA1', '5 CA2']);
    });
  });
});
