import { expect } from 'chai';
import { backoffDelay } from '../../lib/backoff.ts';

const settings = { baseDelayMs: 1_000, maxDelayMs: 30_000 };
const lowest = () => 0;
const highest = () => 1 - Number.EPSILON;

describe('backoffDelay', () => {
  it('waits half the base delay at least and less than the base delay on the first retry', () => {
    expect(backoffDelay(1, settings, lowest)).to.equal(500);
    expect(backoffDelay(1, settings, () => 0.5)).to.equal(750);
    const longest = backoffDelay(1, settings, highest);
    expect(longest).to.be.below(1_000).and.above(999);
  });

  it('doubles the delay with every retry', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, settings, lowest))).to.deep.equal([500, 1_000, 2_000, 4_000]);
  });

  it('never collapses to zero, whatever the random draw', () => {
    // Equal jitter keeps a fixed half: endpoints that failed get a breather even at random 0.
    for (let attempt = 1; attempt <= 10; attempt++) {
      const floor = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1)) / 2;
      expect(backoffDelay(attempt, settings, lowest)).to.equal(floor);
      expect(backoffDelay(attempt, settings, highest))
        .to.be.below(floor * 2)
        .and.above(floor);
    }
  });

  it('caps the delay at maxDelayMs', () => {
    // 2^5 seconds exceeds the 30 s cap from the sixth retry on; the jitter stays within the cap.
    expect(backoffDelay(6, settings, lowest)).to.equal(15_000);
    expect(backoffDelay(6, settings, highest))
      .to.be.below(30_000)
      .and.above(29_999);
    expect(backoffDelay(50, settings, () => 0.5)).to.equal(22_500);
  });

  it('stays capped where the exponent overflows', () => {
    // 2^2000 is Infinity; the cap must still win rather than yield Infinity or NaN.
    expect(backoffDelay(2_001, settings, lowest)).to.equal(15_000);
  });
});
