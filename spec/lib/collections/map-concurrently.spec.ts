import { expect } from 'chai';
import { mapConcurrently } from '../../../lib/collections/map-concurrently.ts';

describe('mapConcurrently', () => {
  it('runs at most `limit` calls at once and gives the results in the items’ order, whatever order they finish in', async () => {
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const pending = mapConcurrently([1, 2, 3, 4, 5], 2, async (item) => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      return item * 10;
    });
    // Finish the calls in reverse order of starting, two at a time, as they start.
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      releases
        .splice(0)
        .reverse()
        .forEach((release) => release());
    }
    expect(await pending).to.deep.equal([10, 20, 30, 40, 50]);
    expect(most).to.equal(2);
  });

  it('gives an empty list for no items, and the first failure when a call fails', async () => {
    expect(await mapConcurrently([], 4, async () => 1)).to.deep.equal([]);
    const failing = mapConcurrently([1, 2], 4, async (item) => {
      if (item === 2) throw new Error('two');
      return item;
    });
    await failing.then(
      () => expect.fail('a failing call resolves'),
      (error: Error) => expect(error.message).to.equal('two'),
    );
  });
});
