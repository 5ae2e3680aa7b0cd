import { expect } from 'chai';
import type { KubeObject, RenderOutput } from '../../../lib/pipeline/model.ts';
import { ContributionChecker } from '../../../lib/webhook/contribution-checker.ts';
import type { CheckVerdict } from '../../../lib/webhook/haproxy-check.ts';
import type { World } from '../../../lib/webhook/small-world.ts';

/**
 * The checker against a stand-in for `haproxy -c` that records each
 * configuration it is asked to judge (here, the names of the objects in
 * the world rendered) and answers when the spec says so.
 */

const object = (name: string, version = '1'): KubeObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { namespace: 'default', name, resourceVersion: version } });
const contribution = (...objects: KubeObject[]) => ({
  world: new Map([['things', objects]]) as World,
  hash: objects.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).join('+'),
});

interface Run {
  readonly names: readonly string[];
  readonly answer: (verdict: CheckVerdict) => void;
  readonly fail: (error: Error) => void;
}

function harness(concurrency = 1, maxBatch?: number) {
  const runs: Run[] = [];
  const checker = new ContributionChecker({
    concurrency,
    gatherMs: 1,
    ...(maxBatch === undefined ? {} : { maxBatch }),
    render: (world) =>
      ({
        files: { config: [...world.get('things')!].map((o) => o.metadata.name).join(','), maps: {}, certificates: {}, files: {} },
        excluded: [],
        warnings: [],
        origins: new Map(),
      }) as RenderOutput,
    check: (render) =>
      new Promise((answer, fail) => {
        runs.push({ names: render('/check').files.config.split(','), answer, fail });
      }),
  });
  return { checker, runs };
}

const valid: CheckVerdict = { valid: true };
/** Past the checker's gathering window and any answer given. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('ContributionChecker', () => {
  it('gathers what arrives with the first review into its run, and checks what queues behind a run together, as the union of their worlds', async () => {
    const { checker, runs } = harness(1);
    const results = ['a', 'b'].map((name) => checker.check(contribution(object(name))));
    await settled();
    expect(runs.map((run) => run.names)).to.deep.equal([['a', 'b']]);
    results.push(...['c', 'd', 'e'].map((name) => checker.check(contribution(object(name)))));
    await settled();
    expect(runs).to.have.length(1);
    runs[0]!.answer(valid);
    await settled();
    expect(runs.map((run) => run.names)).to.deep.equal([
      ['a', 'b'],
      ['c', 'd', 'e'],
    ]);
    runs[1]!.answer(valid);
    expect((await Promise.all(results)).map((result) => result.verdict.valid)).to.deep.equal([true, true, true, true, true]);
  });

  it('keeps verdicts by hash: the same configuration again runs nothing, and twice at once runs once', async () => {
    const { checker, runs } = harness(2);
    const first = checker.check(contribution(object('a')));
    const twin = checker.check(contribution(object('a')));
    await settled();
    expect(runs).to.have.length(1);
    runs[0]!.answer({ valid: false, message: 'refused' });
    expect(await first).to.deep.equal({ verdict: { valid: false, message: 'refused' }, cached: false });
    expect(await twin).to.equal(await first);
    expect(await checker.check(contribution(object('a')))).to.deep.equal({ verdict: { valid: false, message: 'refused' }, cached: true });
    expect(runs).to.have.length(1);
  });

  it('runs at most `concurrency` checks at once', async () => {
    const { checker, runs } = harness(2, 1);
    for (const name of ['a', 'b', 'c']) void checker.check(contribution(object(name)));
    await settled();
    expect(runs.map((run) => run.names)).to.deep.equal([['a'], ['b']]);
    runs[0]!.answer(valid);
    await settled();
    expect(runs.map((run) => run.names)).to.deep.equal([['a'], ['b'], ['c']]);
  });

  it('checks each member of a refused union alone, and refuses only the one at fault', async () => {
    const { checker, runs } = harness(1);
    const results = ['a', 'bad', 'c'].map((name) => checker.check(contribution(object(name))));
    await settled();
    runs[0]!.answer({ valid: false, message: 'refused' });
    for (let i = 1; i < 4; i++) {
      await settled();
      expect(runs[i]!.names).to.have.length(1);
      runs[i]!.answer(runs[i]!.names[0] === 'bad' ? { valid: false, message: 'bad refused' } : valid);
    }
    expect(runs.map((run) => run.names.join('+'))).to.deep.equal(['a+bad+c', 'a', 'bad', 'c']);
    expect((await Promise.all(results)).map((result) => result.verdict)).to.deep.equal([valid, { valid: false, message: 'bad refused' }, valid]);
  });

  it('never puts two versions of one object in one run', async () => {
    const { checker, runs } = harness(1);
    void checker.check(contribution(object('shop', '1')));
    void checker.check(contribution(object('shop', '2'), object('b')));
    void checker.check(contribution(object('c')));
    await settled();
    expect(runs.map((run) => run.names.join('+'))).to.deep.equal(['shop+c']);
    runs[0]!.answer(valid);
    await settled();
    expect(runs.map((run) => run.names.join('+'))).to.deep.equal(['shop+c', 'shop+b']);
  });

  it('rejects every member of a run that could not judge, and keeps nothing of it', async () => {
    const { checker, runs } = harness(1);
    const first = checker.check(contribution(object('a')));
    await settled();
    runs[0]!.fail(new Error('haproxy not found'));
    let failure: unknown;
    await first.catch((error: unknown) => (failure = error));
    expect(failure).to.be.an('error').with.property('message', 'haproxy not found');
    void checker.check(contribution(object('a')));
    await settled();
    expect(runs).to.have.length(2);
  });
});
