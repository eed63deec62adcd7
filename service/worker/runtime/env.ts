// What task handlers need, passed in once by whoever builds the worker (no module singletons),
// and the worker settings a service config gives.
import path from 'node:path';
import type { ServiceConfig } from '../../config.js';
import type { FrameStatsWriter } from '../../ports/frame-stats.js';
import type { WorkerJobStore } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { TaskQueue } from '../../ports/tasks.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import type { BlenderVersion } from '../../../blender/version.js';
import type { RenderCapabilities } from '../../domain/final-config.js';
import type { DeviceInventory } from '../../../blender/devices.js';
import type { UnpackLimits } from '../../../zip/rules.js';
import type { BlobCache, BlobCacheOptions } from '../project/blob-cache.js';
import type { AnalysisCacheStore } from '../../ports/analysis-cache.js';

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
  /**
   * A chunk (warm: a load or a frame) whose Blender prints nothing for this long is taken as
   * hung. Default 900000 ms (15 min).
   */
  chunkIdleTimeoutMs: number;
  /**
   * Zip limits for uploaded projects. Default DEFAULT_UNPACK_LIMITS: 10,000 entries, a 64 GiB
   * quota per job, 1 GiB kept free.
   */
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
  /**
   * Warm mode: how long the Blender that rendered an estimate's samples waits for its job's render,
   * which renders its first frames in it (estimate-render.ts). 0: it ends with the estimate. Default 120000 ms.
   */
  estimateWarmKeepMs: number;
  /**
   * Warm mode: hand a task's remaining frames back at a frame boundary when a waiting task's priority
   * is at least this much above the running job's (service/worker/render/warm-preemption.ts).
   * Default 0: never.
   */
  preemptPriorityGap?: number;
  /** Most bytes of a task run's log kept (first and last halves; task-logs extension). Default 16 MiB. */
  taskLogMaxBytes?: number;
  /** How often a running task's new log bytes are stored. Default 1000 ms. */
  taskLogFlushMs?: number;
  /**
   * Run every Blender of a job in the sandbox (blender/build-kind.ts): no network, no host folder but
   * the job's own and the system's, no farm secret in its environment. Default true; false only with
   * the operator's --no-sandbox.
   */
  sandbox: boolean;
  /** CPU niceness of every Blender a job runs (config.renderNice). Default 0 here; the config's default is 10. */
  renderNice?: number;
  /**
   * Whether a project's bundled add-ons are enabled (always inside the sandbox) or refused.
   * Default `sandboxed` with the sandbox, `off` without (config.bundledAddons).
   */
  bundledAddons: 'sandboxed' | 'off';
  /** ffmpeg and ffprobe executables. Default from PATH. */
  ffmpeg?: string;
  ffprobe?: string;
}

export interface WorkerEnv {
  jobs: WorkerJobStore;
  storage: ObjectStorage;
  queue: TaskQueue;
  /** Where finished frames' statistics go (extension frame-stats). Default none: not recorded. */
  frameStats?: FrameStatsWriter;
  /** This worker's name (`--name`), which frame statistics name slots by. Default the host name. */
  workerName?: string;
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
  /**
   * Blender versions of the farm: this worker's builds and those of the other live workers in the
   * registry. Absent where the worker cannot read the registry (a remote worker): version routing
   * then hands a file it cannot open to any worker that can (TaskRequirements.opens).
   */
  farmBuilds?: () => Promise<BlenderVersion[]>;
  /**
   * When this worker started (epoch ms): rendered files older than that may be left damaged by a
   * machine crash (frame-integrity.ts).
   */
  startedAt: number;
  settings: WorkerSettings;
  /** The blob cache of `settings.blobCache`, one per worker process so its slots share downloads. */
  blobCache: BlobCache;
  /**
   * Scene analyses validation may reuse (the same files and build in the same workspace). Default
   * none: every validation runs Blender (a remote worker, which has no database).
   */
  analysisCache?: AnalysisCacheStore;
}

/** The worker settings of a service config: what `service` and `worker` start a worker with. */
export function defaultWorkerSettings(config: ServiceConfig): WorkerSettings {
  return {
    workRoot: path.resolve(config.dataDir, 'work'),
    outputRetentionDays: config.outputRetentionDays,
    analysisTimeoutMs: config.analysisTimeoutSeconds * 1000,
    chunkTimeoutMs: config.chunkTimeoutSeconds * 1000,
    chunkIdleTimeoutMs: config.chunkIdleTimeoutSeconds * 1000,
    sandbox: config.sandbox,
    renderNice: config.renderNice,
    bundledAddons: bundledAddonPolicy(config),
    ...(config.chunkFrames !== undefined ? { chunkFrames: config.chunkFrames } : {}),
    renderMode: config.renderMode,
    warmIdleMs: config.warmIdleSeconds * 1000,
    warmMinFreeMemoryBytes: config.warmMinFreeMemoryBytes,
    estimateWarmKeepMs: config.estimateWarmKeepSeconds * 1000,
    preemptPriorityGap: config.preemptPriorityGap,
    taskLogMaxBytes: config.taskLogMaxBytes,
    unpackLimits: {
      maxEntries: config.unpackMaxEntries,
      maxTotalBytes: config.unpackQuotaBytes,
      minFreeBytes: config.minFreeDiskBytes,
    },
    // Beside work/, so that on one disk a project's files are hard links into the cache.
    blobCache: {
      dir: path.resolve(config.blobCacheDir ?? path.join(config.dataDir, 'blob-cache')),
      maxBytes: config.blobCacheMaxBytes,
    },
    // Shared storage means other machines may render this job's chunks or finalize it.
    stageFrames: config.s3 !== undefined,
    // The variables still count for programmatic configs (tests); the CLI reads them into config.ffmpeg.
    ...((config.ffmpeg ?? process.env.RENDERBRIDGE_FFMPEG)
      ? { ffmpeg: config.ffmpeg ?? process.env.RENDERBRIDGE_FFMPEG }
      : {}),
    ...((config.ffprobe ?? process.env.RENDERBRIDGE_FFPROBE)
      ? { ffprobe: config.ffprobe ?? process.env.RENDERBRIDGE_FFPROBE }
      : {}),
  };
}

/** config.bundledAddons resolved: tenant add-on code runs only where the sandbox holds it. */
export function bundledAddonPolicy(config: Pick<ServiceConfig, 'sandbox' | 'bundledAddons'>): 'sandboxed' | 'off' {
  if (config.bundledAddons === 'sandboxed' && !config.sandbox) {
    throw new Error(
      '--bundled-addons sandboxed needs the sandbox: drop --no-sandbox, or pass --bundled-addons off (a ' +
        "bundled add-on outside the sandbox could read this machine's files and secrets)",
    );
  }
  if (config.bundledAddons === 'auto') return config.sandbox ? 'sandboxed' : 'off';
  return config.bundledAddons;
}
