// What memory a job's frames need, as its frames measured it (pure rules): the highest peak
// Blender printed for a frame, and the largest slot a frame was killed in for running out of
// memory. Stored on the job (JobInternal.memory) by the workers that saw them, read by placement
// before each frame, so a slot that cannot hold the next frame leaves it to one that can.
import { z } from 'zod';

export const JobMemory = z.strictObject({
  /** The highest peak Blender printed for a finished frame of the job, bytes. */
  peakBytes: z.number().min(0).optional(),
  /** The largest slot memory a frame of the job was killed in for running out of it, bytes: it needs more. */
  outOfMemoryAboveBytes: z.number().min(0).optional(),
  /** The last out-of-memory kill: which frame, on which slot (`worker/lane`), and the peak it reached. */
  lastOutOfMemory: z
    .strictObject({
      frame: z.int().nullable(),
      slot: z.string().max(1000),
      peakBytes: z.number().min(0).nullable(),
      at: z.iso.datetime({ offset: true }),
    })
    .optional(),
});
export type JobMemory = z.infer<typeof JobMemory>;

/**
 * The measured peak is Blender's own allocations (or the device's), not the process: the binary,
 * Python and the kernels add about a quarter GiB (Cycles at 64x48: 260 MB RSS for a 10 MB peak).
 */
export const BLENDER_BASE_BYTES = 256 * 2 ** 20;
/**
 * Frames of one shot differ (a character enters, subdivision is keyframed): a 20% margin over the
 * highest peak so far keeps a slot that held frame 1 exactly from taking frame 90 and dying.
 */
export const PEAK_MARGIN = 1.2;

export interface MemoryNeed {
  /** Least slot memory for the job's next frames, bytes. */
  bytes: number;
  /**
   * True when a frame was killed in a slot of `bytes - 1`: smaller slots fail for sure. False when
   * only estimated from a peak: placement still runs the frame where no live slot is bigger.
   */
  proven: boolean;
}

/** What the job's next frames need; undefined when nothing was measured yet. */
export function memoryNeed(m: JobMemory | undefined): MemoryNeed | undefined {
  const fromPeak = m?.peakBytes ? Math.round(m.peakBytes * PEAK_MARGIN + BLENDER_BASE_BYTES) : 0;
  const fromKill = m?.outOfMemoryAboveBytes ? m.outOfMemoryAboveBytes + 1 : 0;
  if (!fromPeak && !fromKill) return undefined;
  return fromKill >= fromPeak ? { bytes: fromKill, proven: true } : { bytes: fromPeak, proven: false };
}

/** `1.5 GiB`, `512 MiB`: for messages. */
export function gib(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}

/** The job's memory after a frame that peaked at `peakBytes`; undefined when it raises nothing (no write needed). */
export function withPeak(m: JobMemory | undefined, peakBytes: number | null): JobMemory | undefined {
  if (peakBytes === null || peakBytes <= (m?.peakBytes ?? 0)) return undefined;
  return { ...m, peakBytes };
}
