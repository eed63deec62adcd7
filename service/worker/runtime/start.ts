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
import { keepStoppedJob } from '../outputs/kept-frames.js';
import { BlobCache } from '../project/blob-cache.js';
import { removeJobDir } from '../project/job-files.js';
import { Placement, type PlacementOptions } from './placement.js';
import { WarmPool } from './warm-pool.js';
import { taskLogOpener } from '../logs/open-task-log.js';
import { WorkerRuntime, type Lane, type RuntimeOptions } from './runtime.js';
import { LaneActivity } from './activity.js';
import { WorkerHeartbeat, type HeartbeatOptions } from './heartbeat.js';
import type { WorkerRegistryReader, WorkerReporter } from '../../ports/workers.js';
import { liveRenderSlots } from '../../domain/workers.js';

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
  /** The heartbeat to the worker registry (period, least gap). Default: HeartbeatOptions' defaults. */
  heartbeat?: Omit<HeartbeatOptions, 'log'>;
  /** The renderbridge version this worker reports. Default 'dev'. */
  version?: string;
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
  /** The worker registry this worker reports itself to (extension workers). Default none. */
  registry?: WorkerReporter;
  /** The registry as the render planner reads it (the farm's live render slots). Default none: only this worker's slots are known. */
  farm?: WorkerRegistryReader;
}

export function defaultWorkerSettings(config: ServiceConfig): WorkerSettings {
  return {
    workRoot: path.resolve(config.dataDir, 'work'),
    outputRetentionDays: config.outputRetentionDays,
    analysisTimeoutMs: config.analysisTimeoutSeconds * 1000,
    chunkTimeoutMs: config.chunkTimeoutSeconds * 1000,
    chunkIdleTimeoutMs: config.chunkIdleTimeoutSeconds * 1000,
    ...(config.chunkFrames !== undefined ? { chunkFrames: config.chunkFrames } : {}),
    renderMode: config.renderMode,
    warmIdleMs: config.warmIdleSeconds * 1000,
    warmMinFreeMemoryBytes: config.warmMinFreeMemoryBytes,
    taskLogMaxBytes: config.taskLogMaxBytes,
    unpackLimits: { maxEntries: config.unpackMaxEntries, maxTotalBytes: config.unpackQuotaBytes, minFreeBytes: config.minFreeDiskBytes },
    // Beside work/, so that on one disk a project's files are hard links into the cache.
    blobCache: { dir: path.resolve(config.blobCacheDir ?? path.join(config.dataDir, 'blob-cache')), maxBytes: config.blobCacheMaxBytes },
    // Shared storage means other machines may render this job's chunks or finalize it.
    stageFrames: config.s3 !== undefined,
    // The variables still count for programmatic configs (tests); the CLI reads them into config.ffmpeg.
    ...((config.ffmpeg ?? process.env.RENDERBRIDGE_FFMPEG) ? { ffmpeg: config.ffmpeg ?? process.env.RENDERBRIDGE_FFMPEG } : {}),
    ...((config.ffprobe ?? process.env.RENDERBRIDGE_FFPROBE) ? { ffprobe: config.ffprobe ?? process.env.RENDERBRIDGE_FFPROBE } : {}),
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
  const workerName = tuning.runtime?.workerName ?? hostname();
  /** This process in the worker registry. */
  const selfId = `${workerName}:${process.pid}`;
  const env: WorkerEnv = {
    jobs: ports.jobs,
    storage: ports.storage,
    queue: ports.queue,
    builds: probed.builds,
    devices,
    renderSlots: slots.length,
    // Its own slots counted here, not from its report: the first one may not be written yet.
    ...(ports.farm ? { farmSlots: async () => slots.length + liveRenderSlots((await ports.farm!.listWorkers()).filter((w) => w.id !== selfId), Date.now()) } : {}),
    startedAt: Date.now(),
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
  const activity = new LaneActivity();
  const placement = new Placement({ queue: ports.queue, builds: probed.builds }, tuning.placement);
  const runtime = new WorkerRuntime(
    {
      jobs: ports.jobs,
      queue: ports.queue,
      log,
      onJobStopped: async (jobId) => {
        await jobEnded(jobId);
        // Finished frames are kept for a requeue; frames stored early as outputs (early-outputs.ts) are never published.
        const rec = await ports.jobs.getById(jobId);
        // Never in the way of the cleanup: without its kept frames a requeue renders them again.
        if (rec) await keepStoppedJob(env, rec).catch((err: unknown) => log.warn({ err, jobId }, 'keeping the finished frames of a stopped job failed'));
        await removeJobDir(env.settings.workRoot, jobId);
        if (env.settings.stageFrames) await env.storage.deletePrefix(stagingPrefix(jobId));
      },
      privatePaths: [env.settings.workRoot],
      openTaskLog: taskLogOpener({
        storage: env.storage,
        log,
        redact: [env.settings.workRoot],
        ...(settings.taskLogMaxBytes !== undefined ? { maxBytes: settings.taskLogMaxBytes } : {}),
        ...(settings.taskLogFlushMs !== undefined ? { flushMs: settings.taskLogFlushMs } : {}),
      }),
      placement,
      activity,
      ...(ports.metrics ? { metrics: ports.metrics } : {}),
    },
    lanes,
    {
      validate: validateHandler(env),
      render: renderPlanHandler(env),
      'render-chunk': warm ? frames.handler : renderChunkHandler(env),
      finalize: finalizeHandler(env),
    },
    { leaseMs: config.leaseSeconds * 1000, ...tuning.runtime },
  );
  runtime.start();
  const heartbeat = ports.registry
    ? new WorkerHeartbeat(
        ports.registry,
        {
          identity: {
            id: selfId,
            name: workerName,
            hostname: hostname(),
            version: tuning.version ?? 'dev',
            builds: probed.builds.map((b) => ({ version: b.version.text, path: b.binary })),
            gpus: devices.gpus.map((g) => ({ name: g.name, uuid: g.uuid, memoryMiB: g.memoryMiB })),
          },
          lanes,
          activity,
          warm: () => pool.live(),
          gpuNames: new Map(devices.gpus.map((g) => [g.uuid, g.name])),
          blocklistedBy: () => placement.blocklistedBy(),
        },
        { ...tuning.heartbeat, log },
      )
    : undefined;
  heartbeat?.start();
  ports.metrics?.describeWorker({
    worker: workerName,
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
    await heartbeat?.stop();
  };
  return { runtime, slots, builds: probed.builds, kick: () => runtime.kick(), stop };
}
