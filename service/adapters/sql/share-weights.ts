// The operator's fair-share weights for the SQL task queues (./share-tags.ts computes the tags they
// weigh).
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/** Sets a group's weight (positive and finite). */
export async function setWeight(db: Kysely<DB>, group: string, weight: number): Promise<void> {
  if (!(weight > 0) || !Number.isFinite(weight))
    throw new Error(`a share weight must be a positive number (got ${weight} for ${JSON.stringify(group)})`);
  await db
    .insertInto('share_weights')
    .values({ grp: group, weight })
    .onConflict((oc) => oc.column('grp').doUpdateSet({ weight }))
    .execute();
}

export async function weights(db: Kysely<DB>): Promise<Record<string, number>> {
  const rows = await db.selectFrom('share_weights').select(['grp', 'weight']).orderBy('grp').execute();
  return Object.fromEntries(rows.map((r) => [r.grp, Number(r.weight)]));
}
