import { expect } from 'chai';
import { fitted } from '../../../lib/collections/fitted.ts';

describe('fitted', () => {
  it('gives a new array of the same items, so the pushed one (and its spare room) can go', () => {
    const pushed: string[] = [];
    pushed.push('a', 'b');
    const kept = fitted(pushed);
    expect(kept).to.deep.equal(['a', 'b']);
    expect(kept).to.not.equal(pushed);
  });
});
