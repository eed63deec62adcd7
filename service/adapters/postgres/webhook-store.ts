import type { WebhookDelivery } from '../../webhooks/ports.js';
import { SqlWebhookStore } from '../sql/webhook-store.js';
import { toDelivery } from '../sql/rows.js';

/**
 * Webhook endpoints and the delivery outbox in PostgreSQL (queries shared with SQLite in
 * ../sql/webhook-store.ts except the claim). `clock` (default Date.now) stamps created/updated times.
 */
export class PgWebhookStore extends SqlWebhookStore {
  /**
   * One statement: lock the due rows with FOR UPDATE SKIP LOCKED and lease them. A delivery
   * another instance is leasing at that moment is skipped, so each goes to one dispatcher.
   */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<WebhookDelivery[]> {
    if (limit <= 0) return [];
    const rows = await this.db
      .updateTable('webhook_deliveries as d')
      .from(
        this.due(this.db, now, limit)
          .select(['id', 'next_attempt_at as due', 'seq as due_seq'])
          .forUpdate()
          .skipLocked()
          .as('c'),
      )
      .set((eb) => ({ attempts: eb('d.attempts', '+', 1), next_attempt_at: now + leaseMs, updated_at: this.iso(now) }))
      .whereRef('d.id', '=', 'c.id')
      .returningAll('d')
      .returning(['c.due', 'c.due_seq'])
      .execute();
    // RETURNING comes in no particular order: the longest due first, as claimDue promises.
    rows.sort((a, b) => (a.due ?? 0) - (b.due ?? 0) || a.due_seq - b.due_seq);
    return rows.map(toDelivery);
  }
}
