// The worker's composition root, and the one module of the worker its start-ups import (service
// and `renderbridge worker`): finds the Blender builds and GPUs of this machine, plans the render
// slots, builds the handlers' env once, complete (machine.ts), hands each handler what it calls
// back into, runs one control lane plus one lane per slot, and reports itself (reports.ts).
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/registry.js';
import type { ServiceConfig } from '../config.js';
import type { JobRecord } from '../ports/jobs.js';
import type { WorkerReporter } from '../ports/workers.js';
import { runForJob } from '../job-scope.js';
import { TERMINAL_STATUSES } from '../../shared/job-status.js';
import { liveSlotFacts } from '../domain/workers.js';
import { parseTags } from '../domain/worker-tags.js';
import type { BlenderBuild } from '../../blender/builds.js';
import { detectGpuInventory, type DeviceInventory } from '../../blender/devices.js';
import type { CapabilitiesOptions, Slot } from './runtime/devices.js';
import { defaultWorkerSettings, type WorkerEnv, type WorkerSettings } from './runtime/env.js';
import { finalizeHandler } from './handlers/finalize.js';
import { renderChunkHandler } from './handlers/render-chunk.js';
import { withEstimates } from './handlers/estimate-sample.js';
import { renderFramesHandler } from './handlers/render-frames.js';
import { preemptionWatch, type PreemptionWatch } from './render/warm-preemption.js';
import { renderPlanHandler } from './handlers/render-plan.js';
import { validateHandler } from './handlers/validate.js';
import { JobRuns } from './render/job-run.js';
import type { WarmRender } from './render/warm-render.js';
import { stagingPrefix } from './outputs/frame-staging.js';
import { keepStoppedJob } from './outputs/kept-frames.js';
import { removeJobDir } from './project/job-files.js';
import { Placement, type PlacementOptions } from './runtime/placement.js';
import { WarmPool } from './runtime/warm-pool.js';
import { taskLogOpener } from './logs/open-task-log.js';
import { WorkerRuntime, type Lane, type RuntimeOptions, type TaskHandler } from './runtime/runtime.js';
import { LaneActivity } from './runtime/activity.js';
import type { HeartbeatOptions } from './runtime/heartbeat.js';
import { MemoryFit } from './runtime/memory-fit.js';
import { machineSlots, usableBuilds, workerEnv, type EnvPorts } from './machine.js';
import { announce, workerHeartbeat } from './reports.js';

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

export interface WorkerPorts extends EnvPorts {
  onCompleted?: (rec: JobRecord) => Promise<void>;
  /** Where task counts, durations and this worker's inventory are reported. Default none. */
  metrics?: Metrics;
  /** The worker registry this worker reports itself to (extension workers). Default none. */
  registry?: WorkerReporter;
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
  const settings = { ...defaultWorkerSettings(config), ...tuning.settings };
  const workerName = tuning.runtime?.workerName ?? hostname();
  // A bad tag stops the worker at start, not silently at its first job.
  const tags = parseTags(config.workerTags);
  const { slots, memory } = machineSlots(config, devices, { workerName, log });
  /** This process in the worker registry. */
  const selfId = `${workerName}:${process.pid}`;
  const env = workerEnv(
    ports,
    { settings, builds, devices, slots, workerName, selfId, capabilities: tuning.capabilities },
    log,
  );
  const warm = settings.renderMode === 'warm';
  const lanes = workerLanes(slots, warm);
  const { pool, runs, jobEnded } = renderState(env, warm, log);
  const activity = new LaneActivity();
  const fit = new MemoryFit({
    machineMemoryBytes: memory.machineBytes,
    tags,
    ...(ports.farm ? { farmSlots: async () => liveSlotFacts(await ports.farm!.listWorkers(), Date.now()) } : {}),
    notice: async (jobId, reason) =>
      void (await ports.jobs.update(jobId, { placement: reason ? { reason, since: new Date().toISOString() } : null })),
  });
  const placement = new Placement({ queue: ports.queue, builds, fit }, tuning.placement);
  const runtime = new WorkerRuntime(
    {
      jobs: ports.jobs,
      queue: ports.queue,
      log,
      onJobStopped: (jobId) => runForJob(jobId, () => stoppedJobCleanup(env, jobId, jobEnded, log)),
      // A Blender kept idle for the job (an estimate's, waiting for its render) has no task to abort.
      onJobCanceled: (jobId) => void pool.endJob(jobId, 'its job was canceled'),
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
      preemption: preemptionWatch(env, tags, log),
      ...(ports.onCompleted ? { onCompleted: ports.onCompleted } : {}),
    }),
    { leaseMs: config.leaseSeconds * 1000, ...tuning.runtime },
  );
  runtime.start();
  const heartbeat = ports.registry
    ? workerHeartbeat(ports.registry, {
        ...{ selfId, workerName, builds, devices, settings, lanes },
        ...{ activity, pool, placement, log, machineBytes: memory.machineBytes, tags },
        ...{ version: tuning.version, heartbeat: tuning.heartbeat },
      })
    : undefined;
  heartbeat?.start();
  announce(ports.metrics, log, { workerName, builds, devices, slots });
  const stop = async () => {
    await runtime.stop();
    await pool.close();
    await heartbeat?.stop();
    memory.remove();
  };
  return { runtime, slots, builds, kick: () => runtime.kick(), stop };
}

/** The warm Blenders and the job runs (progress, billing) the render handlers share. */
function renderState(env: WorkerEnv, warm: boolean, log: Logger) {
  const pool = new WarmPool<WarmRender>({
    idleMs: env.settings.warmIdleMs,
    minFreeMemoryBytes: env.settings.warmMinFreeMemoryBytes,
    // A job canceled or finished elsewhere (another machine's service, its finalize) frees the slot here too.
    wanted: async (jobId) => {
      const rec = await env.jobs.getById(jobId);
      return !!rec && !TERMINAL_STATUSES.has(rec.job.status);
    },
    log,
  });
  const runs = new JobRuns(env, { earlyOutputs: warm });
  // A job that ends takes its render state and warm Blenders with it, here and (after warmIdleMs) on other machines.
  const jobEnded = async (jobId: string) => {
    runs.drop(jobId);
    await pool.endJob(jobId);
  };
  return { pool, runs, jobEnded };
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

interface Composition {
  warm: boolean;
  pool: WarmPool<WarmRender>;
  runs: JobRuns;
  lanes: readonly Lane[];
  log: Logger;
  jobEnded: (jobId: string) => Promise<void>;
  onCompleted?: (rec: JobRecord) => Promise<void>;
  /** Warm mode with preemption on (warm-preemption.ts). Default none. */
  preemption?: PreemptionWatch;
}

/** The handler of each task kind, each run for its task's job (a remote worker's storage names it to the service). */
function taskHandlers(
  env: WorkerEnv,
  c: Composition,
): Record<'validate' | 'render' | 'render-chunk' | 'finalize', TaskHandler> {
  const frames = renderFramesHandler(env, c.pool, c.runs, c.preemption);
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
    'render-chunk': forTaskJob(
      c.warm ? withEstimates(env, frames.handler, c.pool) : withEstimates(env, renderChunkHandler(env, c.runs)),
    ),
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
