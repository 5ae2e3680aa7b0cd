/**
 * HTTPRoutes through the emulated Data Plane API standing for a pod: the
 * cases of gateway-api-dataplane-cases.ts, which a real dataplaneapi runs too
 * (spec/real-peers/dataplane-gateway-api.real.ts).
 */
import { emulatorPeer } from '../support/dataplane-peer.ts';
import { describeHttpRoutes } from './gateway-api-dataplane-cases.ts';

describeHttpRoutes(emulatorPeer());
