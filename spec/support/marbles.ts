import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';

/** A TestScheduler that compares frames with chai's deep equality. */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}
