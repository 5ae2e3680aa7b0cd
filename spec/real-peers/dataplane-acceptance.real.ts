/**
 * The controller's acceptance cases (spec/e2e/dataplane-acceptance-cases.ts),
 * which the emulator runs in `npm test`, against a REAL dataplaneapi of each
 * pinned release standing for a pod (its own mount namespace with
 * /etc/haproxy and /var/run/haproxy, spec/support/real-dataplaneapi.ts).
 */
import { describeAcceptance } from '../e2e/dataplane-acceptance-cases.ts';
import { REAL_RELEASES, realPeer } from '../support/dataplane-peer.ts';

for (const release of REAL_RELEASES) describeAcceptance(realPeer(release));
