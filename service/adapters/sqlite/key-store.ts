import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKeyRecord, KeyStore } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { DB, SqliteHandle } from './db.js';

type FoundKey = ApiKeyRecord & { keyHash: Buffer };

/** Most keys a process remembers; past it the cache starts over (keys are few; this bounds memory). */
const CACHE_LIMIT = 10_000;

export class SqliteKeyStore implements KeyStore {
  private readonly db: Kysely<DB>;
  private readonly byHash: Statement<[Buffer], KeyRow & { key_hash: Buffer }>;
  private readonly dataVersion: Statement<[], number>;
  /**
   * Keys found, by hash: auth runs on every request and the lookup was a fifth of its cost.
   * `PRAGMA data_version` changes whenever another connection (the admin CLI revoking a key,
   * another service process) commits, so a revocation still takes effect on the next request.
   * Misses are not cached: random keys must not grow memory.
   */
  private readonly cache = new Map<string, FoundKey>();
  private seenVersion = -1;

  constructor(handle: SqliteHandle) {
    this.db = handle.db;
    this.dataVersion = handle.raw.prepare('pragma data_version').pluck() as Statement<[], number>;
    this.byHash = handle.raw.prepare(
      `select k.id, k.workspace_id, w.name as workspace_name, k.user_id, k.label, k.display_prefix, k.created_at, k.revoked_at, k.key_hash
       from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = ?`,
    );
  }

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

  private base() {
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

  findByHash(keyHash: Buffer): FoundKey | undefined {
    const version = this.dataVersion.get()!;
    if (version !== this.seenVersion || this.cache.size >= CACHE_LIMIT) {
      this.cache.clear();
      this.seenVersion = version;
    }
    const id = keyHash.toString('base64');
    const hit = this.cache.get(id);
    if (hit) return hit;
    const r = this.byHash.get(keyHash);
    if (!r) return undefined;
    const found = { ...toKey(r), keyHash: r.key_hash };
    this.cache.set(id, found);
    return found;
  }

  async listKeys(workspaceName?: string): Promise<ApiKeyRecord[]> {
    let q = this.base().orderBy('api_keys.created_at');
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
    // This connection's own writes do not move data_version.
    this.cache.clear();
    return r.numUpdatedRows > 0n;
  }
}

interface KeyRow {
  id: string;
  workspace_id: string;
  workspace_name: string;
  user_id: string;
  label: string;
  display_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

function toKey(r: KeyRow): ApiKeyRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    workspaceName: r.workspace_name,
    userId: r.user_id,
    label: r.label,
    displayPrefix: r.display_prefix,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}
