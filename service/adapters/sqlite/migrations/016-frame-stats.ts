// 016_frame_stats: Per-frame statistics (frame-stats extension): one row per job, frame and task attempt.
import { type Kysely, type Migration } from 'kysely';

export const m016FrameStats: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('frame_stats')
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('frame', 'integer', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('render_seconds', 'real', (c) => c.notNull())
      .addColumn('peak_memory_bytes', 'integer')
      .addColumn('device', 'text', (c) => c.notNull())
      .addColumn('slot', 'text', (c) => c.notNull())
      .addColumn('blender_version', 'text')
      .addColumn('finished_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('frame_stats_pk', ['job_id', 'frame', 'attempt'])
      .execute();
    // The ETA reads a job's latest frames to finish on every progress poll.
    await db.schema
      .createIndex('frame_stats_job_finished')
      .on('frame_stats')
      .columns(['job_id', 'finished_at'])
      .execute();
  },
};
