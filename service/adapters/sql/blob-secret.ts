import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

const NAME = 'blob-url-signing';

/**
 * The secret blob part URLs are signed with, kept in the state database: every service instance
 * sharing the database signs and checks with the same one (a part URL from one instance works on
 * another behind a load balancer), and it survives restarts. Made once by whichever instance
 * asks first; the others read that one.
 */
export async function blobUrlSecret(db: Kysely<DB>): Promise<Buffer> {
  await db
    .insertInto('service_secrets')
    .values({ name: NAME, value: randomBytes(32).toString('hex') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', NAME).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}
