// What each lane of this worker holds right now, for its heartbeat report (extension workers):
// the runtime notes a task when its handler starts and when it ends, and the heartbeat is told
// at once, so the farm sees a slot go busy or idle without waiting for the next period.
import type { Task } from '../../ports/tasks.js';
import type { SlotTask } from '../../ports/workers.js';

export class LaneActivity {
  private readonly lanes = new Map<string, Map<string, SlotTask>>();
  private readonly listeners = new Set<() => void>();

  started(lane: string, task: Task): void {
    let held = this.lanes.get(lane);
    if (!held) this.lanes.set(lane, (held = new Map()));
    const frames =
      Array.isArray(task.payload.frames) && task.payload.frames.every((f) => typeof f === 'number')
        ? (task.payload.frames as number[])
        : null;
    held.set(task.id, {
      jobId: task.jobId,
      taskId: task.id,
      kind: task.kind,
      frames,
      startedAt: new Date().toISOString(),
    });
    this.changed();
  }

  ended(lane: string, taskId: string): void {
    if (this.lanes.get(lane)?.delete(taskId)) this.changed();
  }

  /** The lane's tasks, the one it began first first. */
  tasks(lane: string): SlotTask[] {
    return [...(this.lanes.get(lane)?.values() ?? [])];
  }

  /** Calls `listener` after every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
