import { SqlLeaseStore } from '../sql/lease-store.js';

/** Leases in the service's SQLite database (instances sharing one data folder share them). */
export class SqliteLeaseStore extends SqlLeaseStore {}
