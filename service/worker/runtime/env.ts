// What task handlers need, passed in once by whoever builds the worker (no module singletons).
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { TaskQueue } from '../../ports/tasks.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import type { RenderCapabilities } from '../../domain/final-config.js';
import type { DeviceInventory } from './devices.js';
import type { UnpackLimits } from '../../../zip/rules.js';
import type { BlobCache, BlobCacheOptions } from '../project/blob-cache.js';

export type RenderMode = 'warm' | 'chunked';

export interface WorkerSettings {
  /** Folder for jobs' working files (sources, frames in progress). Default `<dataDir>/work`. */
  workRoot: string;
  /** Days outputs stay downloadable after completion. Default 30 (the service's `outputRetentionDays`). */
  outputRetentionDays: number;
  /** Limit for one validation's Blender run. Default 300000 ms. */
  analysisTimeoutMs: number;
  /** Limit for one render chunk's Blender run; in warm mode, for a scene load and for each frame. Default 6 h. */
  chunkTimeoutMs: number;
  /** A chunk (warm: a load or a frame) whose Blender prints nothing for this long is taken as hung. Default 900000 ms (15 min). */
  chunkIdleTimeoutMs: number;
  /** Zip limits for uploaded projects. Default DEFAULT_UNPACK_LIMITS: 10,000 entries, a 64 GiB quota per job, 1 GiB kept free. */
  unpackLimits?: Partial<UnpackLimits>;
  /** Blobs of content-addressed uploads kept on this machine. Default `<dataDir>/blob-cache`, at most 50 GiB. */
  blobCache: BlobCacheOptions;
  /**
   * Stage finished frames in object storage, so a job's chunks and its finalize may run on
   * different machines. Default false (one machine); the stack turns it on with shared storage (S3).
   */
  stageFrames?: boolean;
  /**
   * Frames per render task. Warm mode: the most (default 8); tasks shrink to single frames as the
   * job nears its end, the tail sized for this worker's slots, so a farm of many more slots sets
   * it low (1-2) to keep every machine within about a frame. Chunked mode: the size itself
   * (default: sized from this worker's slots, 8 to 50 frames).
   */
  chunkFrames?: number;
  /**
   * How render tasks run Blender. `warm` (default): each slot keeps one Blender per job with the
   * scene loaded and renders the frames it claims in it (render_loop.py). `chunked`: one Blender
   * process per task, loading the scene each time (`-s/-e/-a`).
   */
  renderMode: RenderMode;
  /** How long a warm Blender with no frame to render is kept for its job's next frames. Default 60000 ms. */
  warmIdleMs: number;
  /** Idle warm Blenders are ended while the memory available to new processes is below this. Default 1 GiB. */
  warmMinFreeMemoryBytes: number;
  /** Most bytes of a task run's log kept (first and last halves; task-logs extension). Default 16 MiB. */
  taskLogMaxBytes?: number;
  /** How often a running task's new log bytes are stored. Default 1000 ms. */
  taskLogFlushMs?: number;
  /** ffmpeg and ffprobe executables. Default from PATH. */
  ffmpeg?: string;
  ffprobe?: string;
}

export interface WorkerEnv {
  jobs: WorkerJobStore;
  storage: ObjectStorage;
  queue: TaskQueue;
  /** Blender builds found on this machine; the first is the default. */
  builds: readonly BlenderBuild[];
  devices: DeviceInventory;
  /** What a build can do on this machine (denoiser, GPU backends); probed once per build. */
  capabilities(build: BlenderBuild): Promise<Omit<RenderCapabilities, 'buildNote'>>;
  /** Render slots of this worker: chunks are sized so that each gets work. */
  renderSlots: number;
  /**
   * Render slots of the farm: this worker's and those of the other live workers in the registry. Absent
   * where the worker cannot read the registry (a remote worker): only its own slots are known.
   */
  farmSlots?: () => Promise<number>;
  /** When this worker started (epoch ms): rendered files older than that may be left damaged by a machine crash (frame-integrity.ts). */
  startedAt: number;
  settings: WorkerSettings;
  /** The blob cache of `settings.blobCache`, one per worker process so its slots share downloads. */
  blobCache: BlobCache;
  /** Called once a render is planned on this worker (warm mode: its scene starts loading on idle slots). */
  planned?: (rec: JobRecord) => void;
  /** Called once a job reached `completed` (webhooks). */
  onCompleted?: (rec: JobRecord) => Promise<void>;
}
