import type { V1Lease } from '@kubernetes/client-node';
import type { KubeConnection } from './kube-connection.ts';
import { KubeRequestError, kubeRequest } from './kube-request.ts';
import { microTime } from './micro-time.ts';
import { collectionPath, objectPath } from './resource-path.ts';
import { LeaseObservation, type LeaseRecord } from './lease-record.ts';

export interface LeaseLockOptions {
  readonly namespace: string;
  readonly name: string;
  /** This replica's identity (its pod name). */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly now?: () => number;
}

const LEASES = 'coordination.k8s.io/v1';

function recordOf(lease: Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holder: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime === undefined ? undefined : new Date(spec.acquireTime),
    renewTime: spec.renewTime === undefined ? undefined : new Date(spec.renewTime),
    transitions: spec.leaseTransitions ?? 0,
  };
}

/** A Lease as the API sends and takes it: raw JSON, times as strings. */
interface Lease {
  readonly metadata?: V1Lease['metadata'];
  readonly spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

function specOf(record: LeaseRecord): Lease['spec'] {
  return {
    holderIdentity: record.holder,
    // The API takes whole seconds.
    leaseDurationSeconds: Math.max(1, Math.round(record.leaseDurationSeconds)),
    // MicroTime: the API server takes exactly six fractional digits, which a Date would not give.
    acquireTime: record.acquireTime && microTime(record.acquireTime.getTime()),
    renewTime: record.renewTime && microTime(record.renewTime.getTime()),
    leaseTransitions: record.transitions,
  };
}

function conflict(error: unknown): boolean {
  return error instanceof KubeRequestError && (error.status === 409 || error.status === 404);
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease with optimistic
 * concurrency: every write carries the resourceVersion read, so of two
 * replicas racing for an expired lease exactly one wins (the other gets a
 * 409 and stays a follower).
 */
export class LeaseLock {
  readonly #kubeConnection: KubeConnection;
  readonly #options: LeaseLockOptions;
  readonly #observation = new LeaseObservation();
  #held: Lease | undefined;

  constructor(kubeConnection: KubeConnection, options: LeaseLockOptions) {
    this.#kubeConnection = kubeConnection;
    this.#options = options;
  }

  /** True when this replica holds the lease after the attempt; lost races are false, other errors throw. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationMs } = this.#options;
    const now = (this.#options.now ?? Date.now)();
    let current: Lease | undefined;
    try {
      current = (await kubeRequest(this.#kubeConnection, { method: 'GET', path: objectPath(LEASES, 'leases', namespace, name) })) as Lease;
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 404)) throw error;
    }
    const decision = this.#observation.decide(current === undefined ? undefined : recordOf(current), identity, leaseDurationMs, now);
    if (decision.action === 'wait') {
      this.#held = undefined;
      return false;
    }
    try {
      this.#held = (
        current === undefined
          ? await kubeRequest(this.#kubeConnection, {
              method: 'POST',
              path: collectionPath(LEASES, 'leases', namespace),
              body: { apiVersion: LEASES, kind: 'Lease', metadata: { name, namespace }, spec: specOf(decision.record) },
            })
          : await this.#replace({ ...current, spec: specOf(decision.record) })
      ) as Lease;
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
    const record = LeaseObservation.released(recordOf(held), (this.#options.now ?? Date.now)());
    try {
      await this.#replace({ ...held, spec: specOf(record) });
    } catch (error) {
      // Someone else wrote it since our last renewal: it is not ours to release.
      if (!conflict(error)) throw error;
    }
  }

  /** A write that carries the resourceVersion read: a 409 if someone wrote since. */
  #replace(lease: Lease): Promise<unknown> {
    const { namespace, name } = this.#options;
    return kubeRequest(this.#kubeConnection, { method: 'PUT', path: objectPath(LEASES, 'leases', namespace, name), body: { apiVersion: LEASES, kind: 'Lease', ...lease } });
  }
}
