/**
 * Route policies through the emulated Data Plane API standing for a pod: the
 * cases of route-settings-dataplane-cases.ts, which a real dataplaneapi runs too
 * (spec/real-peers/dataplane-route-settings.real.ts).
 */
import { emulatorPeer } from '../support/dataplane-peer.ts';
import { describeRoutePolicies } from './route-settings-dataplane-cases.ts';

describeRoutePolicies(emulatorPeer());
