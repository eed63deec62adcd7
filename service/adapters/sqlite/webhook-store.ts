import type { Kysely, Selectable } from 'kysely';
import type { DeliveryState, WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookStore } from '../../webhooks/ports.js';
import type { DB, SqliteHandle } from './db.js';

type DeliveryRow = Selectable<DB['webhook_deliveries']>;

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    jobId: r.job_id,
    event: JSON.parse(r.payload) as WebhookEvent,
    state: r.state as DeliveryState,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastStatus: r.last_status,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
  };
}

/** Webhook endpoints and the delivery outbox, in the service's SQLite database (tables of 004_webhooks). */
export class SqliteWebhookStore implements WebhookStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: () => number = Date.now,
  ) {}

  private iso(ms = this.clock()): string {
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
      .values({ workspace_id: workspaceId, url: endpoint.url, secret: endpoint.secret, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ url: endpoint.url, secret: endpoint.secret, updated_at: now }))
      .execute();
  }

  async getWebhook(workspaceId: string): Promise<WebhookEndpoint | undefined> {
    const r = await this.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    return r && { workspaceId: r.workspace_id, url: r.url, secret: r.secret, createdAt: r.created_at, updatedAt: r.updated_at };
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

  async claimDue(now: number, limit: number, leaseMs: number): Promise<WebhookDelivery[]> {
    if (limit <= 0) return [];
    // One write transaction: two dispatchers on the same database never lease the same row.
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .orderBy('seq')
        .limit(limit)
        .execute();
      const claimed: WebhookDelivery[] = [];
      for (const row of rows) {
        const attempts = row.attempts + 1;
        await trx
          .updateTable('webhook_deliveries')
          .set({ attempts, next_attempt_at: now + leaseMs, updated_at: this.iso(now) })
          .where('id', '=', row.id)
          .execute();
        claimed.push(toDelivery({ ...row, attempts, next_attempt_at: now + leaseMs }));
      }
      return claimed;
    });
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

  async markFailed(id: string, attempt: number, result: { status: number | null; error: string; nextAttemptAt: number | null }): Promise<void> {
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
    const rows = await this.db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
    return rows.map(toDelivery);
  }
}

/**
 * The webhook store on an open SQLite handle (the one the local stack opens; the 004_webhooks
 * migration has then already run). `clock` (default Date.now) stamps created/updated times.
 */
export function openWebhookStore(handle: Pick<SqliteHandle, 'db'>, clock: () => number = Date.now): SqliteWebhookStore {
  return new SqliteWebhookStore(handle.db, clock);
}
