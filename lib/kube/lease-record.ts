/** What a coordination.k8s.io/v1 Lease says about who leads. */
export interface LeaseRecord {
  readonly holder: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: Date | undefined;
  readonly renewTime: Date | undefined;
  readonly transitions: number;
}

export type LeaseDecision =
  /** Write this record (create it when there is no lease yet): we take or keep the lease. */
  | { readonly action: 'write'; readonly record: LeaseRecord }
  /** Someone else holds a lease that has not expired. */
  | { readonly action: 'wait'; readonly holder: string };

/**
 * Tracks when this replica last saw the lease record change. Expiry is
 * measured from that local observation, as client-go does, not from the
 * holder's renewTime: the holder's clock may be skewed against ours.
 */
export class LeaseObservation {
  #record: LeaseRecord | undefined;
  #observedAt = 0;

  /** Decides what to do with the lease as read at `now` (undefined: there is none). */
  decide(current: LeaseRecord | undefined, identity: string, leaseDurationMs: number, now: number): LeaseDecision {
    if (current === undefined) return { action: 'write', record: this.#fresh(identity, leaseDurationMs, now, 0) };
    if (!this.#same(current)) {
      this.#record = current;
      this.#observedAt = now;
    }
    if (current.holder === identity) {
      return { action: 'write', record: { ...current, leaseDurationSeconds: leaseDurationMs / 1000, renewTime: new Date(now) } };
    }
    const expired = current.holder === '' || this.#observedAt + current.leaseDurationSeconds * 1000 <= now;
    if (!expired) return { action: 'wait', holder: current.holder };
    return { action: 'write', record: this.#fresh(identity, leaseDurationMs, now, current.transitions + 1) };
  }

  /** The record to write when giving the lease up: no holder, so others take it at their next try. */
  static released(current: LeaseRecord, now: number): LeaseRecord {
    return { ...current, holder: '', leaseDurationSeconds: 1, renewTime: new Date(now) };
  }

  #fresh(identity: string, leaseDurationMs: number, now: number, transitions: number): LeaseRecord {
    return {
      holder: identity,
      leaseDurationSeconds: leaseDurationMs / 1000,
      acquireTime: new Date(now),
      renewTime: new Date(now),
      transitions,
    };
  }

  #same(record: LeaseRecord): boolean {
    const seen = this.#record;
    return seen !== undefined && seen.holder === record.holder && seen.transitions === record.transitions && seen.renewTime?.getTime() === record.renewTime?.getTime();
  }
}
