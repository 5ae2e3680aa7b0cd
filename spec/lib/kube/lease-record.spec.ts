import { expect } from 'chai';
import { LeaseObservation, type LeaseRecord } from '../../../lib/kube/lease-record.ts';

const duration = 15_000;

function held(holder: string, renewedAt: number, transitions = 0): LeaseRecord {
  return { holder, leaseDurationSeconds: 15, acquireTime: new Date(0), renewTime: new Date(renewedAt), transitions };
}

describe('LeaseObservation', () => {
  it('takes a lease nobody has created yet', () => {
    const decision = new LeaseObservation().decide(undefined, 'a', duration, 1_000);
    expect(decision).to.deep.equal({
      action: 'write',
      record: { holder: 'a', leaseDurationSeconds: 15, acquireTime: new Date(1_000), renewTime: new Date(1_000), transitions: 0 },
    });
  });

  it('renews its own lease, keeping the acquire time and transitions', () => {
    const decision = new LeaseObservation().decide(held('a', 0, 3), 'a', duration, 5_000);
    expect(decision).to.deep.equal({ action: 'write', record: { ...held('a', 5_000, 3), acquireTime: new Date(0) } });
  });

  it("waits while another holder's lease has not expired since this replica first saw it", () => {
    const observation = new LeaseObservation();
    // Seen at 100 s: the holder's own renewTime (0) is ignored, as clocks may be skewed.
    expect(observation.decide(held('b', 0), 'a', duration, 100_000)).to.deep.equal({ action: 'wait', holder: 'b' });
    expect(observation.decide(held('b', 0), 'a', duration, 114_999)).to.deep.equal({ action: 'wait', holder: 'b' });
  });

  it('takes over a lease whose record has not changed for the lease duration, counting a transition', () => {
    const observation = new LeaseObservation();
    observation.decide(held('b', 0, 2), 'a', duration, 100_000);
    const decision = observation.decide(held('b', 0, 2), 'a', duration, 115_000);
    expect(decision).to.deep.equal({
      action: 'write',
      record: { holder: 'a', leaseDurationSeconds: 15, acquireTime: new Date(115_000), renewTime: new Date(115_000), transitions: 3 },
    });
  });

  it('restarts the expiry clock whenever the holder renews', () => {
    const observation = new LeaseObservation();
    observation.decide(held('b', 0), 'a', duration, 100_000);
    // Renewed at 110 s: expiry now counts from when this replica saw the renewal.
    observation.decide(held('b', 10_000), 'a', duration, 110_000);
    expect(observation.decide(held('b', 10_000), 'a', duration, 120_000)).to.deep.equal({ action: 'wait', holder: 'b' });
    expect(observation.decide(held('b', 10_000), 'a', duration, 125_000).action).to.equal('write');
  });

  it('takes a released lease (no holder) at once', () => {
    const released = LeaseObservation.released(held('b', 0, 4), 50_000);
    expect(released.holder).to.equal('');
    const decision = new LeaseObservation().decide(released, 'a', duration, 50_001);
    expect(decision).to.deep.include({ action: 'write' });
    expect(decision.action === 'write' && decision.record).to.deep.include({ holder: 'a', transitions: 5 });
  });
});
