// Reads of the claim order for people (extension scheduling): how much of the queue is ahead of a
// job, and what each fair-share group has waiting. The dashboard's farm share view and the job
// page's "queue ahead" read them; nothing that claims or enqueues does.

/** Frame-rendering tasks of other jobs ahead of a job's next one in the claim order. */
export interface QueueAheadCounts {
  tasks: number;
  /** Their frames (a task's `units`). */
  frames: number;
  /** The jobs they belong to. */
  jobs: number;
}

/** A fair-share group's frame-rendering work in the queue. */
export interface GroupQueueLoad {
  /** `<workspaceId>/<userId>` (service/domain/scheduling.ts shareGroupOf), or '' for none named. */
  group: string;
  /** Frames of its tasks waiting to be claimed (paused jobs' not counted). */
  waitingFrames: number;
  /** Jobs those belong to. */
  waitingJobs: number;
  /** Frames of its paused jobs' held tasks. */
  pausedFrames: number;
  /** Slot seconds per frame measured on its finished frames; null while nothing is measured. */
  secondsPerFrame: number | null;
}

export interface QueueOrder {
  /**
   * What is claimed before the job's next frame-rendering task if nothing new comes: null when the
   * job has no such task waiting (not planned yet, all claimed, paused or ended).
   */
  queueAhead(jobId: string): Promise<QueueAheadCounts | null>;
  /** Every group with frames waiting or paused, and any group measured, in no particular order. */
  groupLoads(): Promise<GroupQueueLoad[]>;
}
