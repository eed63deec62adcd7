// Opens the log of each task run the runtime starts (extension task-logs): its keys under the
// job's log prefix, what the reader's header says about it, and this worker's limits.
import type { Logger } from 'pino';
import type { JobRecord } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { Task } from '../../ports/tasks.js';
import { runStem, taskLogSegment } from '../../domain/task-log-keys.js';
import { TaskLog } from './task-log.js';

export interface TaskLogSettings {
  storage: ObjectStorage;
  /** Most bytes kept per run. Default 16 MiB. */
  maxBytes?: number;
  /** How often new bytes are stored while a run goes on. Default 1000 ms. */
  flushMs?: number;
  /** Folders of this machine shown as `<worker>` (the work folder). Default none. */
  redact?: readonly string[];
  log: Logger;
}

export function taskLogOpener(s: TaskLogSettings): (task: Task, job: JobRecord, worker: string) => TaskLog {
  return (task, job, worker) => {
    const startMs = Date.now();
    const seg = taskLogSegment(task.id, task.jobId) ?? 'task';
    const frames =
      Array.isArray(task.payload.frames) && task.payload.frames.every((f) => Number.isInteger(f))
        ? (task.payload.frames as number[])
        : null;
    return new TaskLog({
      storage: s.storage,
      stem: runStem(job.job.workspaceId, job.job.id, seg, task.attempts, startMs),
      start: {
        taskId: task.id,
        kind: task.kind,
        attempt: task.attempts,
        worker,
        startedAt: new Date(startMs).toISOString(),
        frames,
      },
      ...(s.maxBytes !== undefined ? { maxBytes: s.maxBytes } : {}),
      ...(s.flushMs !== undefined ? { flushMs: s.flushMs } : {}),
      ...(s.redact ? { redact: s.redact } : {}),
      onError: (err, end) =>
        s.log.warn(
          { err, taskId: task.id },
          end
            ? 'storing the end of the task log failed: the run reads as interrupted; the task goes on'
            : 'storing the task log failed; the task goes on',
        ),
    });
  };
}
