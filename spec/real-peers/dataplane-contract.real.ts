/**
 * The Data Plane API contract (spec/support-contract/dataplane-contract.ts),
 * which the emulator runs in `npm test`, against a REAL dataplaneapi of each
 * pinned release in front of the HAProxy it ships with
 * (spec/support/real-dataplaneapi.ts).
 */
import { describeDataplaneContract } from '../support-contract/dataplane-contract.ts';
import { REAL_RELEASES } from '../support/dataplane-peer.ts';
import { startRealDataplane } from '../support/real-dataplaneapi.ts';

for (const release of REAL_RELEASES) describeDataplaneContract(`the real dataplaneapi ${release}`, () => startRealDataplane({ release }));
