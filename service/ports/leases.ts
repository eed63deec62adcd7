// Named leases for scheduled work that must run once across service instances.

/**
 * Named leases for scheduled work that must run once across service instances (webhook
 * retries, retention sweeps): only the holder of a live lease does the work.
 */
export interface LeaseStore {
  /** Takes `name` for `holder`, or renews it, until now + ttlMs; false while another holder's lease is live. */
  acquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up early (clean shutdown) so another instance takes over at once. */
  release(name: string, holder: string): Promise<void>;
}
