import type { Kysely } from 'kysely';
import type { FrameStat, FrameStatsStore, FrameTime } from '../../ports/frame-stats.js';
import type { DB } from './schema.js';

type Row = DB['frame_stats'];

/**
 * Per-frame statistics on SQLite and PostgreSQL alike. The primary key (job, frame, attempt)
 * bounds the table to one row per frame and attempt: a report sent again (a retried worker-API
 * call) replaces its row.
 */
export class SqlFrameStats implements FrameStatsStore {
  constructor(private readonly db: Kysely<DB>) {}

  async recordFrames(stats: readonly FrameStat[]): Promise<void> {
    if (stats.length === 0) return;
    const rows: Row[] = stats.map(toRow);
    await this.db
      .insertInto('frame_stats')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['job_id', 'frame', 'attempt']).doUpdateSet((eb) => ({
          render_seconds: eb.ref('excluded.render_seconds'),
          peak_memory_bytes: eb.ref('excluded.peak_memory_bytes'),
          device: eb.ref('excluded.device'),
          slot: eb.ref('excluded.slot'),
          blender_version: eb.ref('excluded.blender_version'),
          finished_at: eb.ref('excluded.finished_at'),
        })),
      )
      .execute();
  }

  async listFrames(
    jobId: string,
    page: { offset: number; limit: number },
  ): Promise<{ frames: FrameStat[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('frame_stats')
        .selectAll()
        .where('job_id', '=', jobId)
        .orderBy('frame')
        .orderBy('attempt')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      this.db
        .selectFrom('frame_stats')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('job_id', '=', jobId)
        .executeTakeFirst(),
    ]);
    return { frames: rows.map(fromRow), total: Number(count?.n ?? 0) };
  }

  async frameTimes(jobId: string, opts: { latest?: number } = {}): Promise<FrameTime[]> {
    let q = this.db
      .selectFrom('frame_stats')
      .select(['frame', 'attempt', 'render_seconds', 'peak_memory_bytes', 'slot', 'finished_at'])
      .where('job_id', '=', jobId);
    if (opts.latest !== undefined) q = q.orderBy('finished_at', 'desc').orderBy('frame', 'desc').limit(opts.latest);
    const rows = (await q.execute()).sort(
      (a, b) => Number(a.frame) - Number(b.frame) || Number(a.attempt) - Number(b.attempt),
    );
    return rows.map((r) => ({
      frame: Number(r.frame),
      renderSeconds: Number(r.render_seconds),
      peakMemoryBytes: r.peak_memory_bytes === null ? null : Number(r.peak_memory_bytes),
      slot: r.slot,
      finishedAt: r.finished_at,
    }));
  }
}

function toRow(s: FrameStat): Row {
  return {
    job_id: s.jobId,
    frame: s.frame,
    attempt: s.attempt,
    render_seconds: s.renderSeconds,
    peak_memory_bytes: s.peakMemoryBytes,
    device: s.device,
    slot: s.slot,
    blender_version: s.blenderVersion,
    finished_at: s.finishedAt,
  };
}

/** PostgreSQL answers bigint as text: every number is read back through Number. */
function fromRow(r: Row): FrameStat {
  return {
    jobId: r.job_id,
    frame: Number(r.frame),
    attempt: Number(r.attempt),
    renderSeconds: Number(r.render_seconds),
    peakMemoryBytes: r.peak_memory_bytes === null ? null : Number(r.peak_memory_bytes),
    device: r.device,
    slot: r.slot,
    blenderVersion: r.blender_version,
    finishedAt: r.finished_at,
  };
}
