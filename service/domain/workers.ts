// How the farm's workers read to one workspace (extension workers, pure rules): a worker silent
// for 3 of its heartbeat periods is lost, a lost or stopped worker runs nothing, and another
// workspace's jobs show as work without a name (a busy slot, but no id, task or frames).
import type { WorkerInfo } from '../../shared/api/workers.js';
import type { WorkerRecord } from '../ports/workers.js';
import { parseBlenderVersion, type BlenderVersion } from '../../blender/version.js';

/** Heartbeat periods a worker may miss before it counts as lost. */
export const LOST_AFTER_PERIODS = 3;

export type WorkerState = WorkerInfo['state'];

export function workerState(
  w: Pick<WorkerRecord, 'state' | 'heartbeatAt' | 'heartbeatIntervalMs'>,
  now: number,
): WorkerState {
  if (w.state === 'stopped') return 'stopped';
  return now - w.heartbeatAt > LOST_AFTER_PERIODS * w.heartbeatIntervalMs ? 'lost' : 'running';
}

/** Render slots (not control lanes) of the workers running now: what a planner shares frames between. */
export function liveRenderSlots(workers: readonly WorkerRecord[], now: number): number {
  let n = 0;
  for (const w of workers)
    if (workerState(w, now) === 'running') n += w.slots.filter((s) => s.device.kind !== 'control').length;
  return n;
}

/**
 * The running workers' render slots with their memory, their worker's tags and Blender builds
 * (placement's view of the farm).
 */
export function liveSlotFacts(
  workers: readonly WorkerRecord[],
  now: number,
): { memoryBytes?: number; tags: string[]; builds: BlenderVersion[] }[] {
  const out: { memoryBytes?: number; tags: string[]; builds: BlenderVersion[] }[] = [];
  for (const w of workers) {
    if (workerState(w, now) !== 'running') continue;
    const builds = liveBuildVersions([w], now);
    for (const s of w.slots) {
      if (s.device.kind === 'control') continue;
      out.push({ ...(s.memoryBytes !== undefined ? { memoryBytes: s.memoryBytes } : {}), tags: w.tags ?? [], builds });
    }
  }
  return out;
}

/** Blender versions of the running workers' builds (`3.4.1` texts parsed; unreadable ones left out). */
export function liveBuildVersions(workers: readonly WorkerRecord[], now: number): BlenderVersion[] {
  const out: BlenderVersion[] = [];
  for (const w of workers) {
    if (workerState(w, now) !== 'running') continue;
    for (const b of w.builds) {
      const v = parseBlenderVersion(`Blender ${b.version}`);
      if (v) out.push(v);
    }
  }
  return out;
}

/** Every job a worker's report names (tasks, warm scenes, blocklists). */
export function jobIdsOf(workers: readonly WorkerRecord[]): Set<string> {
  const ids = new Set<string>();
  for (const w of workers) {
    for (const s of w.slots) {
      for (const t of s.tasks) ids.add(t.jobId);
      if (s.warmJobId) ids.add(s.warmJobId);
    }
    for (const b of w.blocklistedBy) ids.add(b.jobId);
  }
  return ids;
}

/**
 * The workers as a workspace sees them. `ownJobs` maps the workspace's own jobs among jobIdsOf
 * to their names (null when unnamed); any job not in it belongs to someone else. A tenant sees no
 * host name and no build path (they map the operator's machines and folders for an attacker);
 * `operator` (the local `renderbridge admin workers`, reading the store) sees them.
 */
export function presentWorkers(
  workers: readonly WorkerRecord[],
  ownJobs: ReadonlyMap<string, string | null>,
  now: number,
  view: { operator?: boolean } = {},
): WorkerInfo[] {
  const present = (w: WorkerRecord): WorkerInfo => {
    const state = workerState(w, now);
    const working = state === 'running';
    return {
      id: w.id,
      name: w.name,
      ...(view.operator ? { hostname: w.hostname } : {}),
      version: w.version,
      state,
      startedAt: w.startedAt,
      lastHeartbeatAt: new Date(w.heartbeatAt).toISOString(),
      secondsSinceHeartbeat: Math.max(0, Math.round((now - w.heartbeatAt) / 100) / 10),
      heartbeatIntervalSeconds: w.heartbeatIntervalMs / 1000,
      slots: w.slots.map((s) => ({
        id: s.id,
        device: s.device,
        state: working ? s.state : 'idle',
        tasks: working
          ? s.tasks.map((t) =>
              ownJobs.has(t.jobId)
                ? {
                    kind: t.kind,
                    jobId: t.jobId,
                    jobName: ownJobs.get(t.jobId) ?? null,
                    taskId: t.taskId,
                    frames: t.frames,
                    startedAt: t.startedAt,
                  }
                : { kind: t.kind, jobId: null, jobName: null, taskId: null, frames: null, startedAt: t.startedAt },
            )
          : [],
        warmJobId: working && s.warmJobId && ownJobs.has(s.warmJobId) ? s.warmJobId : null,
        ...(s.memoryBytes !== undefined ? { memoryBytes: s.memoryBytes } : {}),
      })),
      gpus: w.gpus,
      ...(w.sandbox !== undefined ? { sandbox: w.sandbox } : {}),
      ...(w.memoryBytes !== undefined ? { memoryBytes: w.memoryBytes } : {}),
      ...(w.tags !== undefined ? { tags: w.tags } : {}),
      builds: view.operator ? w.builds : w.builds.map(({ path: _path, ...b }) => b),
      blocklistedBy: w.blocklistedBy
        .filter((b) => ownJobs.has(b.jobId))
        .map((b) => ({ ...b, jobName: ownJobs.get(b.jobId) ?? null })),
    };
  };
  const rank = (w: WorkerInfo) => (w.state === 'running' ? 0 : w.state === 'lost' ? 1 : 2);
  // Stable: the registry lists by most recent heartbeat already.
  return workers.map(present).sort((a, b) => rank(a) - rank(b));
}

/** Whether some worker's heartbeat is fresh (/readyz). */
export function anyWorkerRunning(workers: readonly WorkerRecord[], now: number): boolean {
  return workers.some((w) => workerState(w, now) === 'running');
}
