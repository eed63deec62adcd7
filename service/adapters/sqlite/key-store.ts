import type { FoundKey } from '../../ports/keys.js';
import type { Statement } from 'better-sqlite3';
import type { CommitWatch } from './commit-watch.js';
import type { SqliteHandle } from './db.js';
import { SqlKeyStore } from '../sql/key-store.js';
import { toKey, type KeyRow } from '../sql/rows.js';

/** Most keys a process remembers; past it the cache starts over (keys are few; this bounds memory). */
const CACHE_LIMIT = 10_000;

export class SqliteKeyStore extends SqlKeyStore {
  private readonly byHash: Statement<[Buffer], KeyRow & { key_hash: Buffer }>;
  private readonly commits: CommitWatch;
  /**
   * Keys found, by hash: auth runs on every request and the lookup was a fifth of its cost.
   * Another connection's commits (the admin CLI revoking a key, another service process) clear
   * it, seen within a millisecond (see CommitWatch).
   * Misses are not cached: random keys must not grow memory.
   */
  private readonly cache = new Map<string, FoundKey>();
  private seenVersion = -1;

  constructor(handle: SqliteHandle) {
    super(handle.db);
    this.commits = handle.commits;
    this.byHash = handle.raw.prepare(
      `select k.id, k.workspace_id, w.name as workspace_name, k.user_id, k.label, k.display_prefix, k.created_at, \
k.revoked_at, k.key_hash
       from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = ?`,
    );
  }

  findByHash(keyHash: Buffer): FoundKey | undefined {
    const version = this.commits.version();
    if (version !== this.seenVersion) {
      this.cache.clear();
      this.seenVersion = version;
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const id = keyHash.toString('base64');
    const hit = this.cache.get(id);
    if (hit) return hit;
    const r = this.byHash.get(keyHash);
    if (!r) return undefined;
    const found = { ...toKey(r), keyHash: r.key_hash };
    this.cache.set(id, found);
    return found;
  }

  override async revokeKey(id: string): Promise<boolean> {
    const revoked = await super.revokeKey(id);
    // This connection's own writes do not move data_version.
    this.cache.clear();
    return revoked;
  }
}
