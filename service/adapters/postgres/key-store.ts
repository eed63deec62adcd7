import type { Kysely } from 'kysely';
import type { FoundKey } from '../../ports/keys.js';
import { SqlKeyStore } from '../sql/key-store.js';
import { toKey } from '../sql/rows.js';
import type { PgDB } from './db.js';

/**
 * Key store on PostgreSQL. Every lookup asks the database (an indexed read): there is no
 * in-process cache, so a key revoked on any instance fails on the very next request everywhere.
 */
export class PgKeyStore extends SqlKeyStore {
  constructor(db: Kysely<PgDB>) {
    super(db);
  }

  async findByHash(keyHash: Buffer): Promise<FoundKey | undefined> {
    const r = await this.keys().where('api_keys.key_hash', '=', keyHash).executeTakeFirst();
    return r && { ...toKey(r), keyHash: r.key_hash };
  }
}
