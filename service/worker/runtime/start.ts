// Builds and starts a worker on a stack's ports: finds the Blender builds and GPUs of this
// machine, plans the render slots, and runs one control lane plus one lane per slot.
import { hostname } from 'node:os';
import path from 'node:path';
import type { Metrics } from '../../metrics/registry.js';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../../config.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import type { ObjectStorage } from '../../ports/storage.js';
import type { TaskQueue } from '../../ports/tasks.js';
import { BlenderVersionCache } from '../../../blender/version.js';
import { buildCandidates, probeBuilds, type BlenderBuild } from '../../../blender/builds.js';
import { BuildCapabilitiesCache, capabilitiesFor, detectGpuInventory, planSlots, type CapabilitiesOptions, type DeviceInventory, type Slot } from './devices.js';
import type { WorkerEnv, WorkerSettings } from './env.js';
import { finalizeHandler } from '../handlers/finalize.js';
import { renderChunkHandler } from '../handlers/render-chunk.js';
import { renderFramesHandler } from '../handlers/render-frames.js';
import { renderPlanHandler } from '../handlers/render-plan.js';
import type { WarmRender } from '../handlers/warm-render.js';
import { validateHandler } from '../handlers/validate.js';
import { stagingPrefix } from '../outputs/frame-staging.js';
import { jobOutputPrefix } from '../outputs/output-keys.js';
import { BlobCache } from '../project/blob-cache.js';
import { removeJobDir } from '../project/job-files.js';
import { Placement, type PlacementOptions } from './placement.js';
import { WarmPool } from './warm-pool.js';
import { WorkerRuntime, type Lane, type RuntimeOptions } from './runtime.js';

/** Knobs for tests and operators beyond ServiceConfig. */
export interface WorkerTuning {
  runtime?: RuntimeOptions;
  settings?: Partial<WorkerSettings>;
  /** Blocklist knobs. */
  placement?: PlacementOptions;
  /** Use these devices instead of asking nvidia-smi (tests). */
  devices?: DeviceInventory;
  /** How GPU backends count as usable (e.g. runtimeKernelCompile). Default: capabilitiesFor's defaults. */
  capabilities?: CapabilitiesOptions;
}

export interface StartedWorker {
  /** Absent when this process runs no worker (workers = 0, or no Blender found). */
  runtime?: WorkerRuntime;
  slots: Slot[];
  builds: readonly BlenderBuild[];
  /** Wakes idle lanes (something was enqueued). */
  kick(): void;
  stop(): Promise<void>;
}

export interface WorkerPorts {
  jobs: WorkerJobStore;
  storage: ObjectStorage;
  queue: TaskQueue;
  onCompleted?: (rec: JobRecord) => Promise<void>;
  /** Where task counts, durations and this worker's inventory are reported. Default none. */
  metrics?: Metrics;
}

export function defaultWorkerSettings(config: ServiceConfig): WorkerSettings {
  return {
    workRoot: path.resolve(config.dataDir, 'work'),
    outputRetentionDays: config.outputRetentionDays,
    analysisTimeoutMs: 300_000,
    chunkTimeoutMs: 6 * 3600_000,
    chunkIdleTimeoutMs: 900_000,
    renderMode: config.renderMode,
    warmIdleMs: config.warmIdleSeconds * 1000,
    warmMinFreeMemoryBytes: config.warmMinFreeMemoryBytes,
    unpackLimits: { maxTotalBytes: config.unpackQuotaBytes, minFreeBytes: config.minFreeDiskBytes },
    // Beside work/, so that on one disk a project's files are hard links into the cache.
    blobCache: { dir: path.resolve(config.blobCacheDir ?? path.join(config.dataDir, 'blob-cache')), maxBytes: config.blobCacheMaxBytes },
    // Shared storage means other machines may render this job's chunks or finalize it.
    stageFrames: config.s3 !== undefined,
    ...(process.env.RENDERBRIDGE_FFMPEG ? { ffmpeg: process.env.RENDERBRIDGE_FFMPEG } : {}),
    ...(process.env.RENDERBRIDGE_FFPROBE ? { ffprobe: process.env.RENDERBRIDGE_FFPROBE } : {}),
  };
}

const idle: Omit<StartedWorker, 'slots' | 'builds'> = { kick: () => undefined, stop: async () => undefined };

export async function startWorker(ports: WorkerPorts, config: ServiceConfig, log: Logger, tuning: WorkerTuning = {}): Promise<StartedWorker> {
  if (config.workers === 0) return { ...idle, slots: [], builds: [] };
  const probed = await probeBuilds(buildCandidates({ blenderPaths: config.blenderPaths }), new BlenderVersionCache());
  for (const p of probed.problems) log.warn({ problem: p }, 'Blender build not used');
  if (probed.builds.length === 0) {
    log.error('No Blender found: jobs wait in validating. Install Blender (apt-get install blender) or pass --blender PATH.');
    return { ...idle, slots: [], builds: [] };
  }
  const devices = tuning.devices ?? (await detectGpuInventory());
  if (devices.note) log.info({ note: devices.note }, 'no GPU: rendering on the CPU');
  const slots = planSlots({ gpus: devices.gpus, ...(typeof config.workers === 'number' ? { workers: config.workers } : {}) });
  const capsCache = new BuildCapabilitiesCache();
  // Probe the default build now, not on the first render (a Blender start the user would wait for).
  capsCache.get(probed.builds[0]!.binary).catch((err: unknown) => log.warn({ err }, 'probing Blender capabilities failed; will retry on the first render'));
  const settings = { ...defaultWorkerSettings(config), ...tuning.settings };
  const env: WorkerEnv = {
    jobs: ports.jobs,
    storage: ports.storage,
    queue: ports.queue,
    builds: probed.builds,
    devices,
    renderSlots: slots.length,
    settings,
    blobCache: new BlobCache(settings.blobCache),
    capabilities: async (build) => capabilitiesFor({ version: build.version, capabilities: await capsCache.get(build.binary) }, devices, tuning.capabilities),
    ...(ports.onCompleted ? { onCompleted: ports.onCompleted } : {}),
  };
  const warm = settings.renderMode === 'warm';
  const pool = new WarmPool<WarmRender>({ idleMs: settings.warmIdleMs, minFreeMemoryBytes: settings.warmMinFreeMemoryBytes, log });
  const frames = renderFramesHandler(env, pool);
  // A job that ends takes its warm Blenders with it, here and (after warmIdleMs) on other machines.
  const jobEnded = async (jobId: string) => {
    frames.dropJob(jobId);
    await pool.endJob(jobId);
  };
  const onCompleted = env.onCompleted;
  env.onCompleted = async (rec) => {
    await jobEnded(rec.job.id);
    await onCompleted?.(rec);
  };
  const lanes: Lane[] = [
    // Short CPU work never waits behind a long render chunk.
    { name: 'control', kinds: ['validate', 'render', 'finalize'] },
    // Warm slots hold a second task: its frame waits in Blender's stdin while the current one renders.
    ...slots.map((slot) => ({ name: slot.id, kinds: ['render-chunk'] as const, slot, depth: warm ? 2 : 1 })),
  ];
  if (warm) env.planned = (rec) => void frames.prewarm(rec, lanes.slice(1), log);
  const runtime = new WorkerRuntime(
    {
      jobs: ports.jobs,
      queue: ports.queue,
      log,
      onJobStopped: async (jobId) => {
        await jobEnded(jobId);
        // Frames stored early as outputs (early-outputs.ts) are never published: they go too.
        const rec = await ports.jobs.getById(jobId);
        if (rec) await env.storage.deletePrefix(jobOutputPrefix(rec.job.workspaceId, jobId));
        await removeJobDir(env.settings.workRoot, jobId);
        if (env.settings.stageFrames) await env.storage.deletePrefix(stagingPrefix(jobId));
      },
      privatePaths: [env.settings.workRoot],
      placement: new Placement({ queue: ports.queue, builds: probed.builds }, tuning.placement),
      ...(ports.metrics ? { metrics: ports.metrics } : {}),
    },
    lanes,
    {
      validate: validateHandler(env),
      render: renderPlanHandler(env),
      'render-chunk': warm ? frames.handler : renderChunkHandler(env),
      finalize: finalizeHandler(env),
    },
    tuning.runtime,
  );
  runtime.start();
  ports.metrics?.describeWorker({
    worker: tuning.runtime?.workerName ?? hostname(),
    blender: probed.builds.map((b) => b.version.text),
    gpus: devices.gpus.map((g) => ({ name: g.name, vramMb: g.memoryMiB })),
  });
  log.info(
    { blender: probed.builds.map((b) => `${b.version.text} ${b.binary}`), slots: slots.map((s) => s.id) },
    'worker started',
  );
  const stop = async () => {
    await runtime.stop();
    await pool.close();
  };
  return { runtime, slots, builds: probed.builds, kick: () => runtime.kick(), stop };
}
