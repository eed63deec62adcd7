import { SqlLeaseStore } from '../sql/lease-store.js';

/**
 * Leases in PostgreSQL, shared by every instance on the database. `acquire` is one
 * INSERT ... ON CONFLICT DO UPDATE ... WHERE: PostgreSQL takes or renews the lease on the locked
 * row, so of two instances racing for a free lease exactly one gets it.
 */
export class PgLeaseStore extends SqlLeaseStore {}
