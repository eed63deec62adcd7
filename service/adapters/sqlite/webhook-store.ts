import type { Selectable } from 'kysely';
import type { Statement, Transaction } from 'better-sqlite3';
import type { WebhookDelivery } from '../../webhooks/ports.js';
import type { DB, SqliteHandle } from './db.js';
import { SqlWebhookStore } from '../sql/webhook-store.js';
import { toDelivery } from '../sql/rows.js';
import { exclusive } from './write-lock.js';

type DeliveryRow = Selectable<DB['webhook_deliveries']>;
type Claim = (now: number, limit: number, leaseUntil: number, updatedAt: string) => DeliveryRow[];

/** Webhook endpoints and the delivery outbox, in the service's SQLite database (tables of 004_webhooks). */
export class SqliteWebhookStore extends SqlWebhookStore {
  private readonly claimTx: Transaction<Claim>;

  /** `clock` (default Date.now) stamps created/updated times. */
  constructor(handle: Pick<SqliteHandle, 'db' | 'raw'>, clock: () => number = Date.now) {
    super(handle.db, clock);
    // The same pick as SqlWebhookStore.due, prepared: the dispatcher polls it every second.
    const due: Statement<[number, number], { id: string }> = handle.raw.prepare(
      `select id from webhook_deliveries where state = 'pending' and next_attempt_at <= ?
       order by next_attempt_at, seq limit ?`,
    );
    const lease: Statement<[number, string, string], DeliveryRow> = handle.raw.prepare(
      'update webhook_deliveries set attempts = attempts + 1, next_attempt_at = ?, updated_at = ? where id = ' +
        '? returning *',
    );
    this.claimTx = handle.raw.transaction((now, limit, leaseUntil, updatedAt) =>
      due.all(now, limit).map((r) => lease.get(leaseUntil, updatedAt, r.id)!),
    );
  }

  /**
   * One IMMEDIATE transaction, run synchronously: the write lock is taken before the due rows
   * are read, so two dispatchers sharing the file (other connections, other processes) never
   * lease the same row, and one waits for the other (busy timeout) instead of failing with
   * "database is locked" (see ./write-lock.ts). Not one UPDATE ... RETURNING: its rows come back
   * in no set order, and the order they were due in could not be returned with them.
   */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<WebhookDelivery[]> {
    if (limit <= 0) return [];
    const rows = await exclusive(this.db, () => this.claimTx.immediate(now, limit, now + leaseMs, this.iso(now)));
    return rows.map(toDelivery);
  }
}

/**
 * The webhook store on an open SQLite handle (the one the local stack opens; the 004_webhooks
 * migration has then already run). `clock` (default Date.now) stamps created/updated times.
 */
export function openWebhookStore(
  handle: Pick<SqliteHandle, 'db' | 'raw'>,
  clock: () => number = Date.now,
): SqliteWebhookStore {
  return new SqliteWebhookStore(handle, clock);
}
