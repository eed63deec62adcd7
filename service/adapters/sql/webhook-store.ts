import type { Kysely } from 'kysely';
import type { WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookStore } from '../../webhooks/ports.js';
import type { DB } from './schema.js';
import { toDelivery } from './rows.js';

/**
 * Webhook endpoints and the delivery outbox: the queries shared by the SQLite and PostgreSQL
 * adapters. Each engine adds `claimDue`, which must lease each delivery to one dispatcher only.
 */
export abstract class SqlWebhookStore implements WebhookStore {
  constructor(
    protected readonly db: Kysely<DB>,
    protected readonly clock: () => number = Date.now,
  ) {}

  abstract claimDue(now: number, limit: number, leaseMs: number): Promise<WebhookDelivery[]>;

  /** Pending deliveries due at `now`, the longest due first (creation order breaks ties). */
  protected due(db: Kysely<DB>, now: number, limit: number) {
    return db
      .selectFrom('webhook_deliveries')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('seq')
      .limit(limit);
  }

  protected iso(ms = this.clock()): string {
    return new Date(ms).toISOString();
  }

  /** Workspace id of a workspace name, for admin commands that take names. */
  async workspaceId(name: string): Promise<string | undefined> {
    const r = await this.db.selectFrom('workspaces').select('id').where('name', '=', name).executeTakeFirst();
    return r?.id;
  }

  async setWebhook(workspaceId: string, endpoint: { url: string; secret: string }): Promise<void> {
    const now = this.iso();
    await this.db
      .insertInto('webhooks')
      .values({
        workspace_id: workspaceId,
        url: endpoint.url,
        secret: endpoint.secret,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('workspace_id').doUpdateSet({ url: endpoint.url, secret: endpoint.secret, updated_at: now }),
      )
      .execute();
  }

  async getWebhook(workspaceId: string): Promise<WebhookEndpoint | undefined> {
    const r = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return (
      r && {
        workspaceId: r.workspace_id,
        url: r.url,
        secret: r.secret,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }
    );
  }

  async removeWebhook(workspaceId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('webhooks').where('workspace_id', '=', workspaceId).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  async enqueue(event: WebhookEvent, dueAt: number): Promise<boolean> {
    const now = this.iso();
    const r = await this.db
      .insertInto('webhook_deliveries')
      .values({
        id: event.id,
        workspace_id: event.workspaceId,
        job_id: event.jobId,
        event: event.event,
        payload: JSON.stringify(event),
        state: 'pending',
        attempts: 0,
        next_attempt_at: dueAt,
        last_status: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        delivered_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }

  async markDelivered(id: string, attempt: number, result: { status: number; at: number }): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        state: 'delivered',
        next_attempt_at: null,
        last_status: result.status,
        last_error: null,
        delivered_at: this.iso(result.at),
        updated_at: this.iso(),
      })
      .where('id', '=', id)
      .where('attempts', '=', attempt)
      .where('state', '=', 'pending')
      .execute();
  }

  async markFailed(
    id: string,
    attempt: number,
    result: { status: number | null; error: string; nextAttemptAt: number | null },
  ): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        state: result.nextAttemptAt === null ? 'failed' : 'pending',
        next_attempt_at: result.nextAttemptAt,
        last_status: result.status,
        last_error: result.error.slice(0, 1000),
        updated_at: this.iso(),
      })
      .where('id', '=', id)
      .where('attempts', '=', attempt)
      .where('state', '=', 'pending')
      .execute();
  }

  async getDelivery(id: string): Promise<WebhookDelivery | undefined> {
    const r = await this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toDelivery(r);
  }

  async listForJob(jobId: string): Promise<WebhookDelivery[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('seq')
      .execute();
    return rows.map(toDelivery);
  }
}
