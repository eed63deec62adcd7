// The worker's composition root, and the one module of the worker its start-ups import (service
// and `renderbridge worker`): finds the Blender builds and GPUs of this machine, plans the render
// slots, builds the handlers' env once, complete, hands each handler what it calls back into,
// and runs one control lane plus one lane per slot.
import { hostname } from 'node:os';
import type { Metrics } from '../metrics/registry.js';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config.js';
import type { FrameStatsWriter } from '../ports/frame-stats.js';
import type { AnalysisCacheStore } from '../ports/analysis-cache.js';
import type { JobRecord, WorkerJobStore } from '../ports/jobs.js';
import type { ObjectStorage } from '../ports/storage.js';
import { runForJob } from '../job-scope.js';
import type { TaskQueue } from '../ports/tasks.js';
import { BlenderVersionCache } from '../../blender/version.js';
import { buildCandidates, probeBuilds, type BlenderBuild } from '../../blender/builds.js';
import { checkSandbox } from '../../blender/sandbox-check.js';
import { BuildCapabilitiesCache, detectGpuInventory, type DeviceInventory } from '../../blender/devices.js';
import { capabilitiesFor, planSlots, type CapabilitiesOptions, type Slot } from './runtime/devices.js';
import { defaultWorkerSettings, type WorkerEnv, type WorkerSettings } from './runtime/env.js';
import { finalizeHandler } from './handlers/finalize.js';
import { renderChunkHandler } from './handlers/render-chunk.js';
import { withEstimates } from './handlers/estimate-sample.js';
import { renderFramesHandler } from './handlers/render-frames.js';
import { renderPlanHandler } from './handlers/render-plan.js';
import { JobRuns } from './render/job-run.js';
import type { WarmRender } from './render/warm-render.js';
import { validateHandler } from './handlers/validate.js';
import { stagingPrefix } from './outputs/frame-staging.js';
import { keepStoppedJob } from './outputs/kept-frames.js';
import { BlobCache } from './project/blob-cache.js';
import { removeJobDir } from './project/job-files.js';
import { Placement, type PlacementOptions } from './runtime/placement.js';
import { WarmPool } from './runtime/warm-pool.js';
import { taskLogOpener } from './logs/open-task-log.js';
import { WorkerRuntime, type Lane, type RuntimeOptions, type TaskHandler } from './runtime/runtime.js';
import { LaneActivity } from './runtime/activity.js';
import { WorkerHeartbeat, type HeartbeatOptions } from './runtime/heartbeat.js';
import type { WorkerRegistryReader, WorkerReporter } from '../ports/workers.js';
import { liveBuildVersions, liveRenderSlots, liveSlotFacts } from '../domain/workers.js';
import { MemoryFit } from './runtime/memory-fit.js';
import { parseTags } from '../domain/worker-tags.js';
import { machineMemoryBytes, slotMemory } from './runtime/slot-memory.js';
import { ownMemoryCgroup } from './runtime/memory-cgroup.js';

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
  /** Where finished frames' statistics go (extension frame-stats). Default none: not recorded. */
  frameStats?: FrameStatsWriter;
  /** Scene analyses validation may reuse (WorkerEnv.analysisCache). Default none: every validation runs Blender. */
  analysisCache?: AnalysisCacheStore;
  /** Where task counts, durations and this worker's inventory are reported. Default none. */
  metrics?: Metrics;
  /** The worker registry this worker reports itself to (extension workers). Default none. */
  registry?: WorkerReporter;
  /**
   * The registry as the render planner reads it (the farm's live render slots). Default none: only
   * this worker's slots are known.
   */
  farm?: WorkerRegistryReader;
}

const idle: Omit<StartedWorker, 'slots' | 'builds'> = { kick: () => undefined, stop: async () => undefined };

export async function startWorker(
  ports: WorkerPorts,
  config: ServiceConfig,
  log: Logger,
  tuning: WorkerTuning = {},
): Promise<StartedWorker> {
  if (config.workers === 0) return { ...idle, slots: [], builds: [] };
  const builds = await usableBuilds(config, log);
  if (!builds) return { ...idle, slots: [], builds: [] };
  const devices = tuning.devices ?? (await detectGpuInventory());
  if (devices.note) log.info({ note: devices.note }, 'no GPU: rendering on the CPU');
  const ownCgroup = ownMemoryCgroup();
  const slots = planSlots({
    gpus: devices.gpus,
    ...(typeof config.workers === 'number' ? { workers: config.workers } : {}),
    cpuMemoryBytes: config.slotMemoryBytes ?? machineMemoryBytes(ownCgroup),
  });
  const settings = { ...defaultWorkerSettings(config), ...tuning.settings };
  const workerName = tuning.runtime?.workerName ?? hostname();
  // A bad tag stops the worker at start, not silently at its first job.
  const tags = parseTags(config.workerTags);
  const memory = slotMemory(slots, { slotBytes: config.slotMemoryBytes, name: workerName, log, own: ownCgroup });
  /** This process in the worker registry. */
  const selfId = `${workerName}:${process.pid}`;
  const env = workerEnv(ports, { settings, builds, devices, slots, workerName, selfId, tuning }, log);
  const warm = settings.renderMode === 'warm';
  const lanes = workerLanes(slots, warm);
  const pool = new WarmPool<WarmRender>({
    idleMs: settings.warmIdleMs,
    minFreeMemoryBytes: settings.warmMinFreeMemoryBytes,
    log,
  });
  const runs = new JobRuns(env, { earlyOutputs: warm });
  // A job that ends takes its render state and warm Blenders with it, here and (after warmIdleMs) on other machines.
  const jobEnded = async (jobId: string) => {
    runs.drop(jobId);
    await pool.endJob(jobId);
  };
  const activity = new LaneActivity();
  const fit = new MemoryFit({
    machineMemoryBytes: memory.machineBytes,
    tags,
    ...(ports.farm ? { farmSlots: async () => liveSlotFacts(await ports.farm!.listWorkers(), Date.now()) } : {}),
  });
  const placement = new Placement({ queue: ports.queue, builds, fit }, tuning.placement);
  const runtime = new WorkerRuntime(
    {
      jobs: ports.jobs,
      queue: ports.queue,
      log,
      onJobStopped: (jobId) => runForJob(jobId, () => stoppedJobCleanup(env, jobId, jobEnded, log)),
      privatePaths: [settings.workRoot],
      openTaskLog: taskLogs(env.storage, settings, log),
      placement,
      activity,
      memory: { fit, ownSlots: slots.map((s) => s.memoryBytes) },
      oomKills: (lane) => memory.oomKills(lane),
      ...(ports.metrics ? { metrics: ports.metrics } : {}),
    },
    lanes,
    taskHandlers(env, {
      warm,
      pool,
      runs,
      lanes,
      log,
      jobEnded,
      ...(ports.onCompleted ? { onCompleted: ports.onCompleted } : {}),
    }),
    { leaseMs: config.leaseSeconds * 1000, ...tuning.runtime },
  );
  runtime.start();
  const heartbeat = ports.registry
    ? workerHeartbeat(ports.registry, {
        ...{ selfId, workerName, builds, devices, settings, lanes },
        ...{ activity, pool, placement, tuning, log, machineBytes: memory.machineBytes, tags },
      })
    : undefined;
  heartbeat?.start();
  announce(ports, log, { workerName, builds, devices, slots });
  const stop = async () => {
    await runtime.stop();
    await pool.close();
    await heartbeat?.stop();
    memory.remove();
  };
  return { runtime, slots, builds, kick: () => runtime.kick(), stop };
}

/** One control lane, so short CPU work never waits behind a long render chunk, and one lane per slot. */
function workerLanes(slots: StartedWorker['slots'], warm: boolean): Lane[] {
  return [
    { name: 'control', kinds: ['validate', 'render', 'finalize'] },
    // Warm slots hold a second task: its frame waits in Blender's stdin while the current one renders.
    ...slots.map((slot) => ({ name: slot.id, kinds: ['render-chunk'] as const, slot, depth: warm ? 2 : 1 })),
  ];
}

function taskLogs(storage: WorkerEnv['storage'], settings: WorkerEnv['settings'], log: Logger) {
  return taskLogOpener({
    storage,
    log,
    redact: [settings.workRoot],
    ...(settings.taskLogMaxBytes !== undefined ? { maxBytes: settings.taskLogMaxBytes } : {}),
    ...(settings.taskLogFlushMs !== undefined ? { flushMs: settings.taskLogFlushMs } : {}),
  });
}

/** Tells the metrics and the log what this worker brings. */
function announce(
  ports: WorkerPorts,
  log: Logger,
  w: {
    workerName: string;
    builds: readonly BlenderBuild[];
    devices: WorkerEnv['devices'];
    slots: StartedWorker['slots'];
  },
) {
  ports.metrics?.describeWorker({
    worker: w.workerName,
    blender: w.builds.map((b) => b.version.text),
    gpus: w.devices.gpus.map((g) => ({ name: g.name, vramMb: g.memoryMiB })),
  });
  log.info(
    { blender: w.builds.map((b) => `${b.version.text} ${b.binary}`), slots: w.slots.map((s) => s.id) },
    'worker started',
  );
}

/** This machine's Blender builds, none when there is none or the sandbox they must run in does not work. */
async function usableBuilds(config: ServiceConfig, log: Logger): Promise<readonly BlenderBuild[] | undefined> {
  const probed = await probeBuilds(
    buildCandidates({ blenderPaths: config.blenderPaths, fromPath: config.blenderFromPath }),
    new BlenderVersionCache(),
  );
  for (const p of probed.problems) log.warn({ problem: p }, 'Blender build not used');
  if (probed.builds.length === 0) {
    log.error(
      'No Blender found: jobs wait in validating. Install Blender (apt-get install blender) or pass --blender PATH.',
    );
    return undefined;
  }
  if (config.sandbox) {
    // Untrusted files never run outside the sandbox: a machine where it does not work runs nothing.
    const check = await checkSandbox(probed.builds[0]!.binary);
    if (!check.ok) {
      throw new Error(
        `the Blender sandbox does not work on this machine (${check.reason}): install bubblewrap (apt-get ` +
          `install bubblewrap) and allow user namespaces, or start with --no-sandbox to run Blender ` +
          `unsandboxed (not for files you do not trust)`,
      );
    }
  } else {
    log.warn(
      "Blender runs WITHOUT the sandbox (--no-sandbox): a project's scripts can reach this machine's network " +
        'and files; its bundled add-ons are not enabled',
    );
  }
  return probed.builds;
}

interface Machine {
  settings: WorkerSettings;
  builds: readonly BlenderBuild[];
  devices: DeviceInventory;
  slots: Slot[];
  workerName: string;
  selfId: string;
  tuning: WorkerTuning;
}

/** What the handlers need, built once and complete: nothing is added to it later. */
function workerEnv(ports: WorkerPorts, m: Machine, log: Logger): WorkerEnv {
  const { settings, builds, devices, slots, farm } = { ...m, farm: ports.farm };
  const capsCache = new BuildCapabilitiesCache();
  // Probe the default build now, not on the first render (a Blender start the user would wait for).
  capsCache
    .get(builds[0]!.binary)
    .catch((err: unknown) => log.warn({ err }, 'probing Blender capabilities failed; will retry on the first render'));
  return {
    jobs: ports.jobs,
    workerName: m.workerName,
    ...(ports.frameStats ? { frameStats: ports.frameStats } : {}),
    ...(ports.analysisCache ? { analysisCache: ports.analysisCache } : {}),
    storage: ports.storage,
    queue: ports.queue,
    builds,
    devices,
    renderSlots: slots.length,
    // Its own slots counted here, not from its report: the first one may not be written yet.
    ...(farm
      ? {
          farmSlots: async () =>
            slots.length +
            liveRenderSlots(
              (await farm.listWorkers()).filter((w) => w.id !== m.selfId),
              Date.now(),
            ),
          farmBuilds: async () => [
            ...builds.map((b) => b.version),
            ...liveBuildVersions(await farm.listWorkers(), Date.now()),
          ],
        }
      : {}),
    startedAt: Date.now(),
    settings,
    blobCache: new BlobCache(settings.blobCache),
    capabilities: async (build) =>
      capabilitiesFor(
        { version: build.version, capabilities: await capsCache.get(build.binary) },
        devices,
        m.tuning.capabilities,
      ),
  };
}

interface Composition {
  warm: boolean;
  pool: WarmPool<WarmRender>;
  runs: JobRuns;
  lanes: readonly Lane[];
  log: Logger;
  jobEnded: (jobId: string) => Promise<void>;
  onCompleted?: (rec: JobRecord) => Promise<void>;
}

/** The handler of each task kind, each run for its task's job (a remote worker's storage names it to the service). */
function taskHandlers(
  env: WorkerEnv,
  c: Composition,
): Record<'validate' | 'render' | 'render-chunk' | 'finalize', TaskHandler> {
  const frames = renderFramesHandler(env, c.pool, c.runs);
  const planned = c.warm ? (rec: JobRecord) => void frames.prewarm(rec, c.lanes.slice(1), c.log) : undefined;
  const completed = async (rec: JobRecord) => {
    await c.jobEnded(rec.job.id);
    await c.onCompleted?.(rec);
  };
  const forTaskJob =
    (handler: TaskHandler): TaskHandler =>
    (task, ctx) =>
      runForJob(task.jobId, () => handler(task, ctx));
  return {
    validate: forTaskJob(validateHandler(env)),
    render: forTaskJob(renderPlanHandler(env, planned)),
    // An estimate's sample frames travel as a render-chunk task, so that render slots take them.
    'render-chunk': forTaskJob(withEstimates(env, c.warm ? frames.handler : renderChunkHandler(env, c.runs))),
    finalize: forTaskJob(finalizeHandler(env, completed)),
  };
}

/** A job stopped (canceled, failed): its finished frames are kept for a requeue, its folders go. */
async function stoppedJobCleanup(
  env: WorkerEnv,
  jobId: string,
  jobEnded: (jobId: string) => Promise<void>,
  log: Logger,
): Promise<void> {
  await jobEnded(jobId);
  // Finished frames are kept for a requeue; frames stored early as outputs (early-outputs.ts) are never published.
  const rec = await env.jobs.getById(jobId);
  // Never in the way of the cleanup: without its kept frames a requeue renders them again.
  if (rec)
    await keepStoppedJob(env, rec).catch((err: unknown) =>
      log.warn({ err, jobId }, 'keeping the finished frames of a stopped job failed'),
    );
  await removeJobDir(env.settings.workRoot, jobId);
  if (env.settings.stageFrames) await env.storage.deletePrefix(stagingPrefix(jobId));
}

interface HeartbeatParts {
  selfId: string;
  workerName: string;
  builds: readonly BlenderBuild[];
  devices: DeviceInventory;
  settings: WorkerSettings;
  lanes: readonly Lane[];
  activity: LaneActivity;
  pool: WarmPool<WarmRender>;
  placement: Placement;
  tuning: WorkerTuning;
  log: Logger;
  machineBytes: number;
  tags: readonly string[];
}

/** This worker in the registry: who it is, what it has, and what its lanes do. */
function workerHeartbeat(registry: WorkerReporter, h: HeartbeatParts): WorkerHeartbeat {
  return new WorkerHeartbeat(
    registry,
    {
      identity: {
        id: h.selfId,
        name: h.workerName,
        hostname: hostname(),
        version: h.tuning.version ?? 'dev',
        builds: h.builds.map((b) => ({ version: b.version.text, path: b.binary, kind: b.kind ?? 'executable' })),
        gpus: h.devices.gpus.map((g) => ({ name: g.name, uuid: g.uuid, memoryMiB: g.memoryMiB })),
        sandbox: h.settings.sandbox,
        memoryBytes: h.machineBytes,
        ...(h.tags.length > 0 ? { tags: [...h.tags] } : {}),
      },
      lanes: h.lanes,
      activity: h.activity,
      warm: () => h.pool.live(),
      gpuNames: new Map(h.devices.gpus.map((g) => [g.uuid, g.name])),
      blocklistedBy: () => h.placement.blocklistedBy(),
    },
    { ...h.tuning.heartbeat, log: h.log },
  );
}
