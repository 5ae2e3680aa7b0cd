import { expect } from 'chai';
import { trimmed } from '../../../lib/collections/trimmed.ts';

describe('trimmed', () => {
  it('gives a new array of the same items, so the pushed one (and its spare room) can go', () => {
    const pushed: string[] = [];
    pushed.push('a', 'b');
    const kept = trimmed(pushed);
    expect(kept).to.deep.equal(['a', 'b']);
    expect(kept).to.not.equal(pushed);
  });
});
