/**
 * HTTPRoutes through the Data Plane API (spec/e2e/gateway-api-dataplane-cases.ts), which the emulator runs in `npm test`,
 * against a REAL dataplaneapi of each pinned release standing for a pod
 * (spec/support/real-dataplaneapi.ts).
 */
import { describeHttpRoutes } from '../e2e/gateway-api-dataplane-cases.ts';
import { REAL_RELEASES, realPeer } from '../support/dataplane-peer.ts';

for (const release of REAL_RELEASES) describeHttpRoutes(realPeer(release));
