// The worker registry: what each worker process says about itself (slots, GPUs, Blender builds,
// the task each slot runs, the jobs whose blocklist keeps it off) every few seconds, for the
// workers route, the dashboard and /readyz. Split by who uses it: worker processes report (the
// in-process worker directly, remote ones through the internal worker API), the routes read, the
// retention sweep prunes.
import type { TaskKind } from './tasks.js';

/** A task a slot holds now. */
export interface SlotTask {
  jobId: string;
  taskId: string;
  kind: TaskKind;
  /** The frames of a render chunk; null for other kinds. */
  frames: number[] | null;
  /** When this worker began it (ISO 8601). */
  startedAt: string;
}

export interface WorkerSlotReport {
  /** The lane: `control` (validation, planning, finalize), `cpu-<n>` or `gpu-<uuid>`. */
  id: string;
  device: { kind: 'cpu' | 'gpu' | 'control'; name: string; uuid: string | null };
  /** `loading`: its Blender is loading a job's scene; `busy`: it runs a task; else `idle`. */
  state: 'idle' | 'busy' | 'loading';
  /** What it holds, the running task first (a warm slot holds one more, queued in Blender's stdin). */
  tasks: SlotTask[];
  /** The job whose scene the slot's warm Blender holds; null when none. */
  warmJobId: string | null;
  /**
   * Memory a frame may use in this slot, bytes: VRAM for a GPU slot, RAM for a CPU slot (its
   * --slot-memory, else the machine's). Absent for control lanes and in reports of older workers.
   */
  memoryBytes?: number;
}

export interface WorkerReport {
  /** Stable per machine and process: `<name>:<pid>`. */
  id: string;
  /** The worker's name in the per-job blocklist and metrics (--name; default the host name). */
  name: string;
  hostname: string;
  /** The renderbridge version it runs. */
  version: string;
  /** ISO 8601. */
  startedAt: string;
  /** `stopped` once it said it stops; a running worker that stops reporting shows as lost. */
  state: 'running' | 'stopped';
  /** How often it reports, ms: a heartbeat older than 3 of these means it is lost. */
  heartbeatIntervalMs: number;
  slots: WorkerSlotReport[];
  /** `kind`: how the build starts (blender/build-kind.ts); absent in reports of older workers. */
  builds: { version: string; path: string; kind?: 'executable' | 'release' | 'root' }[];
  gpus: { name: string; uuid: string; memoryMiB: number }[];
  /**
   * Whether its Blenders run in the sandbox (false: the operator passed --no-sandbox);
   * absent in reports of older workers.
   */
  sandbox?: boolean;
  /** The machine's memory as the worker sees it (its cgroup's limit, else the RAM), bytes; absent: an older worker. */
  memoryBytes?: number;
  /** The worker's tags (`gpu:a4000`, `site:paris`): a job requiring tags runs only where all are; absent: none. */
  tags?: string[];
  /** Jobs whose per-job blocklist keeps some of its slots off them now. */
  blocklistedBy: { jobId: string; slots: string[]; failures: number }[];
}

/** A report as stored, with when it arrived (the writer's clock, epoch ms). */
export interface WorkerRecord extends WorkerReport {
  heartbeatAt: number;
}

/** What a worker process does: say how it is, again and again. */
export interface WorkerReporter {
  /** Stores the report as the worker's latest, heartbeat now (replaces the previous one). */
  report(report: WorkerReport): Promise<void>;
}

/** What the workers route and /readyz read. */
export interface WorkerRegistryReader {
  /** Every worker heard from since the last prune, most recent heartbeat first. */
  listWorkers(): Promise<WorkerRecord[]>;
}

/** Keeps the registry from growing forever. */
export interface WorkerRegistryHousekeeping {
  /** Deletes workers whose last heartbeat is older than `before`; returns how many. */
  pruneWorkers(before: Date): Promise<number>;
}

/** The whole registry, as an adapter implements it. */
export interface WorkerRegistry extends WorkerReporter, WorkerRegistryReader, WorkerRegistryHousekeeping {}
