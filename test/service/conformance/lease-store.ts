// One conformance suite for every LeaseStore adapter: scheduled work runs on one instance at a time.
import { describe, expect, it } from 'vitest';
import type { LeaseStore } from '../../../service/ports/leases.js';
import { withHarness } from './with-harness.js';

export interface LeaseHarness {
  /** Two handles on the same backing store: two service instances. */
  a: LeaseStore;
  b: LeaseStore;
  /** Moves the clock both handles time their leases by (a hand clock: no test waits out a lease). */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** A clock that stands still until moved, for the harnesses to give their stores. */
export function handClock(): { now: () => number; advance(ms: number): void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export function leaseStoreConformance(name: string, open: () => Promise<LeaseHarness>): void {
  describe(`LeaseStore conformance: ${name}`, () => {
    const withLeases = withHarness(open);

    it(
      'gives a lease to one instance at a time and lets its holder renew it',
      withLeases(async ({ a, b }) => {
        expect(await a.acquire('retention', 'svc-a', 60_000)).toBe(true);
        expect(await b.acquire('retention', 'svc-b', 60_000)).toBe(false);
        expect(await a.acquire('retention', 'svc-a', 60_000)).toBe(true);
        // Leases are per name.
        expect(await b.acquire('webhooks', 'svc-b', 60_000)).toBe(true);
        expect(await a.acquire('webhooks', 'svc-a', 60_000)).toBe(false);
      }),
    );

    it(
      'hands the lease over when the holder stops renewing or releases it',
      withLeases(async ({ a, b, advance }) => {
        expect(await a.acquire('sweep', 'svc-a', 100)).toBe(true);
        expect(await b.acquire('sweep', 'svc-b', 100)).toBe(false);
        advance(99);
        expect(await b.acquire('sweep', 'svc-b', 100)).toBe(false);
        advance(2);
        expect(await b.acquire('sweep', 'svc-b', 60_000)).toBe(true);
        expect(await a.acquire('sweep', 'svc-a', 60_000)).toBe(false);
        await a.release('sweep', 'svc-a');
        expect(await a.acquire('sweep', 'svc-a', 60_000)).toBe(false);
        await b.release('sweep', 'svc-b');
        expect(await a.acquire('sweep', 'svc-a', 60_000)).toBe(true);
      }),
    );
  });
}
