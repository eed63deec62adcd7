import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKeyRecord, FoundKey, KeyStore } from '../../ports/keys.js';
import { toKey } from './rows.js';
import type { DB } from './schema.js';

/** The KeyStore queries shared by the SQLite and PostgreSQL adapters; each engine adds its own lookup by hash. */
export abstract class SqlKeyStore implements KeyStore {
  constructor(protected readonly db: Kysely<DB>) {}

  abstract findByHash(keyHash: Buffer): FoundKey | undefined | Promise<FoundKey | undefined>;

  async ensureWorkspace(name: string): Promise<{ id: string; name: string }> {
    await this.db
      .insertInto('workspaces')
      .values({ id: randomUUID(), name, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return this.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', name).executeTakeFirstOrThrow();
  }

  async ensureUser(workspaceId: string, name: string): Promise<string> {
    await this.db
      .insertInto('users')
      .values({ id: randomUUID(), workspace_id: workspaceId, name, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
      .execute();
    const u = await this.db
      .selectFrom('users')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return u.id;
  }

  async createKey(rec: Omit<ApiKeyRecord, 'workspaceName' | 'revokedAt'>, keyHash: Buffer): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: rec.id,
        workspace_id: rec.workspaceId,
        user_id: rec.userId,
        label: rec.label,
        key_hash: keyHash,
        display_prefix: rec.displayPrefix,
        created_at: rec.createdAt,
        revoked_at: null,
      })
      .execute();
  }

  /** Keys joined with their workspace's name, as toKey reads them. */
  protected keys() {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
      .select([
        'api_keys.id',
        'api_keys.workspace_id',
        'workspaces.name as workspace_name',
        'api_keys.user_id',
        'api_keys.label',
        'api_keys.display_prefix',
        'api_keys.created_at',
        'api_keys.revoked_at',
        'api_keys.key_hash',
      ]);
  }

  async listKeys(workspaceName?: string): Promise<ApiKeyRecord[]> {
    let q = this.keys().orderBy('api_keys.created_at');
    if (workspaceName) q = q.where('workspaces.name', '=', workspaceName);
    return (await q.execute()).map(toKey);
  }

  async revokeKey(id: string): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }
}
