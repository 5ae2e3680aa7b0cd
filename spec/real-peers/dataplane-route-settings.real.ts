/**
 * Route policies through the Data Plane API (spec/e2e/route-settings-dataplane-cases.ts), which the emulator runs in `npm test`,
 * against a REAL dataplaneapi of each pinned release standing for a pod
 * (spec/support/real-dataplaneapi.ts).
 */
import { describeRoutePolicies } from '../e2e/route-settings-dataplane-cases.ts';
import { REAL_RELEASES, realPeer } from '../support/dataplane-peer.ts';

for (const release of REAL_RELEASES) describeRoutePolicies(realPeer(release));
