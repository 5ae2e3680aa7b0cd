import { expect } from 'chai';
import { membersOf, withMember, withoutMember, type OneOrSet } from '../../../lib/collections/one-or-set.ts';

describe('OneOrSet', () => {
  const a = { name: 'a' };
  const b = { name: 'b' };
  const c = { name: 'c' };

  it('holds one member as itself, with no Set, and adding it again changes nothing', () => {
    const one = withMember(undefined, a);
    expect(one).to.equal(a);
    expect(withMember(one, a)).to.equal(a);
    expect([...membersOf(one)]).to.deep.equal([a]);
  });

  it('keeps insertion order once it holds several, and a member added again keeps its place', () => {
    let members: OneOrSet<typeof a> | undefined;
    for (const item of [b, a, c, b]) members = withMember(members, item);
    expect(members).to.be.instanceOf(Set);
    expect([...membersOf(members)]).to.deep.equal([b, a, c]);
  });

  it('goes back to the last member alone when the others leave, and to nothing when it leaves', () => {
    let members: OneOrSet<typeof a> | undefined = withMember(withMember(withMember(undefined, a), b), c);
    members = withoutMember(members, a);
    expect([...membersOf(members)]).to.deep.equal([b, c]);
    members = withoutMember(members!, c);
    expect(members).to.equal(b);
    expect(withoutMember(members!, a), 'a non-member leaving changes nothing').to.equal(b);
    expect(withoutMember(members!, b)).to.equal(undefined);
    expect([...membersOf(undefined)]).to.deep.equal([]);
  });
});
