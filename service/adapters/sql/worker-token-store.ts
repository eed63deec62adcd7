import type { Kysely, Selectable } from 'kysely';
import type { WorkerTokenRecord, WorkerTokenStore } from '../../ports/worker-tokens.js';
import type { DB } from './schema.js';

/** Thrown by createWorkerToken when an active token already has the name. */
export class WorkerTokenNameTaken extends Error {
  constructor(readonly workerName: string) {
    super(
      `an active worker token named "${workerName}" exists: revoke it first (renderbridge admin ` +
        `revoke-worker-token ${workerName}) or pick another name`,
    );
    this.name = 'WorkerTokenNameTaken';
  }
}

function toRecord(r: Omit<Selectable<DB['worker_tokens']>, 'token_hash'>): WorkerTokenRecord {
  return {
    id: r.id,
    name: r.name,
    displayPrefix: r.display_prefix,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

const COLUMNS = ['id', 'name', 'display_prefix', 'created_at', 'last_used_at', 'revoked_at'] as const;

/**
 * Worker tokens on SQLite and PostgreSQL alike. Never cached: every worker API call looks its
 * token up (an indexed read), so a revoke from any process is refused at the very next call.
 */
export class SqlWorkerTokenStore implements WorkerTokenStore {
  constructor(private readonly db: Kysely<DB>) {}

  async findWorkerToken(hash: Buffer): Promise<WorkerTokenRecord | undefined> {
    const r = await this.db
      .selectFrom('worker_tokens')
      .select(COLUMNS)
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async markWorkerTokenUsed(id: string, at: string): Promise<void> {
    await this.db.updateTable('worker_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async createWorkerToken(rec: Omit<WorkerTokenRecord, 'lastUsedAt' | 'revokedAt'>, hash: Buffer): Promise<void> {
    const taken = await this.db
      .selectFrom('worker_tokens')
      .select('id')
      .where('name', '=', rec.name)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (taken) throw new WorkerTokenNameTaken(rec.name);
    try {
      await this.db
        .insertInto('worker_tokens')
        .values({
          id: rec.id,
          name: rec.name,
          token_hash: hash,
          display_prefix: rec.displayPrefix,
          created_at: rec.createdAt,
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
    } catch (err) {
      // Another process created the same name between the check and the insert: the partial unique index refused it.
      if (/unique|duplicate/i.test(String((err as Error).message))) throw new WorkerTokenNameTaken(rec.name);
      throw err;
    }
  }

  async listWorkerTokens(): Promise<WorkerTokenRecord[]> {
    return (
      await this.db.selectFrom('worker_tokens').select(COLUMNS).orderBy('created_at').orderBy('id').execute()
    ).map(toRecord);
  }

  async revokeWorkerToken(idOrName: string): Promise<WorkerTokenRecord | undefined> {
    const at = new Date().toISOString();
    for (const column of ['id', 'name'] as const) {
      const r = await this.db
        .updateTable('worker_tokens')
        .set({ revoked_at: at })
        .where(column, '=', idOrName)
        .where('revoked_at', 'is', null)
        .returning(COLUMNS)
        .executeTakeFirst();
      if (r) return toRecord(r);
    }
    return undefined;
  }
}
