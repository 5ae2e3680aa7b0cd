/**
 * The controller (local mode with --dataplane-url, the shipped
 * configuration) against the emulated Data Plane API standing for a pod:
 * the acceptance cases of dataplane-acceptance-cases.ts, which a real
 * dataplaneapi runs too (spec/real-peers/dataplane-acceptance.real.ts).
 */
import { emulatorPeer } from '../support/dataplane-peer.ts';
import { describeAcceptance } from './dataplane-acceptance-cases.ts';

describeAcceptance(emulatorPeer());
