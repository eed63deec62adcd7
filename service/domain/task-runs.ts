// A job's tasks as the job-tasks route shows them: frames read from a chunk's payload, and each
// task's duration and exit reason in words.
import type { JobTask } from '../../shared/api/dashboard.js';
import type { TaskRun } from '../ports/tasks.js';

/** A render chunk's frames from its stored payload (JSON text or parsed); null for payloads without them. */
export function framesOf(payload: string | Record<string, unknown> | null | undefined): number[] | null {
  if (!payload) return null;
  let parsed: unknown = payload;
  if (typeof payload === 'string') {
    try {
      parsed = JSON.parse(payload);
    } catch {
      return null;
    }
  }
  const frames = (parsed as { frames?: unknown } | null)?.frames;
  return Array.isArray(frames) && frames.every((f) => Number.isInteger(f)) ? (frames as number[]) : null;
}

/** How a task ended, or why it waits for another attempt; null while it runs or waits its first turn. */
function exitReason(t: TaskRun): string | null {
  if (t.state === 'done') return 'done';
  if (t.state === 'canceled') return 'canceled';
  if (t.state === 'failed') return t.lastError ?? 'failed';
  // Queued or running again after a retryable failure: the failure is why.
  return t.lastError ? `retrying after: ${t.lastError}` : null;
}

/** The API's view of one task; `now` (epoch ms) times a running one. */
export function presentTask(t: TaskRun, now: number): JobTask {
  const started = t.startedAt ? Date.parse(t.startedAt) : NaN;
  const ended = t.finishedAt ? Date.parse(t.finishedAt) : t.state === 'running' ? now : NaN;
  const seconds = (ended - started) / 1000;
  return {
    id: t.id,
    kind: t.kind,
    state: t.state,
    frames: t.frames,
    attempt: t.attempts,
    worker: t.worker,
    startedAt: t.startedAt,
    finishedAt: t.finishedAt,
    durationSeconds: Number.isFinite(seconds) ? Math.max(0, Math.round(seconds * 10) / 10) : null,
    exitReason: exitReason(t),
  };
}
