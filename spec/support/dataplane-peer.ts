/**
 * What the specs that run against a Data Plane API use of one, whether the
 * emulator (spec/support/dataplane-emulator) or a real dataplaneapi
 * (spec/support/real-dataplaneapi.ts): the same cases run on both, the
 * emulator's in `npm test`, the real one's in `npm run spec:real-dataplaneapi`.
 */
import type { ShowProc } from '../../lib/haproxy/show-proc.ts';
import { startEmulator } from './dataplane-emulator/index.ts';
import type { Credentials, EmulatorOptions, PodLayout } from './dataplane-emulator/index.ts';
import type { RequestLog } from './dataplane-emulator/faults.ts';
import type { ReleaseFeatures } from './dataplane-emulator/release.ts';
import { startRealDataplane } from './real-dataplaneapi.ts';
import type { RealRelease } from './real-dataplaneapi.ts';

export interface DataplanePeer {
  /** Base URL of the API: 'http://127.0.0.1:PORT/v3'. */
  readonly url: string;
  readonly credentials: Credentials;
  /**
   * The release the peer is, and what it does that others do not, as the
   * emulator's release table records each real one (dataplane-emulator/release.ts).
   */
  readonly release: PeerRelease;
  /** The configuration's base directory as this process reaches it (maps/, ssl/, general/ below it). */
  readonly baseDir: string;
  readonly mapsDir: string;
  /** The worker's stats socket as this process reaches it; a configuration without a pod declares this path. */
  readonly statsSocket: string;
  /** Where the instance's listeners are reached. */
  readonly podAddress: string;
  readonly pod: PodLayout | undefined;
  /** Every request the API received, in order. */
  readonly requests: RequestLog;
  /** `show proc` on HAProxy's master CLI: reload and failed-reload counters. */
  processInfo(): Promise<ShowProc>;
  stop(): Promise<void>;
}

/** What the cases read of a peer's release. */
export type PeerRelease = Pick<ReleaseFeatures, 'release' | 'runtimeCertificates' | 'chiWire'>;

/** How a spec gets a peer: started fresh, standing for `pod` when given. */
export interface PeerKind {
  /** For test titles: `the emulator (paired with HAProxy)`, `the emulator (3.1)`, `dataplaneapi 3.4`. */
  readonly name: string;
  start(pod?: PodLayout): Promise<DataplanePeer>;
}

/** The emulator with `options` (by default the release paired with the HAProxy in use), standing for `pod` when given. */
export function emulatorPeer(options: EmulatorOptions = {}): PeerKind {
  return {
    name: `the emulator (${options.release ?? 'paired with HAProxy'})`,
    start: (pod) => startEmulator(pod === undefined ? options : { ...options, pod }),
  };
}

/** A real dataplaneapi of `release` in front of the HAProxy minor it ships with (spec/support/real-dataplaneapi.ts). */
export function realPeer(release: RealRelease): PeerKind {
  return {
    name: `dataplaneapi ${release}`,
    start: (pod) => startRealDataplane(pod === undefined ? { release } : { release, pod }),
  };
}

/** The releases the real-peer specs run against: every one .ci/dataplaneapi-versions pins. */
export const REAL_RELEASES: readonly RealRelease[] = ['3.2', '3.4'];
