// Per-frame statistics (extension frame-stats): one row per finished frame and task attempt,
// written by the worker that rendered it (directly beside the service, through the worker API
// from another machine) and read by GET /jobs/{id}/frames and the progress ETA.

/** One finished frame as its worker measured it. */
export interface FrameStat {
  jobId: string;
  frame: number;
  /** The task attempt that rendered it: a retried frame gets its own row, a repeated report replaces it. */
  attempt: number;
  /** Wall-clock seconds from the frame's start (or the slot's previous frame) to its files in place. */
  renderSeconds: number;
  /** Blender's reported peak: RAM on the CPU, the device's peak on a GPU; null where Blender printed none. */
  peakMemoryBytes: number | null;
  /** What Cycles really rendered on (`CPU`, `OPTIX`, ...; `CPU` for other engines). */
  device: string;
  /** `<worker name>/<slot>`, as task lists name it. */
  slot: string;
  /** The Blender build's version (`4.2.3`), or null when unknown. */
  blenderVersion: string | null;
  /** ISO-8601. */
  finishedAt: string;
}

/** What a worker needs: record frames (idempotent per job, frame and attempt). */
export interface FrameStatsWriter {
  recordFrames(stats: readonly FrameStat[]): Promise<void>;
}

/** What the route and the ETA need. */
export interface FrameStatsReader {
  /** A page of the job's rows by frame then attempt, and how many there are. */
  listFrames(jobId: string, page: { offset: number; limit: number }): Promise<{ frames: FrameStat[]; total: number }>;
  /**
   * Rows' time, memory, slot and finish time (a few numbers a frame), by frame: every row, or
   * with `latest` the last that many to finish (the ETA: recent frames say most about the next).
   */
  frameTimes(jobId: string, opts?: { latest?: number }): Promise<FrameTime[]>;
}

export type FrameTime = Pick<FrameStat, 'frame' | 'renderSeconds' | 'peakMemoryBytes' | 'slot' | 'finishedAt'>;

export interface FrameStatsStore extends FrameStatsWriter, FrameStatsReader {}
