import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { LeaseObservation, type LeaseRecord } from './lease-record.ts';

export interface LeaseLockOptions {
  readonly namespace: string;
  readonly name: string;
  /** This replica's identity (its pod name). */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly now?: () => number;
}

function recordOf(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holder: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime === undefined ? undefined : new Date(spec.acquireTime),
    renewTime: spec.renewTime === undefined ? undefined : new Date(spec.renewTime),
    transitions: spec.leaseTransitions ?? 0,
  };
}

function specOf(record: LeaseRecord): V1Lease['spec'] {
  return {
    holderIdentity: record.holder,
    // The API takes whole seconds.
    leaseDurationSeconds: Math.max(1, Math.round(record.leaseDurationSeconds)),
    // MicroTime: the API server takes exactly six fractional digits, which a Date would not give.
    acquireTime: record.acquireTime && new V1MicroTime(record.acquireTime.getTime()),
    renewTime: record.renewTime && new V1MicroTime(record.renewTime.getTime()),
    leaseTransitions: record.transitions,
  };
}

function conflict(error: unknown): boolean {
  return error instanceof ApiException && (error.code === 409 || error.code === 404);
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease with optimistic
 * concurrency: every write carries the resourceVersion read, so of two
 * replicas racing for an expired lease exactly one wins (the other gets a
 * 409 and stays a follower).
 */
export class LeaseLock {
  readonly #api: CoordinationV1Api;
  readonly #options: LeaseLockOptions;
  readonly #observation = new LeaseObservation();
  #held: V1Lease | undefined;

  constructor(kubeConfig: KubeConfig, options: LeaseLockOptions) {
    this.#api = kubeConfig.makeApiClient(CoordinationV1Api);
    this.#options = options;
  }

  /** True when this replica holds the lease after the attempt; lost races are false, other errors throw. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationMs } = this.#options;
    const now = (this.#options.now ?? Date.now)();
    let current: V1Lease | undefined;
    try {
      current = await this.#api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    }
    const decision = this.#observation.decide(current === undefined ? undefined : recordOf(current), identity, leaseDurationMs, now);
    if (decision.action === 'wait') {
      this.#held = undefined;
      return false;
    }
    try {
      this.#held =
        current === undefined
          ? await this.#api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: specOf(decision.record) } })
          : await this.#api.replaceNamespacedLease({ name, namespace, body: { ...current, spec: specOf(decision.record) } });
      return true;
    } catch (error) {
      this.#held = undefined;
      if (conflict(error)) return false;
      throw error;
    }
  }

  /** Gives the lease up if this replica holds it, so another takes over at its next try instead of after expiry. */
  async release(): Promise<void> {
    const held = this.#held;
    this.#held = undefined;
    if (held === undefined) return;
    const { namespace, name } = this.#options;
    const record = LeaseObservation.released(recordOf(held), (this.#options.now ?? Date.now)());
    try {
      await this.#api.replaceNamespacedLease({ name, namespace, body: { ...held, spec: specOf(record) } });
    } catch (error) {
      // Someone else wrote it since our last renewal: it is not ours to release.
      if (!conflict(error)) throw error;
    }
  }
}
