// The operator's fair-share weights for the SQL task queues (../sql/share-tags.ts computes the tags
// they weigh), and the re-tagging of a group's backlog when its weight changes.
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';
import { parentOf, virtualTime } from './share-tags.js';

/**
 * Sets a group's weight (positive and finite), and re-tags what it has waiting: tags were computed
 * with the old weight, so without this a backlog kept its old share until it drained. The change
 * moves the tags ahead of the virtual time by old / new (as a measured spf does, see rescale), for
 * the group and, when it is a workspace, for its `ws/user` groups that have no weight of their own.
 */
export async function setWeight(db: Kysely<DB>, group: string, weight: number): Promise<void> {
  if (!(weight > 0) || !Number.isFinite(weight))
    throw new Error(`a share weight must be a positive number (got ${weight} for ${JSON.stringify(group)})`);
  await db.transaction().execute(async (trx) => {
    const parent = parentOf(group);
    const before = await trx
      .selectFrom('share_weights')
      .select(['grp', 'weight'])
      .where('grp', 'in', parent ? [group, parent] : [group])
      .execute();
    const old = new Map(before.map((r) => [r.grp, Number(r.weight)]));
    await trx
      .insertInto('share_weights')
      .values({ grp: group, weight })
      .onConflict((oc) => oc.column('grp').doUpdateSet({ weight }))
      .execute();
    // What the group's tags were computed with: its own weight, else its workspace's (default 1).
    const ratio = (old.get(group) ?? (parent ? old.get(parent) : undefined) ?? 1) / weight;
    if (ratio === 1) return;
    const groups = [group];
    if (!parent) {
      const subs = await trx
        .selectFrom('share_groups')
        .select('grp')
        .where(sql<string>`substr(grp, 1, ${group.length + 1})`, '=', `${group}/`)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('share_weights')
                .select('share_weights.grp')
                .whereRef('share_weights.grp', '=', 'share_groups.grp'),
            ),
          ),
        )
        .execute();
      groups.push(...subs.map((r) => r.grp));
    }
    await retagGroups(trx, groups, ratio);
  });
}

/** Moves the groups' queued tags, and last tags, ahead of each kind's virtual time by `ratio`. */
async function retagGroups(trx: Kysely<DB>, groups: string[], ratio: number): Promise<void> {
  const kinds = await trx
    .selectFrom('tasks')
    .select('kind')
    .distinct()
    .where('share_group', 'in', groups)
    .where('state', 'in', ['queued', 'paused'])
    .execute();
  let least: number | undefined;
  for (const { kind } of kinds) {
    const v = await virtualTime(trx, kind);
    least = Math.min(least ?? v, v);
    await trx
      .updateTable('tasks')
      .set({ tag: sql<number>`${v} + (tag - ${v}) * ${ratio}` })
      .where('share_group', 'in', groups)
      .where('kind', '=', kind)
      .where('state', 'in', ['queued', 'paused'])
      .where('tag', '>', v)
      .execute();
  }
  const v = least ?? (await virtualTime(trx, 'render-chunk'));
  await trx
    .updateTable('share_groups')
    .set({
      last_tag: sql<number>`case when last_tag > ${v} then ${v} + (last_tag - ${v}) * ${ratio} else last_tag end`,
    })
    .where('grp', 'in', groups)
    .execute();
}

export async function weights(db: Kysely<DB>): Promise<Record<string, number>> {
  const rows = await db.selectFrom('share_weights').select(['grp', 'weight']).orderBy('grp').execute();
  return Object.fromEntries(rows.map((r) => [r.grp, Number(r.weight)]));
}
