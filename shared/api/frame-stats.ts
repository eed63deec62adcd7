// Extension frame-stats: what each finished frame of a job took (time, peak memory, device,
// slot, build), a summary of them, and the live ETA with a band that GET /jobs/{id}/progress adds.
import { z } from 'zod';
import { DateTime, Uuid } from './common.js';
import { JobProgress } from './progress.js';

/** Most rows one page holds: a 100,000-frame job is read in pages, never in one answer. */
export const FRAME_STATS_MAX_PAGE_SIZE = 1000;

export const FrameStatsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(FRAME_STATS_MAX_PAGE_SIZE).default(500),
});
export type FrameStatsQuery = z.input<typeof FrameStatsQuery>;

export const FrameStat = z
  .object({
    frame: z.int(),
    /** The task attempt that rendered it (a frame rendered again by a retry has a row per attempt). */
    attempt: z.int().min(1),
    /** Wall-clock seconds of the frame on its slot, load excluded. */
    renderSeconds: z.number().min(0),
    /** Blender's reported peak: RAM on the CPU, the device's memory on a GPU; null where Blender printed none. */
    peakMemoryBytes: z.int().min(0).nullable(),
    /** What it rendered on: `CPU`, `CUDA`, `OPTIX`, `HIP`, `METAL`, `ONEAPI`. */
    device: z.string(),
    /** `<worker name>/<slot>`, as GET /workers names slots. */
    slot: z.string(),
    /** The Blender build's version, null when unknown. */
    blenderVersion: z.string().nullable(),
    finishedAt: DateTime,
  })
  .meta({ id: 'FrameStat' });
export type FrameStat = z.infer<typeof FrameStat>;

export const EtaBand = z
  .object({
    /** Seconds until the last frame is done: frames left x mean seconds per frame / slots. */
    seconds: z.number().min(0),
    /** The band the end should fall in, from the spread of frame times, wider with few frames. */
    lowSeconds: z.number().min(0),
    highSeconds: z.number().min(0),
    /** Finished frames the figures rest on. */
    samples: z.int().min(1),
    /** Slots the frames left are divided among (those that finished a frame lately). */
    slots: z.int().min(1),
  })
  .meta({ id: 'EtaBand' });
export type EtaBand = z.infer<typeof EtaBand>;

export const FrameSummary = z
  .object({
    framesDone: z.int().min(0),
    medianSeconds: z.number().min(0).nullable(),
    /** The spread: 10th and 90th percentile of seconds per frame. */
    p10Seconds: z.number().min(0).nullable(),
    p90Seconds: z.number().min(0).nullable(),
    peakMemoryMaxBytes: z.int().min(0).nullable(),
  })
  .meta({ id: 'FrameSummary' });
export type FrameSummary = z.infer<typeof FrameSummary>;

export const FrameStatsPage = z
  .object({
    data: z.object({
      jobId: Uuid,
      /** Of every row of the job, not only this page's. */
      summary: FrameSummary,
      /** While the job renders and frames have finished; else null. */
      eta: EtaBand.nullable(),
      frames: z.array(FrameStat),
    }),
    pagination: z.object({
      page: z.int().min(1),
      pageSize: z.int().min(1).max(FRAME_STATS_MAX_PAGE_SIZE),
      total: z.int().min(0),
      totalPages: z.int().min(0),
    }),
  })
  .meta({ id: 'FrameStatsPage' });
export type FrameStatsPage = z.infer<typeof FrameStatsPage>;

/** GET /jobs/{id}/progress with the frame-stats extension: the spec's fields, plus `etaBand`. */
export const JobProgressWithEta = JobProgress.extend({
  /**
   * Extension frame-stats: the ETA with its band, from the frames finished so far; null when
   * unknown. Absent without the extension.
   */
  etaBand: EtaBand.nullable().optional(),
}).meta({ id: 'JobProgressWithEta' });
export type JobProgressWithEta = z.infer<typeof JobProgressWithEta>;
export const JobProgressWithEtaEnvelope = z
  .object({ data: JobProgressWithEta })
  .meta({ id: 'JobProgressWithEtaEnvelope' });
