/**
 * The deploy target contract and the cases of an API in front of HAProxy
 * (spec/lib/deploy/dataplane-world.ts), which the emulator runs in
 * `npm test`, against a REAL dataplaneapi of each pinned release in front of
 * the HAProxy it ships with (spec/support/real-dataplaneapi.ts). Run by
 * `npm run spec:real-dataplaneapi`; fails, never skips, when a binary cannot
 * be built.
 */
import { describeDataplaneApiCases, dataplaneWorld } from '../lib/deploy/dataplane-world.ts';
import { describeTargetContract } from '../lib/deploy/target-contract.ts';
import { REAL_RELEASES, realPeer } from '../support/dataplane-peer.ts';

for (const release of REAL_RELEASES) {
  const peer = realPeer(release);
  describeTargetContract(`a HAProxy behind the real ${peer.name}`, async () => dataplaneWorld(await peer.start()));
  describeDataplaneApiCases(`the real ${peer.name}`, () => peer.start());
}
