import type { Kysely } from 'kysely';
import type { LeaseStore } from '../../ports/leases.js';
import type { DB } from './schema.js';

/**
 * Leases in the service's database (SQLite or PostgreSQL): instances sharing the database share
 * them. `now` (default Date.now) is the clock leases are timed by.
 */
export class SqlLeaseStore implements LeaseStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    // One statement: take a free or expired lease, or renew our own; another live holder wins.
    // Both engines run the conflict check and the update atomically on the locked row.
    const r = await this.db
      .insertInto('leases')
      .values({ name, holder, until: now + ttlMs })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, until: now + ttlMs })
          .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.until', '<', now)])),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }
}
