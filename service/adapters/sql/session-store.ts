import type { Kysely } from 'kysely';
import type { FoundSession, SessionRecord, SessionStore } from '../../ports/sessions.js';
import type { DB } from './schema.js';

/**
 * Dashboard sessions on SQLite and PostgreSQL alike. A lookup always reads the database (no
 * cache): a sign-out or a revoked key on any instance ends the session on the next request.
 */
export class SqlSessionStore implements SessionStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(rec: SessionRecord): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        id_hash: rec.idHash,
        key_id: rec.keyId,
        workspace_id: rec.workspaceId,
        user_id: rec.userId,
        created_at: rec.createdAt,
        last_seen_at: rec.lastSeenAt,
        expires_at: rec.expiresAt,
      })
      .execute();
  }

  async find(idHash: Buffer): Promise<FoundSession | undefined> {
    const r = await this.db
      .selectFrom('sessions')
      // An inner join: a session whose key row is gone is no session.
      .innerJoin('api_keys', 'api_keys.id', 'sessions.key_id')
      .innerJoin('workspaces', 'workspaces.id', 'sessions.workspace_id')
      .select([
        'sessions.id_hash',
        'sessions.key_id',
        'sessions.workspace_id',
        'sessions.user_id',
        'sessions.created_at',
        'sessions.last_seen_at',
        'sessions.expires_at',
        'api_keys.revoked_at',
        'workspaces.name as workspace_name',
      ])
      .where('sessions.id_hash', '=', idHash)
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      idHash: Buffer.from(r.id_hash),
      keyId: r.key_id,
      workspaceId: r.workspace_id,
      userId: r.user_id,
      createdAt: Number(r.created_at),
      lastSeenAt: Number(r.last_seen_at),
      expiresAt: Number(r.expires_at),
      workspaceName: r.workspace_name,
      keyRevoked: r.revoked_at !== null,
    };
  }

  async touch(idHash: Buffer, lastSeenAt: number): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({ last_seen_at: lastSeenAt })
      .where('id_hash', '=', idHash)
      .where('last_seen_at', '<', lastSeenAt)
      .execute();
  }

  async delete(idHash: Buffer): Promise<boolean> {
    const r = await this.db.deleteFrom('sessions').where('id_hash', '=', idHash).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  async deleteEnded(now: number, idleSince: number, limit: number): Promise<number> {
    const ended = await this.db
      .selectFrom('sessions')
      .select('id_hash')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleSince)]))
      .limit(limit)
      .execute();
    if (ended.length === 0) return 0;
    const r = await this.db
      .deleteFrom('sessions')
      .where(
        'id_hash',
        'in',
        ended.map((e) => e.id_hash),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
